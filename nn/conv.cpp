#include "conv.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "init.h"

namespace tinygpt::nn {

namespace {
void check_channels(const char* layer, int64_t in, int64_t out, int64_t groups) {
  if (in < 1 || out < 1 || groups < 1 || in % groups != 0 || out % groups != 0)
    throw std::invalid_argument(fmt::format("{}: {} input and {} output channels in {} groups (each a multiple of "
                                            "the groups)", layer, in, out, groups));
}

// PyTorch's default for convolutions: U(-b, b), b = 1/sqrt(fan_in), for the weight and the bias.
void fan_in_uniform(const Tensor& weight, const Tensor& bias, uint64_t seed) {
  int64_t fan_in = 1;
  for (int64_t d = 1; d < weight.dim(); ++d) fan_in *= weight.size(d);
  const float bound = 1.0f / std::sqrt(static_cast<float>(fan_in));
  init::uniform_(weight, child_seed(seed, "weight"), -bound, bound);
  if (bias.defined()) init::uniform_(bias, child_seed(seed, "bias"), -bound, bound);
}
}  // namespace

Conv2d::Conv2d(int64_t in, int64_t out, std::array<int64_t, 2> kernel, Conv2dLayerOptions o)
    : options_{o.window, o.groups} {
  check_channels("Conv2d", in, out, o.groups);
  if (kernel[0] < 1 || kernel[1] < 1)
    throw std::invalid_argument(fmt::format("Conv2d: a {}x{} kernel", kernel[0], kernel[1]));
  weight = register_parameter("weight", unwritten_parameter(o.init, {out, in / o.groups, kernel[0], kernel[1]}));
  if (o.bias) bias = register_parameter("bias", unwritten_parameter(o.init, {out}));
  if (o.seed || o.init != Init::pytorch) keep_own_seed(o.seed.value_or(0));
  if (o.init == Init::pytorch) reset_parameters(place_seed());
}

void Conv2d::reset_parameters(uint64_t seed) { fan_in_uniform(weight, bias, seed); }
Tensor Conv2d::forward(const Tensor& x) const { return conv2d(x, weight, bias, options_); }

Conv1d::Conv1d(int64_t in, int64_t out, int64_t kernel, Conv1dLayerOptions o)
    : options_{o.stride, o.padding, o.dilation, o.groups} {
  check_channels("Conv1d", in, out, o.groups);
  if (kernel < 1) throw std::invalid_argument(fmt::format("Conv1d: a kernel of {}", kernel));
  weight = register_parameter("weight", unwritten_parameter(o.init, {out, in / o.groups, kernel}));
  if (o.bias) bias = register_parameter("bias", unwritten_parameter(o.init, {out}));
  if (o.seed || o.init != Init::pytorch) keep_own_seed(o.seed.value_or(0));
  if (o.init == Init::pytorch) reset_parameters(place_seed());
}

void Conv1d::reset_parameters(uint64_t seed) { fan_in_uniform(weight, bias, seed); }
Tensor Conv1d::forward(const Tensor& x) const { return conv1d(x, weight, bias, options_); }

}  // namespace tinygpt::nn
