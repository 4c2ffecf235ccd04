// Statistics over axes: variance, standard deviation, norms and log-sum-exp, written with the ops
// they are made of (so they differentiate through them), and the running sum cumsum with its own
// forward and backward.
#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "tinygpt/autograd/graph.h"
#include "tinygpt/autograd/detail/around_axis.h"
#include "tinygpt/autograd/detail/profile.h"
#include "tinygpt/autograd/ops.h"
#include "tinygpt/autograd/kernels/parallel.h"

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

Tensor std(const Tensor& x, Axes axes, int64_t correction, bool keepdim) {
  return sqrt(var(x, std::move(axes), correction, keepdim));
}

Tensor norm(const Tensor& x, float p, Axes axes, bool keepdim) {
  if (!(p > 0) || std::isinf(p)) throw std::invalid_argument(fmt::format("norm: p = {} is not a positive number", p));
  if (p == 2.0f) return sqrt(sum(x * x, axes, keepdim));
  if (p == 1.0f) return sum(abs(x), axes, keepdim);
  return pow(sum(pow(abs(x), p), axes, keepdim), 1.0f / p);
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
  Tensor out = log(sum(exp(x - shift), axes, true)) + shift;
  if (keepdim) return out;
  return sum(out, axes, false);  // drops the size-1 axes (a sum over one element each)
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
