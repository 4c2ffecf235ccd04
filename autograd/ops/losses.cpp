// Losses over every element, fused: the mean of a per-element term in one pass, and its gradient
// in one pass. Sums run in fixed chunks (deterministic_sum): the same bits for any thread count.
#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <functional>
#include <stdexcept>

#include "../graph.h"
#include "../kernels/elementwise.h"
#include "../ops.h"
#include "../detail/profile.h"
#include "../elementary.h"

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

namespace {
// The mean of per-element terms as a fused loss, its multiple (sum), or the terms themselves (none).
Tensor reduced(const std::function<Tensor()>& fused_mean, int64_t n, const std::function<Tensor()>& terms,
               Reduction reduction, const char* op) {
  switch (reduction) {
    case Reduction::mean: return fused_mean();
    case Reduction::sum: return fused_mean() * static_cast<float>(n);
    case Reduction::none: return terms();
    case Reduction::batchmean: break;
  }
  throw std::invalid_argument(fmt::format("{}: batchmean is kl_div's reduction only", op));
}
}  // namespace

Tensor mse_loss(const Tensor& prediction, const Tensor& target, Reduction reduction) {
  auto fused = [&] {
    return mean_loss(
        prediction, target, "mse_loss", [](float p, float t) { return (p - t) * (p - t); },
        [](float p, float t) { return 2.0f * (p - t); }, [](float p, float t) { return 2.0f * (t - p); });
  };
  auto terms = [&] {
    require_same_shape(prediction, target, "mse_loss");
    const Tensor d = prediction - target;
    return d * d;
  };
  return reduced(fused, prediction.numel(), terms, reduction, "mse_loss");
}

Tensor binary_cross_entropy_with_logits(const Tensor& logits, const Tensor& target, Reduction reduction) {
  // max(x, 0) - x t + log(1 + exp(-|x|)) = -[t log s(x) + (1 - t) log(1 - s(x))], s the sigmoid,
  // without an exp that can overflow; d/dx = s(x) - t, d/dt = -x.
  auto fused = [&] {
    return mean_loss(
        logits, target, "binary_cross_entropy_with_logits",
        [](float x, float t) { return std::max(x, 0.0f) - x * t + vector_log1p(full_range_exp(-std::abs(x))); },
        [](float x, float t) { return stable_sigmoid(x) - t; }, [](float x, float) { return -x; });
  };
  auto terms = [&] {
    require_same_shape(logits, target, "binary_cross_entropy_with_logits");
    return relu(logits) - logits * target + log1p(exp(-abs(logits)));
  };
  return reduced(fused, logits.numel(), terms, reduction, "binary_cross_entropy_with_logits");
}

Tensor l1_loss(const Tensor& prediction, const Tensor& target, Reduction reduction) {
  auto sign = [](float d) { return d > 0 ? 1.0f : d < 0 ? -1.0f : 0.0f; };
  auto fused = [&] {
    return mean_loss(
        prediction, target, "l1_loss", [](float p, float t) { return std::abs(p - t); },
        [sign](float p, float t) { return sign(p - t); }, [sign](float p, float t) { return sign(t - p); });
  };
  auto terms = [&] {
    require_same_shape(prediction, target, "l1_loss");
    return abs(prediction - target);
  };
  return reduced(fused, prediction.numel(), terms, reduction, "l1_loss");
}

// Huber: 0.5 d² where |d| < delta, else delta (|d| - 0.5 delta); d = prediction - target.
Tensor huber_loss(const Tensor& prediction, const Tensor& target, float delta, Reduction reduction) {
  if (!(delta > 0)) throw std::invalid_argument(fmt::format("huber_loss: delta {} is not positive", delta));
  auto fused = [&] {
    return mean_loss(
        prediction, target, "huber_loss",
        [delta](float p, float t) {
          const float d = std::abs(p - t);
          return d < delta ? 0.5f * d * d : delta * (d - 0.5f * delta);
        },
        [delta](float p, float t) { return std::clamp(p - t, -delta, delta); },
        [delta](float p, float t) { return std::clamp(t - p, -delta, delta); });
  };
  auto terms = [&] {
    require_same_shape(prediction, target, "huber_loss");
    const Tensor d = prediction - target, a = abs(d);
    return where(lt(a, delta), 0.5f * d * d, delta * (a - 0.5f * delta));
  };
  return reduced(fused, prediction.numel(), terms, reduction, "huber_loss");
}

