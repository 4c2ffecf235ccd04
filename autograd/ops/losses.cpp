// Losses over every element, fused: the mean of a per-element term in one pass, and its gradient
// in one pass. Sums run in fixed chunks (deterministic_sum): the same bits for any thread count.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "tinygpt/autograd/graph.h"
#include "tinygpt/autograd/kernels/elementwise.h"
#include "tinygpt/autograd/ops.h"
#include "tinygpt/autograd/detail/profile.h"

namespace tinygpt {

namespace {

void require_same_shape(const Tensor& a, const Tensor& b, const char* op) {
  if (a.shape() != b.shape())
    throw std::invalid_argument(fmt::format("{}: the prediction {} and the target {} differ in shape", op,
                                            to_string(a.shape()), to_string(b.shape())));
  if (a.numel() == 0) throw std::invalid_argument(fmt::format("{}: empty tensors", op));
}

// The mean of term(x_i, t_i); backward adds g/N * dx(x_i, t_i) to x and g/N * dt(x_i, t_i) to t.
template <class Term, class Dx, class Dt>
Tensor mean_loss(const Tensor& input, const Tensor& target_in, const char* op, const Term& term, const Dx& dx,
                 const Dt& dt) {
  OpTimer timer(op);
  require_same_shape(input, target_in, op);
  const Tensor x = input.contiguous(), t = target_in.contiguous();
  const float *px = x.data(), *pt = t.data();
  const int64_t n = x.numel();
  const double total = deterministic_sum(n, [&](int64_t i) { return static_cast<double>(term(px[i], pt[i])); });
  Tensor out = Tensor::scalar(static_cast<float>(total / static_cast<double>(n)));
  return attach(out, op, {x, t}, [x, t, n, dx, dt](const Tensor&, const Tensor& g) {
    const float scale = g.data()[0] / static_cast<float>(n);
    const float *px = x.data(), *pt = t.data();
    for (auto [input, slope] : {std::pair{&x, true}, std::pair{&t, false}}) {
      float* sink = grad_sink(*input);
      if (!sink) continue;
      parallel_for(n, 16384, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) sink[i] += scale * (slope ? dx(px[i], pt[i]) : dt(px[i], pt[i]));
      });
    }
  });
}

}  // namespace

Tensor mse_loss(const Tensor& prediction, const Tensor& target) {
  return mean_loss(
      prediction, target, "mse_loss", [](float p, float t) { return (p - t) * (p - t); },
      [](float p, float t) { return 2.0f * (p - t); }, [](float p, float t) { return 2.0f * (t - p); });
}

Tensor binary_cross_entropy_with_logits(const Tensor& logits, const Tensor& target) {
  // max(x, 0) - x t + log(1 + exp(-|x|)) = -[t log s(x) + (1 - t) log(1 - s(x))], s the sigmoid,
  // without an exp that can overflow; d/dx = s(x) - t, d/dt = -x.
  return mean_loss(
      logits, target, "binary_cross_entropy_with_logits",
      [](float x, float t) { return std::max(x, 0.0f) - x * t + std::log1p(std::exp(-std::abs(x))); },
      [](float x, float t) { return stable_sigmoid(x) - t; },
      [](float x, float) { return -x; });
}

}  // namespace tinygpt
