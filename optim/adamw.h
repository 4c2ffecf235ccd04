#pragma once
// AdamW (Loshchilov & Hutter) with bias correction, as PyTorch computes it:
//   p <- p (1 - lr wd)                         (decoupled decay; only tensors with 2+ axes)
//   m <- b1 m + (1 - b1) g,   v <- b2 v + (1 - b2) g^2
//   p <- p - lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
// and Adam, as torch.optim.Adam: the same with the decay coupled into the gradient of every
// parameter (g <- g + wd p: L2 regularization) and PyTorch's defaults (beta2 0.999, no decay).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "../autograd/tensor.h"
#include "optimizer.h"

namespace tinygpt::optim {

// The betas are doubles, as PyTorch's Python floats: the bias corrections 1 - beta^t lose most of a
// float beta's digits (1 - 0.999f is 1.3e-5 away from 0.001, relatively).
struct AdamWOptions {
  float lr = 1e-3f;
  double beta1 = 0.9;
  double beta2 = 0.99;
  float eps = 1e-8f;
  float weight_decay = 0.1f;
};

class AdamW : public Optimizer {
 public:
  // named: the model's parameters; those with two or more axes (weights, embeddings) decay,
  // biases and LayerNorm parameters do not (as nanoGPT). Throws on options out of range.
  AdamW(std::vector<std::pair<std::string, Tensor>> named, AdamWOptions options);
  AdamW(std::vector<ParamGroup> groups, AdamWOptions options);  // optimizer.h's ParamGroup
  // model.parameters() has no names, which optim::save needs: pass model.named_parameters().
  template <class Options = AdamWOptions>  // the default: options written as {...} reach the message too
  AdamW(const std::vector<Tensor>&, Options) : AdamW({}, AdamWOptions{}) {
    static_assert(sizeof(Options) == 0, "optim::AdamW takes model.named_parameters(), not model.parameters()");
  }

  using Optimizer::step;
  void step(float lr, float grad_scale = 1.0f) override;
  AdamWOptions options() const { return with_current_lr(options_); }  // lr: the current one

  // Moments, for checkpoints: first and second moment of parameter i (same shape, contiguous).
  struct State {
    std::string name;
    Tensor param, m, v;
    bool decay;
  };
  std::vector<State>& state() { return state_; }
  const std::vector<State>& state() const { return state_; }
  std::vector<std::pair<std::string, Tensor>> state_tensors() const override;
  const char* kind() const override { return "adamw"; }

  // What the last step did to parameter i (state() order): the sum of squares of the change it
  // made and of the weights before it, for update-to-weight ratios. Summed in fixed chunks as the
  // step runs, so the same for any thread count; zeros for a parameter without a gradient, and
  // for every one unless keep_update_sums(UpdateSums::kept) asked for them (they cost a read of
  // the weights and a sum per element).
  struct UpdateSquares {
    double update = 0, weight = 0;
  };
  enum class UpdateSums { skipped, kept };
  void keep_update_sums(UpdateSums sums) { update_sums_ = sums; }
  const std::vector<UpdateSquares>& last_update() const { return last_update_; }

 private:

 protected:
  // coupled: Adam's g + wd p on every parameter instead of AdamW's decoupled decay.
  AdamW(std::vector<ParamGroup> groups, AdamWOptions options, bool coupled);

 private:
  std::vector<State> state_;
  AdamWOptions options_;
  bool coupled_ = false;
  std::vector<UpdateSquares> last_update_;
  std::vector<UpdateSquares> chunk_sums_;  // per chunk of the largest parameter, reused each step
  UpdateSums update_sums_ = UpdateSums::skipped;
};

struct AdamOptions {
  float lr = 1e-3f;
  double beta1 = 0.9;
  double beta2 = 0.999;
  float eps = 1e-8f;
  float weight_decay = 0.0f;  // L2: added to the gradient of every parameter
};

class Adam : public AdamW {
 public:
  Adam(std::vector<std::pair<std::string, Tensor>> named, AdamOptions options);
  Adam(std::vector<ParamGroup> groups, AdamOptions options);
  template <class Options = AdamOptions>  // the default: options written as {...} reach the message too
  Adam(const std::vector<Tensor>&, Options) : Adam({}, AdamOptions{}) {
    static_assert(sizeof(Options) == 0, "optim::Adam takes model.named_parameters(), not model.parameters()");
  }
  const char* kind() const override { return "adam"; }
};

}  // namespace tinygpt::optim
