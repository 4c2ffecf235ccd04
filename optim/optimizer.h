#pragma once
// What every optimizer has: the parameters it updates (by name), a learning rate it keeps, a step
// count, and its state as named tensors (for saving). Schedules set the learning rate of any of them.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../autograd/tensor.h"

namespace tinygpt::optim {

// Parameters with a learning rate and a weight decay of their own (torch's parameter groups). A
// group's rate moves with the optimizer's: at lr() it is lr() x group lr / the options' lr, so a
// schedule scales every group alike. A group's weight decay applies to each of its parameters
// (AdamW's rule that only tensors of 2 or more axes decay is for parameters without one).
struct ParamGroup {
  std::vector<std::pair<std::string, Tensor>> params;
  std::optional<float> lr;            // unset: the optimizer's
  std::optional<float> weight_decay;  // unset: the optimizer's
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // One update from the parameters' gradients at the learning rate lr().
  void step() { step(lr_, 1.0f); }
  // One update at learning rate `lr` (lr() is left as it is), from the gradients times grad_scale
  // (the clipping factor, grad_clip.h: the same bits as scaling the gradients first). Parameters
  // without a gradient are skipped.
  virtual void step(float lr, float grad_scale = 1.0f) = 0;

  float lr() const { return lr_; }
  void set_lr(float lr);
  int64_t steps() const { return steps_; }
  void set_steps(int64_t steps) { steps_ = steps; }
  void zero_grad();  // drops every parameter's gradient
  const std::vector<std::pair<std::string, Tensor>>& parameters() const { return params_; }
  // The state tensors, e.g. "m/<parameter>" and "v/<parameter>" for AdamW: contiguous, written in
  // place, shaped like their parameter.
  virtual std::vector<std::pair<std::string, Tensor>> state_tensors() const = 0;
  virtual const char* kind() const = 0;  // "adamw", "sgd": what a saved state belongs to

 protected:
  Optimizer(std::vector<ParamGroup> groups, float lr);
  // Parameter i's learning rate when the optimizer's is `lr`, and its weight decay (`otherwise`
  // where its group sets none); whether its group sets one.
  float lr_of(size_t i, float lr) const { return lr * lr_scale_[i]; }  // x 1 outside groups: lr's bits
  float weight_decay_of(size_t i, float otherwise) const { return decay_[i].value_or(otherwise); }
  bool group_decays(size_t i) const { return decay_[i].has_value(); }
  // A subclass's options with the learning rate it runs at now (what its options() returns).
  template <class Options>
  Options with_current_lr(Options options) const {
    options.lr = lr_;
    return options;
  }
  std::vector<std::pair<std::string, Tensor>> params_;
  float lr_;
  int64_t steps_ = 0;

 private:
  std::vector<float> lr_scale_;              // per parameter: its group's lr / the options' lr
  std::vector<std::optional<float>> decay_;  // per parameter: its group's weight decay
};

}  // namespace tinygpt::optim
