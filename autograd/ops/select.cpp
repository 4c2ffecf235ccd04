// Picking elements: the largest or smallest along an axis (and where it is), and choosing between
// two tensors by a condition. Each forward beside its backward.
#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "../graph.h"
#include "../kernels/elementwise.h"
#include "../ops.h"
#include "../detail/profile.h"

namespace tinygpt {

namespace {

// x seen as [A, R, K] around `axis` (R = the axis' length).
struct AroundAxis {
  int64_t A = 1, R = 1, K = 1;
  Shape kept, squeezed;  // the result's shape with the axis as 1, and without it
};

AroundAxis around_axis(const Tensor& x, int64_t axis, const char* op) {
  const int d = normalize_axis(axis, x.dim(), op);
  AroundAxis s;
  s.R = x.shape()[d];
  if (s.R == 0) throw std::invalid_argument(fmt::format("{}: axis {} of {} is empty", op, d, to_string(x.shape())));
  for (int64_t i = 0; i < x.dim(); ++i) {
    if (i < d) s.A *= x.shape()[i];
    if (i > d) s.K *= x.shape()[i];
    s.kept.push_back(i == d ? 1 : x.shape()[i]);
    if (i != d) s.squeezed.push_back(x.shape()[i]);
  }
  return s;
}

// For every (a, k): the index r of the largest (or smallest) x[a, r, k], the first on ties; NaN wins.
memory::Vector<int64_t> extreme_positions(const float* x, const AroundAxis& s, bool largest) {
  memory::Vector<int64_t> at(s.A * s.K);
  parallel_for(s.A * s.K, grain_for(s.R), [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const int64_t a = i / s.K, k = i % s.K;
      const float* col = x + a * s.R * s.K + k;
      int64_t best = 0;
      for (int64_t r = 1; r < s.R && !std::isnan(col[best * s.K]); ++r) {
        const float v = col[r * s.K], b = col[best * s.K];
        if (std::isnan(v) || (largest ? v > b : v < b)) best = r;
      }
      at[i] = best;
    }
  });
  return at;
}

ValuesIndices extreme(const Tensor& input, int64_t axis, bool keepdim, bool largest) {
  const char* op = largest ? "max" : "min";
  OpTimer timer(op);
  const Tensor x = input.contiguous();
  const AroundAxis s = around_axis(x, axis, op);
  memory::Vector<int64_t> at = extreme_positions(x.data(), s, largest);
  Tensor out = Tensor::empty(s.kept);
  for (int64_t i = 0; i < s.A * s.K; ++i) out.data()[i] = x.data()[(i / s.K * s.R + at[i]) * s.K + i % s.K];
  Indices indices(keepdim ? s.kept : s.squeezed, std::vector<int64_t>(at.begin(), at.end()));
  out = attach(out, op, {x}, [x, s, at = std::move(at)](const Tensor&, const Tensor& g) {
    float* sink = grad_sink(x);
    if (!sink) return;
    for (int64_t i = 0; i < s.A * s.K; ++i) sink[(i / s.K * s.R + at[i]) * s.K + i % s.K] += g.data()[i];
  });
  return {keepdim ? out : out.view(s.squeezed), std::move(indices)};
}

std::vector<int64_t> positions(const Tensor& input, int64_t axis, bool largest) {
  const Tensor x = input.contiguous();
  const memory::Vector<int64_t> at = extreme_positions(x.data(), around_axis(x, axis, largest ? "argmax" : "argmin"),
                                                       largest);
  return std::vector<int64_t>(at.begin(), at.end());
}

// t broadcast to `shape`, as a contiguous tensor (no gradient: a value to read).
Tensor expanded(const Tensor& t, const Shape& shape) {
  Tensor out = Tensor::empty(shape);
  strided_copy(t.data(), shape, broadcast_strides(t.shape(), t.strides(), shape), out.data());
  return out;
}

// Adds g where keep(condition) (zero elsewhere), summed down to t's shape, into t's gradient.
void select_into(const Tensor& t, const Tensor& g, const Tensor& condition, bool where_true) {
  if (!t.requires_grad()) return;
  Tensor picked = Tensor::empty(g.shape());
  const float *pg = g.data(), *pc = condition.data();
  float* pp = picked.data();
  for (int64_t i = 0; i < g.numel(); ++i) pp[i] = (pc[i] != 0.0f) == where_true ? pg[i] : 0.0f;
  bool fresh = false;
  if (float* sink = grad_sink(t, fresh)) sum_to(pp, g.shape(), sink, t.shape(), /*accumulate=*/!fresh);
}

}  // namespace

ValuesIndices max(const Tensor& x, int64_t axis, bool keepdim) { return extreme(x, axis, keepdim, true); }
ValuesIndices min(const Tensor& x, int64_t axis, bool keepdim) { return extreme(x, axis, keepdim, false); }

namespace {
// The largest (smallest) value over `axes`, exactly, its gradient shared evenly among the elements
// equal to it (torch.amax's rule).
Tensor extreme_over(const Tensor& x, const Axes& axes, bool keepdim, bool largest) {
  const char* op = largest ? "amax" : "amin";
  Tensor m = x;
  {
    NoGradGuard no_grad;
    if (axes.empty())
      for (int64_t d = 0; d < x.dim(); ++d) m = extreme(m, d, true, largest);
    else
      for (int64_t a : axes) m = extreme(m, a, true, largest);
    if (m.same_as(x)) m = x.clone();  // a scalar: its own value
  }
  m = attach(m, op, {x}, [x, axes](const Tensor& out, const Tensor& g) {
    const Tensor at = eq(x, out);  // 1 where x equals the extreme of its slice
    hand_on(x, (at * g / sum(at, axes, true)).contiguous());
  });
  return keepdim ? m : sum(m, axes, false);
}
}  // namespace

