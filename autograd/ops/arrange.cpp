// Pieces and arrangements of a tensor: chunk, narrow, select and unbind are views (views.cpp's
// slice and squeeze); flip, repeat and pad copy, written with the differentiable ops they are
// made of (index_select, expand, concat), so their gradients are those ops' own.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "../ops.h"

namespace tinygpt {

std::vector<Tensor> chunk(const Tensor& x, int64_t n, int64_t axis) {
  const int a = normalize_axis(axis, x.dim(), "chunk");
  if (n <= 0) throw std::invalid_argument(fmt::format("chunk: {} chunks of shape {}", n, to_string(x.shape())));
  const int64_t size = std::max<int64_t>(1, (x.shape()[a] + n - 1) / n);
  return split(x, size, a);
}

Tensor narrow(const Tensor& x, int64_t axis, int64_t start, int64_t length) {
  const int a = normalize_axis(axis, x.dim(), "narrow");
  if (length < 0) throw std::invalid_argument(fmt::format("narrow: length {} is negative", length));
  return x.slice(a, start, start + length);
}

Tensor select(const Tensor& x, int64_t axis, int64_t index) {
  const int a = normalize_axis(axis, x.dim(), "select");
  const int64_t n = x.shape()[a], i = index < 0 ? index + n : index;
  if (i < 0 || i >= n)
    throw std::out_of_range(fmt::format("select: index {} of axis {} of shape {}", index, a, to_string(x.shape())));
  return x.slice(a, i, i + 1).squeeze(a);
}

std::vector<Tensor> unbind(const Tensor& x, int64_t axis) {
  const int a = normalize_axis(axis, x.dim(), "unbind");
  std::vector<Tensor> pieces;
  for (int64_t i = 0; i < x.shape()[a]; ++i) pieces.push_back(select(x, a, i));
  return pieces;
}

Tensor flip(const Tensor& x, Axes axes) {
  Tensor out = x;
  std::vector<bool> seen(static_cast<size_t>(x.dim()), false);
  for (int64_t axis : axes) {
    const int a = normalize_axis(axis, x.dim(), "flip");
    if (seen[a]) throw std::invalid_argument(fmt::format("flip: axis {} given twice", a));
    seen[a] = true;
    std::vector<int64_t> reversed(static_cast<size_t>(x.shape()[a]));
    std::iota(reversed.rbegin(), reversed.rend(), 0);
    out = index_select(out, a, reversed);
  }
  return out;
}

// x [m, n] tiled (a, b) times is x seen as [1, m, 1, n], expanded to [a, m, b, n], read as
// [a m, b n]; the gradient of expand sums over the copies.
Tensor repeat(const Tensor& x, const Shape& repeats) {
  if (repeats.size() < static_cast<size_t>(x.dim()))
    throw std::invalid_argument(fmt::format("repeat: {} repeats for the {} axes of {}", repeats.size(), x.dim(),
                                            to_string(x.shape())));
  Shape base(repeats.size() - static_cast<size_t>(x.dim()), 1);  // leading axes of 1
  base.insert(base.end(), x.shape().begin(), x.shape().end());
  Shape interleaved, expanded, result;
  for (size_t d = 0; d < repeats.size(); ++d) {
    if (repeats[d] < 0) throw std::invalid_argument(fmt::format("repeat: a negative count {}", repeats[d]));
    interleaved.insert(interleaved.end(), {1, base[d]});
    expanded.insert(expanded.end(), {repeats[d], base[d]});
    result.push_back(repeats[d] * base[d]);
  }
  return x.reshape(interleaved).expand(expanded).reshape(result);
}

Tensor pad(const Tensor& x, const std::vector<int64_t>& pads, float value) {
  if (pads.size() % 2 != 0 || pads.size() / 2 > static_cast<size_t>(x.dim()))
    throw std::invalid_argument(fmt::format("pad: {} numbers for a tensor of shape {} (two for each of its last axes)",
                                            pads.size(), to_string(x.shape())));
  Tensor out = x;
  for (size_t k = 0; k < pads.size() / 2; ++k) {
    const int a = static_cast<int>(x.dim() - 1 - static_cast<int64_t>(k));
    const int64_t before = pads[2 * k], after = pads[2 * k + 1];
    if (before < 0 || after < 0)
      throw std::invalid_argument(fmt::format("pad: negative padding {}, {} (crop with narrow)", before, after));
    std::vector<Tensor> parts;
    for (int64_t width : {before, int64_t{-1}, after}) {
      if (width == -1) {
        parts.push_back(out);
      } else if (width > 0) {
        Shape s = out.shape();
        s[a] = width;
        parts.push_back(Tensor::full(s, value));
      }
    }
    out = concat(parts, a);
  }
  return out;
}

}  // namespace tinygpt
