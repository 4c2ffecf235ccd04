#pragma once
// AdamW (Loshchilov & Hutter) with bias correction, as PyTorch computes it:
//   p <- p (1 - lr wd)                         (decoupled decay; only tensors with 2+ axes)
//   m <- b1 m + (1 - b1) g,   v <- b2 v + (1 - b2) g^2
//   p <- p - lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tinygpt/autograd/tensor.h"

namespace tinygpt::optim {

struct AdamWOptions {
  float lr = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.99f;
  float eps = 1e-8f;
  float weight_decay = 0.1f;
};

class AdamW {
 public:
  // named: the model's parameters; those with two or more axes (weights, embeddings) decay,
  // biases and LayerNorm parameters do not (as nanoGPT).
  AdamW(std::vector<std::pair<std::string, Tensor>> named, AdamWOptions options);

  // One update with learning rate lr (the schedule's) from the gradients times grad_scale (the
  // clipping factor, see grad_clip.h: the same bits as scaling them first); parameters without a
  // gradient are skipped.
  void step(float lr, float grad_scale = 1.0f);
  int64_t steps() const { return step_; }

  const AdamWOptions& options() const { return options_; }
  // Moments, for checkpoints: first and second moment of parameter i (same shape, contiguous).
  struct State {
    std::string name;
    Tensor param, m, v;
    bool decay;
  };
  std::vector<State>& state() { return state_; }
  const std::vector<State>& state() const { return state_; }
  void set_steps(int64_t steps) { step_ = steps; }

 private:
  std::vector<State> state_;
  AdamWOptions options_;
  int64_t step_ = 0;
};

}  // namespace tinygpt::optim