Tensor amax(const Tensor& x, Axes axes, bool keepdim) { return extreme_over(x, axes, keepdim, true); }
Tensor amin(const Tensor& x, Axes axes, bool keepdim) { return extreme_over(x, axes, keepdim, false); }

// The product of x[a, :, k] as a running product in order; the gradient of element r is g times
// the product of the others (the prefix before r times the suffix after it), exact where some
// elements are 0, where dividing the product by x[r] would not be.
Tensor prod(const Tensor& input, int64_t axis, bool keepdim) {
  OpTimer timer("prod");
  const Tensor x = input.contiguous();
  const AroundAxis s = around_axis(x, axis, "prod");
  Tensor out = Tensor::empty(s.kept);
  const float* px = x.data();
  for (int64_t i = 0; i < s.A * s.K; ++i) {
    const float* col = px + i / s.K * s.R * s.K + i % s.K;
    float p = 1.0f;
    for (int64_t r = 0; r < s.R; ++r) p *= col[r * s.K];
    out.data()[i] = p;
  }
  out = attach(out, "prod", {x}, [x, s](const Tensor&, const Tensor& g) {
    float* sink = grad_sink(x);
    if (!sink) return;
    std::vector<float> suffix(static_cast<size_t>(s.R) + 1);
    for (int64_t i = 0; i < s.A * s.K; ++i) {
      const int64_t base = i / s.K * s.R * s.K + i % s.K;
      const float* col = x.data() + base;
      suffix[s.R] = 1.0f;
      for (int64_t r = s.R - 1; r >= 0; --r) suffix[r] = suffix[r + 1] * col[r * s.K];
      float prefix = 1.0f;
      for (int64_t r = 0; r < s.R; ++r) {
        sink[base + r * s.K] += g.data()[i] * prefix * suffix[r + 1];
        prefix *= col[r * s.K];
      }
    }
  });
  return keepdim ? out : out.view(s.squeezed);
}

Tensor prod(const Tensor& x) { return prod(x.reshape({x.numel()}), 0); }
std::vector<int64_t> argmax(const Tensor& x, int64_t axis) { return positions(x, axis, true); }
std::vector<int64_t> argmin(const Tensor& x, int64_t axis) { return positions(x, axis, false); }

Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b) {
  OpTimer timer("where");
  const Shape shape = broadcast_shapes(broadcast_shapes(condition.shape(), a.shape(), "where"), b.shape(), "where");
  const Tensor c = expanded(condition, shape), av = expanded(a, shape), bv = expanded(b, shape);
  Tensor out = Tensor::empty(shape);
  const float *pc = c.data(), *pa = av.data(), *pb = bv.data();
  float* po = out.data();
  parallel_for(out.numel(), kElementsPerTask, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) po[i] = pc[i] != 0.0f ? pa[i] : pb[i];
  });
  return attach(out, "where", {a, b}, [a, b, c](const Tensor&, const Tensor& g) {
    select_into(a, g, c, true);
    select_into(b, g, c, false);
  });
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, float value) {
  OpTimer timer("masked_fill");
  if (broadcast_shapes(mask.shape(), x.shape(), "masked_fill") != x.shape())
    throw std::invalid_argument(fmt::format("masked_fill: mask {} does not broadcast to the tensor's shape {}",
                                            to_string(mask.shape()), to_string(x.shape())));
  const Tensor m = expanded(mask, x.shape()), xv = x.contiguous();
  Tensor out = Tensor::empty(x.shape());
  const float *pm = m.data(), *px = xv.data();
  float* po = out.data();
  parallel_for(out.numel(), kElementsPerTask, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) po[i] = pm[i] != 0.0f ? value : px[i];
  });
  return attach(out, "masked_fill", {x}, [x, m](const Tensor&, const Tensor& g) { select_into(x, g, m, false); });
}

namespace {
// 1 above (upper) or below the band of diagonals kept by tril/triu, over x's last two axes.
Tensor outside_triangle(const Tensor& x, int64_t diagonal, bool keep_lower, const char* op) {
  if (x.dim() < 2)
    throw std::invalid_argument(fmt::format("{}: needs at least 2 axes, got shape {}", op, to_string(x.shape())));
  const int64_t rows = x.shape()[x.dim() - 2], cols = x.shape()[x.dim() - 1];
  Tensor mask = Tensor::empty({rows, cols});
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      mask.data()[r * cols + c] = (keep_lower ? c - r > diagonal : c - r < diagonal) ? 1.0f : 0.0f;
  return mask;
}
}  // namespace

Tensor tril(const Tensor& x, int64_t diagonal) {
  return masked_fill(x, outside_triangle(x, diagonal, true, "tril"), 0.0f);
}

Tensor triu(const Tensor& x, int64_t diagonal) {
  return masked_fill(x, outside_triangle(x, diagonal, false, "triu"), 0.0f);
}

}  // namespace tinygpt