// KL(target || exp(input)) per element: target (log target - input), 0 where target is 0.
Tensor kl_div(const Tensor& input, const Tensor& target, Reduction reduction, bool log_target) {
  require_same_shape(input, target, "kl_div");
  const Tensor terms = log_target ? exp(target) * (target - input)
                                  : target * (log(clamp(target, 1e-38f, 3e38f)) - input);
  switch (reduction) {
    case Reduction::none: return terms;
    case Reduction::sum: return sum(terms);
    case Reduction::mean: return mean(terms);
    case Reduction::batchmean: return sum(terms) / static_cast<float>(input.dim() ? input.shape()[0] : 1);
  }
  return terms;
}

namespace {
// -sum over classes of W[i, c] log p[i, c] for each row i, where W puts (1 - smoothing) weight[y_i]
// on the target class and smoothing / C weight[c] on every class; ignored rows have W = 0. The mean
// divides by the sum of weight[y_i] over the rows kept (PyTorch's rule, with or without weights).
Tensor class_loss(const Tensor& log_probs, std::span<const int64_t> targets, const Tensor& weight,
                  int64_t ignore_index, float smoothing, Reduction reduction, const char* op) {
  if (log_probs.dim() < 1)
    throw std::invalid_argument(fmt::format("{}: a scalar has no classes", op));
  const int64_t C = log_probs.shape().back(), N = C ? log_probs.numel() / C : 0;
  if (static_cast<int64_t>(targets.size()) != N)
    throw std::invalid_argument(fmt::format("{}: {} targets for {} rows of shape {}", op, targets.size(), N,
                                            to_string(log_probs.shape())));
  if (weight.defined() && weight.shape() != Shape{C})
    throw std::invalid_argument(fmt::format("{}: class weights of shape {} for {} classes", op,
                                            to_string(weight.shape()), C));
  if (!(smoothing >= 0 && smoothing <= 1))
    throw std::invalid_argument(fmt::format("{}: label smoothing {} is outside [0, 1]", op, smoothing));
  const std::vector<float> w = weight.defined() ? weight.to_vector() : std::vector<float>(C, 1.0f);
  Tensor W = Tensor::zeros({N, C});
  double kept = 0;
  for (int64_t i = 0; i < N; ++i) {
    const int64_t y = targets[i];
    if (y == ignore_index) continue;
    if (y < 0 || y >= C)
      throw std::out_of_range(fmt::format("{}: target {} (row {}) is not a class of {}", op, y, i, C));
    float* row = W.data() + i * C;
    for (int64_t c = 0; c < C; ++c) row[c] = smoothing / static_cast<float>(C) * w[c];
    row[y] += (1.0f - smoothing) * w[y];
    kept += w[y];
  }
  const Tensor per_row = -sum(W * log_probs.reshape({N, C}), 1);
  switch (reduction) {
    case Reduction::none: {
      Shape rows(log_probs.shape().begin(), log_probs.shape().end() - 1);
      return per_row.reshape(rows);
    }
    case Reduction::sum: return sum(per_row);
    case Reduction::mean:  // every row ignored: NaN, each gradient 0, as PyTorch (0 / 0 would make them NaN)
      return kept > 0 ? sum(per_row) / static_cast<float>(kept) : sum(per_row) + NAN;
    case Reduction::batchmean: break;
  }
  throw std::invalid_argument(fmt::format("{}: batchmean is kl_div's reduction only", op));
}
}  // namespace

Tensor nll_loss(const Tensor& log_probs, std::span<const int64_t> targets, const NllLossOptions& o) {
  return class_loss(log_probs, targets, o.weight, o.ignore_index, 0.0f, o.reduction, "nll_loss");
}

Tensor cross_entropy(const Tensor& logits, std::span<const int64_t> targets, const CrossEntropyOptions& o) {
  const bool plain = !o.weight.defined() && o.label_smoothing == 0 && o.reduction == Reduction::mean &&
                     o.ignore_index >= INT32_MIN && o.ignore_index <= INT32_MAX;
  if (plain) return cross_entropy(logits, targets, static_cast<int32_t>(o.ignore_index));
  return class_loss(log_softmax(logits), targets, o.weight, o.ignore_index, o.label_smoothing, o.reduction,
                    "cross_entropy");
}

}  // namespace tinygpt
