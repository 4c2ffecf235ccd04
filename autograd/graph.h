#pragma once
// Reverse-mode autodiff. Each op that produces a tensor from inputs that need gradients records a
// Node: the inputs, and a backward function that reads the output's gradient and ADDS its share
// into each input's gradient (so a value that feeds several ops sums its gradients).
#include <functional>
#include <vector>

#include "autograd/tensor.h"

namespace tinygpt {

// grad_out: the output's gradient, a contiguous tensor of out's shape.
using BackwardFn = std::function<void(const Tensor& out, const Tensor& grad_out)>;

struct Node {
  const char* op;
  std::vector<Tensor> inputs;
  BackwardFn backward;
};

// Records `backward` on `out` when gradients are enabled and some input requires one; returns out.
Tensor attach(Tensor out, const char* op, std::vector<Tensor> inputs, BackwardFn backward);

// The gradient buffer of `t` to accumulate into (zero-filled on first use), or nullptr when `t`
// needs no gradient. Backward functions call this once per input.
float* grad_sink(const Tensor& t);

// The same, but a buffer made now is left unwritten and *fresh is set: the caller then writes
// every element (=) instead of adding (+=), which saves a zero fill and a read per element.
float* grad_sink(const Tensor& t, bool& fresh);

// Runs backward from `root` seeded with `seed` (same shape), then frees the graph behind root.
void run_backward(const Tensor& root, const Tensor& seed);

// Gradient recording is on by default; a NoGradGuard turns it off in its scope (evaluation,
// sampling, optimizer updates). The flag is per thread, as each thread builds its own graphs.
bool grad_enabled();
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

}  // namespace tinygpt
