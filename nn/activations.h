#pragma once
// Elementwise activations and dropout as modules, for Sequential and for models that list their
// steps as members.
#include <cstdint>
#include <optional>

#include "../autograd/ops.h"
#include "module.h"

namespace tinygpt::nn {

class ReLU : public Module {
 public:
  Tensor forward(const Tensor& x) const { return relu(x); }
};

class GELU : public Module {  // the tanh approximation (as GPT-2's)
 public:
  Tensor forward(const Tensor& x) const { return gelu(x); }
};

class Identity : public Module {  // x as it is (a placeholder in a Sequential)
 public:
  Tensor forward(const Tensor& x) const { return x; }
};

class LeakyReLU : public Module {  // x, or slope * x below 0
 public:
  explicit LeakyReLU(float slope = 0.01f) : slope_(slope) {}
  Tensor forward(const Tensor& x) const { return leaky_relu(x, slope_); }

 private:
  float slope_;
};

class SiLU : public Module {  // x * sigmoid(x), also called swish
 public:
  Tensor forward(const Tensor& x) const { return silu(x); }
};

// [..., 2H] -> [..., H]: silu(gate) * up, the gate and the up projection side by side (one Linear
// of 2H outputs makes both, as the GPT's mlp.c_fc does).
class SwiGLU : public Module {
 public:
  Tensor forward(const Tensor& x) const { return swiglu(x); }
};

class Tanh : public Module {
 public:
  Tensor forward(const Tensor& x) const { return tanh(x); }
};

class Sigmoid : public Module {
 public:
  Tensor forward(const Tensor& x) const { return sigmoid(x); }
};

// Zeroes each element with probability p while training and scales the rest by 1/(1-p); the
// identity in eval(). Each call draws a new mask from (seed, call number): a run repeats exactly.
// Without a seed it takes its place's (module.h: place_seed), so two Dropouts differ.
class Dropout : public Module {
 public:
  explicit Dropout(float p = 0.5f, std::optional<uint64_t> seed = std::nullopt);
  Tensor forward(const Tensor& x);
  float p() const { return p_; }
  // Masks drawn so far: save it (io/save.h's SavedState) and set it back to resume exactly.
  uint64_t calls() const { return calls_; }
  void set_calls(uint64_t calls) { calls_ = calls; }

 private:
  float p_;
  uint64_t calls_ = 0;
};

}  // namespace tinygpt::nn
