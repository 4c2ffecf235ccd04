#pragma once
// RMSprop and Adagrad, as torch.optim computes them (g: the gradient, plus wd p when weight decay
// is set, L2 on every parameter).
// RMSprop:  v <- alpha v + (1 - alpha) g²;  centered: a <- alpha a + (1 - alpha) g, and v - a²
//           replaces v below;  d = g / (sqrt(v) + eps);  momentum: b <- mu b + d, d = b;  p -= lr d
// Adagrad:  s <- s + g²;  p -= lr / (1 + (t - 1) lr_decay) * g / (sqrt(s) + eps)
#include <string>
#include <utility>
#include <vector>

#include "optimizer.h"

namespace tinygpt::optim {

struct RMSpropOptions {
  float lr = 1e-2f;
  float alpha = 0.99f;
  float eps = 1e-8f;
  float weight_decay = 0.0f;
  float momentum = 0.0f;
  bool centered = false;
};

class RMSprop : public Optimizer {
 public:
  RMSprop(std::vector<std::pair<std::string, Tensor>> named, RMSpropOptions options);
  RMSprop(std::vector<ParamGroup> groups, RMSpropOptions options);  // optimizer.h's ParamGroup
  template <class Options = RMSpropOptions>  // the default: options written as {...} reach the message too
  RMSprop(const std::vector<Tensor>&, Options) : RMSprop({}, RMSpropOptions{}) {
    static_assert(sizeof(Options) == 0, "optim::RMSprop takes model.named_parameters(), not model.parameters()");
  }
  using Optimizer::step;
  void step(float lr, float grad_scale = 1.0f) override;
  RMSpropOptions options() const { return with_current_lr(options_); }  // lr: the current one
  // "square_avg/<parameter>", and "grad_avg/..." when centered, "momentum/..." with momentum.
  std::vector<std::pair<std::string, Tensor>> state_tensors() const override;
  const char* kind() const override { return "rmsprop"; }

 private:
  RMSpropOptions options_;
  std::vector<Tensor> square_avg_, grad_avg_, momentum_;
};

struct AdagradOptions {
  float lr = 1e-2f;
  float lr_decay = 0.0f;
  float weight_decay = 0.0f;
  float initial_accumulator_value = 0.0f;
  float eps = 1e-10f;
};

class Adagrad : public Optimizer {
 public:
  Adagrad(std::vector<std::pair<std::string, Tensor>> named, AdagradOptions options);
  Adagrad(std::vector<ParamGroup> groups, AdagradOptions options);
  template <class Options = AdagradOptions>  // the default: options written as {...} reach the message too
  Adagrad(const std::vector<Tensor>&, Options) : Adagrad({}, AdagradOptions{}) {
    static_assert(sizeof(Options) == 0, "optim::Adagrad takes model.named_parameters(), not model.parameters()");
  }
  using Optimizer::step;
  void step(float lr, float grad_scale = 1.0f) override;
  AdagradOptions options() const { return with_current_lr(options_); }  // lr: the current one
  std::vector<std::pair<std::string, Tensor>> state_tensors() const override;  // "sum/<parameter>"
  const char* kind() const override { return "adagrad"; }

 private:
  AdagradOptions options_;
  std::vector<Tensor> sum_;
};

}  // namespace tinygpt::optim
