// Views: reshape, transpose/permute, slice and split share storage with their input; their
// backward puts the gradient back where each element came from. contiguous() copies.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <optional>
#include <stdexcept>

#include "../graph.h"
#include "../kernels/elementwise.h"
#include "../kernels/strided.h"
#include "../ops.h"
#include "../detail/profile.h"

namespace tinygpt {

namespace {
// Backward of any op whose output lists the input's elements in the same row-major order.
auto same_order_backward(const Tensor& input) {
  return [input](const Tensor&, const Tensor& g) { hand_on(input, g); };
}

// Backward of a strided view of `input` (permute, slice): out's element e sits at
// input-gradient position offset + sum(index_d * strides_d) in row-major input coordinates.
auto scatter_backward(const Tensor& input, Strides strides, int64_t offset) {
  return [input, strides = std::move(strides), offset](const Tensor& out, const Tensor& g) {
    if (float* gi = grad_sink(input)) strided_add(g.data(), out.shape(), strides, gi + offset);
  };
}

// Strides that show the same elements in row-major order under `shape`, when the old strides allow
// it without a copy: each run of old axes that are contiguous with each other may be split or merged.
std::optional<Strides> view_strides(Shape old_shape, Strides old_strides, const Shape& shape) {
  if (old_shape.empty()) old_shape = {1}, old_strides = {1};
  Strides strides(shape.size());
  int64_t view_d = static_cast<int64_t>(shape.size()) - 1;
  int64_t chunk_stride = old_strides.back(), chunk_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(old_shape.size()) - 1; d >= 0; --d) {
    chunk_numel *= old_shape[d];
    const bool chunk_ends = d == 0 || (old_shape[d - 1] != 1 && old_strides[d - 1] != chunk_numel * chunk_stride);
    if (!chunk_ends) continue;
    while (view_d >= 0 && (view_numel < chunk_numel || shape[view_d] == 1)) {
      strides[view_d] = view_numel * chunk_stride;
      view_numel *= shape[view_d--];
    }
    if (view_numel != chunk_numel) return std::nullopt;
    if (d > 0) chunk_stride = old_strides[d - 1], chunk_numel = 1, view_numel = 1;
  }
  if (view_d != -1) return std::nullopt;
  return strides;
}

Shape infer_shape(const Shape& requested, int64_t count, const Shape& from) {
  Shape shape = requested;
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1 && infer < 0) infer = static_cast<int64_t>(i);
    else if (shape[i] < 0) throw std::invalid_argument(fmt::format("reshape: invalid shape {}", to_string(requested)));
    else known *= shape[i];
  }
  if (infer >= 0 && known > 0 && count % known == 0) shape[infer] = count / known;
  if (numel(shape) != count)
    throw std::invalid_argument(fmt::format("reshape: cannot view shape {} ({} elements) as {}", to_string(from),
                                            count, to_string(requested)));
  return shape;
}
}  // namespace

Tensor Tensor::view(const Shape& requested) const {
  Shape shape = infer_shape(requested, numel(), this->shape());
  std::optional<Strides> strides = numel() ? view_strides(this->shape(), this->strides(), shape) : contiguous_strides(shape);
  if (!strides)
    throw std::invalid_argument(fmt::format("view: a tensor of shape {} and strides {} cannot be seen as {} "
                                            "without a copy; use reshape", to_string(this->shape()),
                                            to_string(this->strides()), to_string(shape)));
  Tensor out = make_view(*this, shape, *strides, offset());
  return attach(out, "view", {*this}, same_order_backward(*this));
}

Tensor Tensor::reshape(const Shape& requested) const {
  Shape shape = infer_shape(requested, numel(), this->shape());
  return numel() && !view_strides(this->shape(), this->strides(), shape) ? contiguous().view(shape) : view(shape);
}

Tensor Tensor::contiguous() const {
  if (is_contiguous()) return *this;
  OpTimer timer("contiguous");
  Tensor out = Tensor::empty(shape());
  strided_copy(data(), shape(), strides(), out.data());
  return attach(out, "contiguous", {*this}, same_order_backward(*this));
}

Tensor Tensor::permute(const Axes& order) const {
  if (static_cast<int64_t>(order.size()) != dim())
    throw std::invalid_argument(fmt::format("permute: order of {} axes for shape {}", order.size(), to_string(shape())));
  Shape shape(order.size());
  Strides strides(order.size()), grad_strides(order.size());
  Strides input_grad_strides = contiguous_strides(this->shape());
  memory::Vector<bool> used(order.size(), false);
  for (size_t i = 0; i < order.size(); ++i) {
    int a = normalize_axis(order[i], dim(), "permute");
    if (used[a]) throw std::invalid_argument(fmt::format("permute: axis {} repeated", a));
    used[a] = true;
    shape[i] = this->shape()[a];
    strides[i] = this->strides()[a];
    grad_strides[i] = input_grad_strides[a];
  }
  Tensor out = make_view(*this, shape, strides, offset());
  return attach(out, "permute", {*this}, scatter_backward(*this, grad_strides, 0));
}

