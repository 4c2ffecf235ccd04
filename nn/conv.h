#pragma once
// Convolution and pooling layers over images [N, C, H, W] (Conv1d: sequences [N, C, L]), libtorch's
// names and defaults, on ops.h's conv2d, conv1d, max_pool2d and avg_pool2d. The weight [O,
// C / groups, kh, kw] and the bias [O] start U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = C /
// groups * kh * kw, as PyTorch's, drawn from `seed` or from the layer's place in its model.
#include <array>
#include <cstdint>
#include <optional>

#include "../autograd/ops.h"
#include "layers.h"
#include "module.h"

namespace tinygpt::nn {

struct Conv2dLayerOptions {
  Window2d window;
  int64_t groups = 1;
  bool bias = true;
  std::optional<uint64_t> seed;
  Init init = Init::pytorch;
};

class Conv2d : public Module {
 public:
  Conv2d(int64_t in_channels, int64_t out_channels, std::array<int64_t, 2> kernel, Conv2dLayerOptions options = {});
  Tensor forward(const Tensor& x) const;  // [N, in, H, W] -> [N, out, OH, OW]
  void reset_parameters(uint64_t seed) override;
  Tensor weight, bias;  // bias undefined without one

 private:
  Conv2dOptions options_;
};

struct Conv1dLayerOptions {
  int64_t stride = 1, padding = 0, dilation = 1, groups = 1;
  bool bias = true;
  std::optional<uint64_t> seed;
  Init init = Init::pytorch;
};

class Conv1d : public Module {
 public:
  Conv1d(int64_t in_channels, int64_t out_channels, int64_t kernel, Conv1dLayerOptions options = {});
  Tensor forward(const Tensor& x) const;  // [N, in, L] -> [N, out, OL]
  void reset_parameters(uint64_t seed) override;
  Tensor weight, bias;

 private:
  Conv1dOptions options_;
};

class MaxPool2d : public Module {
 public:
  explicit MaxPool2d(Pool2dOptions options = {}) : options_(options) {}
  Tensor forward(const Tensor& x) const { return max_pool2d(x, options_); }

 private:
  Pool2dOptions options_;
};

class AvgPool2d : public Module {
 public:
  explicit AvgPool2d(Pool2dOptions options = {}) : options_(options) {}
  Tensor forward(const Tensor& x) const { return avg_pool2d(x, options_); }

 private:
  Pool2dOptions options_;
};

}  // namespace tinygpt::nn
