// Concatenation along an axis: a copy forward, and each input takes back its slice of the gradient.
#include <fmt/format.h>

#include <stdexcept>

#include "../graph.h"
#include "../kernels/strided.h"
#include "../ops.h"

namespace tinygpt {

Tensor concat(const std::vector<Tensor>& xs, int64_t axis) {
  if (xs.empty()) throw std::invalid_argument("concat: no tensors given");
  const int a = normalize_axis(axis, xs[0].dim(), "concat");
  Shape shape = xs[0].shape();
  shape[a] = 0;
  for (const Tensor& x : xs) {
    Shape expect = xs[0].shape();
    expect[a] = x.dim() == xs[0].dim() ? x.shape()[a] : -1;
    if (x.shape() != expect)
      throw std::invalid_argument(fmt::format("concat: shapes {} and {} differ outside axis {}",
                                              to_string(xs[0].shape()), to_string(x.shape()), a));
    shape[a] += x.shape()[a];
  }
  Tensor out = Tensor::empty(shape);
  const Strides out_strides = out.strides();
  std::vector<int64_t> offsets;
  int64_t start = 0;
  for (const Tensor& x : xs) {  // copy each input into its slab of the output
    offsets.push_back(start * out_strides[a]);
    Tensor slab = make_view(out, x.shape(), out_strides, offsets.back());
    for_each_row(x.shape(), x.strides(), [&](int64_t r, int64_t offset, int64_t c0, int64_t c1) {
      int64_t dst = 0, rest = r;
      for (int64_t d = x.dim() - 2; d >= 0; --d) {
        dst += (rest % x.shape()[d]) * out_strides[d];
        rest /= x.shape()[d];
      }
      const int64_t step = x.dim() ? x.strides().back() : 1;
      for (int64_t c = c0; c < c1; ++c) slab.data()[dst + c] = x.data()[offset + c * step];
    });
    start += x.shape()[a];
  }
  return attach(out, "concat", Node::Inputs(xs.begin(), xs.end()), [xs, offsets](const Tensor& y, const Tensor& g) {
    for (size_t i = 0; i < xs.size(); ++i) {
      float* sink = grad_sink(xs[i]);
      if (!sink) continue;
      Buffer piece(xs[i].numel());
      strided_copy(g.data() + offsets[i], xs[i].shape(), y.strides(), piece.data());
      add_into(sink, piece.data(), xs[i].numel());
    }
  });
}

Tensor stack(const std::vector<Tensor>& xs, int64_t axis) {
  if (xs.empty()) throw std::invalid_argument("stack: no tensors given");
  const int64_t n = xs[0].dim() + 1;
  if (axis < -n || axis >= n)
    throw std::invalid_argument(fmt::format("stack: axis {} out of range for {} tensors of shape {}", axis,
                                            xs.size(), to_string(xs[0].shape())));
  std::vector<Tensor> pieces;
  pieces.reserve(xs.size());
  for (const Tensor& x : xs) {
    if (x.shape() != xs[0].shape())
      throw std::invalid_argument(fmt::format("stack: shapes {} and {} differ", to_string(xs[0].shape()),
                                              to_string(x.shape())));
    pieces.push_back(x.unsqueeze(axis));
  }
  return concat(pieces, axis);
}

}  // namespace tinygpt