Tensor Tensor::transpose(int64_t a, int64_t b) const {
  Axes order;
  order.resize(static_cast<size_t>(dim()));
  std::iota(order.begin(), order.end(), 0);
  std::swap(order[normalize_axis(a, dim(), "transpose")], order[normalize_axis(b, dim(), "transpose")]);
  return permute(order);
}

Tensor Tensor::slice(int64_t axis, int64_t start, int64_t end) const {
  int a = normalize_axis(axis, dim(), "slice");
  if (start < 0 || end > shape()[a] || start > end)
    throw std::invalid_argument(fmt::format("slice: range [{}, {}) out of bounds for axis {} of shape {}", start, end,
                                            a, to_string(shape())));
  Shape shape = this->shape();
  shape[a] = end - start;
  Strides grad_strides = contiguous_strides(this->shape());
  Tensor out = make_view(*this, shape, strides(), offset() + start * strides()[a]);
  return attach(out, "slice", {*this}, scatter_backward(*this, grad_strides, start * grad_strides[a]));
}

std::vector<Tensor> split(const Tensor& x, int64_t size, int64_t axis) {
  int a = normalize_axis(axis, x.dim(), "split");
  if (size <= 0)
    throw std::invalid_argument(fmt::format("split: pieces of {} elements along axis {} of shape {}", size, a,
                                            to_string(x.shape())));
  const int64_t n = x.shape()[a];
  std::vector<Tensor> pieces;
  for (int64_t start = 0; start < n; start += size) pieces.push_back(x.slice(a, start, std::min(start + size, n)));
  return pieces;
}

Tensor Tensor::clone() const {
  OpTimer timer("clone");
  Tensor out = Tensor::empty(shape());
  strided_copy(data(), shape(), strides(), out.data());
  return attach(out, "clone", {*this}, same_order_backward(*this));
}

Tensor Tensor::unsqueeze(int64_t axis) const {
  const int64_t n = dim() + 1;
  if (axis < -n || axis >= n)
    throw std::invalid_argument(fmt::format("unsqueeze: axis {} out of range for shape {}", axis, to_string(shape())));
  Shape s = shape();
  s.insert(s.begin() + (axis < 0 ? axis + n : axis), 1);
  return view(s);
}

Tensor Tensor::squeeze() const {
  Shape s;
  for (int64_t size : shape())
    if (size != 1) s.push_back(size);
  return view(s);
}

Tensor Tensor::squeeze(int64_t axis) const {
  const int a = normalize_axis(axis, dim(), "squeeze");
  if (shape()[a] != 1) return *this;  // as PyTorch: an axis longer than 1 stays
  Shape s = shape();
  s.erase(s.begin() + a);
  return view(s);
}

Tensor Tensor::flatten(int64_t start_axis, int64_t end_axis) const {
  if (dim() == 0) return reshape({1});
  const int a = normalize_axis(start_axis, dim(), "flatten"), b = normalize_axis(end_axis, dim(), "flatten");
  if (a > b)
    throw std::invalid_argument(fmt::format("flatten: start axis {} is after end axis {} of shape {}", a, b,
                                            to_string(shape())));
  Shape s(shape().begin(), shape().begin() + a);
  int64_t merged = 1;
  for (int d = a; d <= b; ++d) merged *= shape()[d];
  s.push_back(merged);
  s.insert(s.end(), shape().begin() + b + 1, shape().end());
  return reshape(s);
}

// A view with size-1 axes (and missing leading ones) repeated by a stride of 0; -1 keeps a size.
// Backward sums the gradient back over the repeated axes.
Tensor Tensor::expand(const Shape& sizes) const {
  const int64_t extra = static_cast<int64_t>(sizes.size()) - dim();
  auto refuse = [&] {
    return std::invalid_argument(fmt::format("expand: shape {} cannot be expanded to {}", to_string(shape()),
                                             to_string(sizes)));
  };
  if (extra < 0) throw refuse();
  Shape out_shape(sizes.size());
  Strides out_strides(sizes.size(), 0);
  for (int64_t d = 0; d < static_cast<int64_t>(sizes.size()); ++d) {
    const int64_t from = d - extra, size = sizes[d];
    if (from < 0) {
      if (size < 0) throw refuse();
      out_shape[d] = size;
    } else if (size == -1 || size == shape()[from]) {
      out_shape[d] = shape()[from], out_strides[d] = strides()[from];
    } else if (shape()[from] == 1 && size >= 0) {
      out_shape[d] = size;
    } else {
      throw refuse();
    }
  }
  Tensor out = make_view(*this, out_shape, out_strides, offset());
  return attach(out, "expand", {*this}, [input = *this](const Tensor&, const Tensor& g) {
    bool fresh = false;
    if (float* sink = grad_sink(input, fresh)) sum_to(g.data(), g.shape(), sink, input.shape(), !fresh);
  });
}

}  // namespace tinygpt
