// Statistics over axes: variance, standard deviation, norms and log-sum-exp, written with the ops
// they are made of (so they differentiate through them), and the running sum cumsum with its own
// forward and backward.
#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "../graph.h"
#include "../detail/around_axis.h"
#include "../detail/profile.h"
#include "../ops.h"
#include "../kernels/parallel.h"

namespace tinygpt {

namespace {
// How many elements each output of a reduction over `axes` (empty: all) sums.
int64_t count_over(const Tensor& x, const Axes& axes) {
  if (axes.empty()) return x.numel();
  int64_t n = 1;
  for (int64_t a : axes) n *= x.shape()[normalize_axis(a, x.dim(), "reduction")];
  return n;
}
}  // namespace

// var = sum((x - mean)²) / (n - correction); correction 1 is Bessel's (PyTorch's default).
Tensor var(const Tensor& x, Axes axes, int64_t correction, bool keepdim) {
  const int64_t n = count_over(x, axes);
  if (correction < 0)
    throw std::invalid_argument(fmt::format("var: correction {} is negative", correction));
  const Tensor centered = x - mean(x, axes, true);
  // n <= correction: no degrees of freedom left, NaN or inf as in PyTorch.
  const float divisor = static_cast<float>(n - correction);
  return sum(centered * centered, axes, keepdim) / divisor;
}

namespace {
// Drops the size-1 axes a keepdim reduction left (a sum over one element each).
Tensor dropping_axes(const Tensor& kept, const Axes& axes, bool keepdim) {
  return keepdim ? kept : sum(kept, axes, false);
}

// 0 where `zero_at` holds a nonzero value, `value` elsewhere: the subgradient PyTorch takes where
// a derivative divides by zero (a norm at 0, the deviation of a constant).
Tensor zero_where(const Tensor& zero_at, const Tensor& value) { return where(zero_at, Tensor::scalar(0.0f), value); }
}  // namespace

// sqrt(var), with its own backward: g (x - mean) / ((n - correction) std), and 0 where std is 0
// (a constant slice), as PyTorch, where the chain through sqrt would give 0 * inf = NaN.
Tensor std(const Tensor& x, Axes axes, int64_t correction, bool keepdim) {
  if (correction < 0)
    throw std::invalid_argument(fmt::format("std: correction {} is negative", correction));
  const float divisor = static_cast<float>(count_over(x, axes) - correction);
  Tensor centered, out;
  {
    NoGradGuard no_grad;
    centered = x - mean(x, axes, true);
    out = sqrt(sum(centered * centered, axes, true) / divisor);  // [kept axes of size 1]
  }
  out = attach(out, "std", {x}, [x, centered, divisor](const Tensor& s, const Tensor& g) {
    hand_on(x, zero_where(eq(s, Tensor::scalar(0.0f)), g * centered / (s * divisor)).contiguous());
  });
  return dropping_axes(out, axes, keepdim);
}

// (sum |x|^p)^(1/p), with its own backward (p = 1 is the sum of abs, whose slope at 0 is 0):
// g x |x|^(p-2) / norm^(p-1), and 0 where x or the norm is 0, as PyTorch, where the chain through
// the outer power would give 0 * inf = NaN.
Tensor norm(const Tensor& x, float p, Axes axes, bool keepdim) {
  if (!(p > 0) || std::isinf(p)) throw std::invalid_argument(fmt::format("norm: p = {} is not a positive number", p));
  if (p == 1.0f) return sum(abs(x), axes, keepdim);
  Tensor out;
  {
    NoGradGuard no_grad;
    out = p == 2.0f ? sqrt(sum(x * x, axes, true)) : pow(sum(pow(abs(x), p), axes, true), 1.0f / p);
  }
  out = attach(out, "norm", {x}, [x, p](const Tensor& n, const Tensor& g) {
    const Tensor slope = p == 2.0f ? x / n : x * pow(abs(x), p - 2.0f) / pow(n, p - 1.0f);
    hand_on(x, zero_where(eq(x, Tensor::scalar(0.0f)) + eq(n, Tensor::scalar(0.0f)), g * slope).contiguous());
  });
  return dropping_axes(out, axes, keepdim);
}

// log(sum(exp(x))) = m + log(sum(exp(x - m))) with m the largest value (no gradient through m:
// it cancels), so that no exp overflows. An all -inf slice gives -inf.
Tensor logsumexp(const Tensor& x, Axes axes, bool keepdim) {
  Tensor shift;
  {
    NoGradGuard no_grad;
    Tensor m = x;
    if (axes.empty())
      for (int64_t d = 0; d < x.dim(); ++d) m = max(m, d, true);
    else
      for (int64_t a : axes) m = max(m, a, true);
    shift = where(eq(m, Tensor::scalar(-INFINITY)) + eq(m, Tensor::scalar(INFINITY)), Tensor::scalar(0.0f), m);
  }
  return dropping_axes(log(sum(exp(x - shift), axes, true)) + shift, axes, keepdim);
}

Tensor cosine_similarity(const Tensor& a, const Tensor& b, int64_t axis, float eps) {
  const Shape shape = broadcast_shapes(a.shape(), b.shape(), "cosine_similarity");
  const Tensor x = a.expand(shape), y = b.expand(shape);
  const Tensor both = sum(x * x, axis) * sum(y * y, axis);
  return sum(x * y, axis) / sqrt(maximum(both, Tensor::scalar(eps * eps)));
}

Tensor cumsum(const Tensor& input, int64_t axis) {
  OpTimer timer("cumsum");
  const int a = normalize_axis(axis, input.dim(), "cumsum");
  const Tensor x = input.contiguous();
  const auto [outer, n, inner] = detail::around(x.shape(), a);
  Tensor out = Tensor::empty(x.shape());
  // out[o, i, c] = sum over j <= i of x[o, j, c], added in order of j (in float, as PyTorch).
  auto running = [n, inner](const float* from, float* to, int64_t step) {
    for (int64_t c = 0; c < inner; ++c) {
      float total = 0;
      for (int64_t i = 0, at = step > 0 ? 0 : n - 1; i < n; ++i, at += step) {
        total += from[at * inner + c];
        to[at * inner + c] = total;
      }
    }
  };
  parallel_for(outer, 1, [&](int64_t o0, int64_t o1) {
    for (int64_t o = o0; o < o1; ++o) running(x.data() + o * n * inner, out.data() + o * n * inner, 1);
  });
  // Backward: x[j] feeds every out[i] with i >= j, so its gradient is the running sum of g from the end.
  return attach(out, "cumsum", {x}, [x, outer, n, inner, running](const Tensor&, const Tensor& g) {
    float* sink = grad_sink(x);
    if (!sink) return;
    Tensor back = Tensor::empty(g.shape());
    parallel_for(outer, 1, [&](int64_t o0, int64_t o1) {
      for (int64_t o = o0; o < o1; ++o) running(g.data() + o * n * inner, back.data() + o * n * inner, -1);
    });
    for (int64_t i = 0; i < back.numel(); ++i) sink[i] += back.data()[i];
  });
}

}  // namespace tinygpt
