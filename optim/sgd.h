#pragma once
// Stochastic gradient descent with momentum, as PyTorch's torch.optim.SGD:
//   d = g + wd p                               (L2 decay, on every parameter)
//   b <- momentum b + (1 - dampening) d        (b = d at the first step)
//   d <- d + momentum b (Nesterov), else d <- b
//   p <- p - lr d
#include <string>
#include <utility>
#include <vector>

#include "optimizer.h"

namespace tinygpt::optim {

struct SGDOptions {
  float lr = 1e-2f;
  float momentum = 0.0f;
  float dampening = 0.0f;
  float weight_decay = 0.0f;
  bool nesterov = false;  // needs momentum > 0 and dampening 0
};

class SGD : public Optimizer {
 public:
  SGD(std::vector<std::pair<std::string, Tensor>> named, SGDOptions options);
  SGD(std::vector<ParamGroup> groups, SGDOptions options);  // optimizer.h's ParamGroup
  // model.parameters() has no names, which optim::save needs: pass model.named_parameters().
  template <class Options = SGDOptions>  // the default: options written as {...} reach the message too
  SGD(const std::vector<Tensor>&, Options) : SGD({}, SGDOptions{}) {
    static_assert(sizeof(Options) == 0, "optim::SGD takes model.named_parameters(), not model.parameters()");
  }
  using Optimizer::step;
  void step(float lr, float grad_scale = 1.0f) override;
  SGDOptions options() const { return with_current_lr(options_); }  // lr: the current one
  // "momentum/<parameter>" buffers (zero until a parameter's first step).
  std::vector<std::pair<std::string, Tensor>> state_tensors() const override;
  const char* kind() const override { return "sgd"; }

 private:
  SGDOptions options_;
  std::vector<Tensor> momentum_;
};

}  // namespace tinygpt::optim
