#pragma once
// Normalization over a batch or over groups of channels, for convolutional networks, with
// libtorch's names, defaults and buffers (LayerNorm and RMSNorm, which normalize each position's
// features, are in layers.h).
#include <cstdint>

#include "../autograd/ops.h"
#include "module.h"

namespace tinygpt::nn {

struct BatchNormOptions {
  float eps = 1e-5f;
  float momentum = 0.1f;  // running = (1 - momentum) running + momentum batch
  bool affine = true;     // a weight (starts 1) and a bias (starts 0) per channel
  bool track_running_stats = true;
};

// x [N, C] or [N, C, L] (BatchNorm1d), [N, C, H, W] (BatchNorm2d): each channel normalized by the
// mean and the biased variance over every other axis, then scaled and shifted. In training the
// batch's statistics are used and the buffers running_mean (starts 0) and running_var (starts 1)
// move towards them (running_var with the unbiased variance, as PyTorch); num_batches_tracked
// counts the batches. In eval the running statistics are used (the batch's, without them).
class BatchNorm : public Module {
 public:
  BatchNorm(int64_t channels, int64_t image_axes, BatchNormOptions options = {});
  Tensor forward(const Tensor& x);
  Tensor weight, bias, running_mean, running_var, num_batches_tracked;

 private:
  int64_t image_axes_;  // 0 or 1 for BatchNorm1d, 2 for BatchNorm2d
  BatchNormOptions options_;
};

class BatchNorm1d : public BatchNorm {
 public:
  explicit BatchNorm1d(int64_t channels, BatchNormOptions options = {}) : BatchNorm(channels, -1, options) {}
};

class BatchNorm2d : public BatchNorm {
 public:
  explicit BatchNorm2d(int64_t channels, BatchNormOptions options = {}) : BatchNorm(channels, 2, options) {}
};

// x [N, C, *]: the channels split into `groups` groups, each sample's group normalized by its own
// mean and biased variance, then scaled and shifted per channel (weight starts 1, bias 0). The
// same in training and eval.
class GroupNorm : public Module {
 public:
  GroupNorm(int64_t groups, int64_t channels, float eps = 1e-5f, bool affine = true);
  Tensor forward(const Tensor& x) const;
  Tensor weight, bias;

 private:
  int64_t groups_, channels_;
  float eps_;
};

}  // namespace tinygpt::nn
