#include "norms.h"

#include <fmt/format.h>

#include <stdexcept>

#include "../autograd/graph.h"

namespace tinygpt::nn {

namespace {
// [C] seen as [1, C, 1, ...] against an input of `dims` axes.
Tensor per_channel(const Tensor& t, int64_t dims) {
  Shape shape(static_cast<size_t>(dims), 1);
  shape[1] = t.size(0);
  return t.view(shape);
}
}  // namespace

BatchNorm::BatchNorm(int64_t channels, int64_t image_axes, BatchNormOptions o) : image_axes_(image_axes), options_(o) {
  if (channels < 1) throw std::invalid_argument(fmt::format("BatchNorm: {} channels", channels));
  if (!(o.momentum >= 0 && o.momentum <= 1) || !(o.eps > 0))
    throw std::invalid_argument(fmt::format("BatchNorm: momentum {} (in [0, 1]) and eps {} (above 0)", o.momentum, o.eps));
  if (o.affine) {
    weight = register_parameter("weight", Tensor::ones({channels}));
    bias = register_parameter("bias", Tensor::zeros({channels}));
  }
  if (o.track_running_stats) {
    running_mean = register_buffer("running_mean", Tensor::zeros({channels}));
    running_var = register_buffer("running_var", Tensor::ones({channels}));
    num_batches_tracked = register_buffer("num_batches_tracked", Tensor::zeros({}));
  }
}

Tensor BatchNorm::forward(const Tensor& x) {
  const int64_t C = running_mean.defined() ? running_mean.size(0) : weight.size(0);
  const bool fits = image_axes_ == 2 ? x.dim() == 4 : (x.dim() == 2 || x.dim() == 3);
  if (!fits || x.size(1) != C)
    throw std::invalid_argument(fmt::format("BatchNorm{}: input {} is not [N, {}{}]", image_axes_ == 2 ? "2d" : "1d",
                                            to_string(x.shape()), C, image_axes_ == 2 ? ", H, W" : "] or [N, C, L"));
  Axes axes{0};
  for (int64_t d = 2; d < x.dim(); ++d) axes.push_back(d);
  Tensor mean, var;
  if (training() || !running_mean.defined()) {
    mean = tinygpt::mean(x, axes, true);
    var = tinygpt::var(x, axes, 0, true);  // biased, as the normalization uses
    if (training() && running_mean.defined()) {
      NoGradGuard no_grad;
      const int64_t n = x.numel() / C;  // values per channel
      if (n < 2)
        throw std::invalid_argument(fmt::format("BatchNorm: one value per channel in training ({}): no variance",
                                                to_string(x.shape())));
      const float m = options_.momentum;
      const Tensor unbiased = var.reshape({C}) * (static_cast<float>(n) / static_cast<float>(n - 1));
      running_mean.copy_from_(running_mean * (1.0f - m) + mean.reshape({C}) * m);
      running_var.copy_from_(running_var * (1.0f - m) + unbiased * m);
      num_batches_tracked.copy_from_(num_batches_tracked + 1.0f);
    }
  } else {
    mean = per_channel(running_mean, x.dim());
    var = per_channel(running_var, x.dim());
  }
  Tensor y = (x - mean) * rsqrt(var + options_.eps);
  if (weight.defined()) y = y * per_channel(weight, x.dim()) + per_channel(bias, x.dim());
  return y;
}

GroupNorm::GroupNorm(int64_t groups, int64_t channels, float eps, bool affine)
    : groups_(groups), channels_(channels), eps_(eps) {
  if (groups < 1 || channels < 1 || channels % groups != 0)
    throw std::invalid_argument(fmt::format("GroupNorm: {} channels in {} groups", channels, groups));
  if (affine) {
    weight = register_parameter("weight", Tensor::ones({channels}));
    bias = register_parameter("bias", Tensor::zeros({channels}));
  }
}

Tensor GroupNorm::forward(const Tensor& x) const {
  if (x.dim() < 2 || x.size(1) != channels_)
    throw std::invalid_argument(fmt::format("GroupNorm: input {} is not [N, {}, ...]", to_string(x.shape()), channels_));
  const Tensor g = x.reshape({x.size(0), groups_, -1});  // [N, G, C/G * rest]
  const Tensor normed = ((g - mean(g, 2, true)) * rsqrt(var(g, 2, 0, true) + eps_)).reshape(x.shape());
  if (!weight.defined()) return normed;
  return normed * per_channel(weight, x.dim()) + per_channel(bias, x.dim());
}

}  // namespace tinygpt::nn
