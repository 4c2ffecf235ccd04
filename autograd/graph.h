#pragma once
// Reverse-mode autodiff. Each op that produces a tensor from inputs that need gradients records a
// Node: the inputs, and a backward function that reads the output's gradient and ADDS its share
// into each input's gradient (so a value that feeds several ops sums its gradients).
#include <memory>
#include <type_traits>
#include <vector>

#include "tensor.h"

namespace tinygpt {

// A recorded op: its inputs, and a backward that reads the output's gradient grad_out (a contiguous
// tensor of out's shape) and adds each input's share into that input's gradient.
struct Node {
  using Inputs = memory::Vector<Tensor>;
  Node(const char* op, Inputs inputs);
  virtual ~Node() = default;
  virtual void backward(const Tensor& out, const Tensor& grad_out) = 0;
  // Throws std::logic_error naming the op, and what changed it, when an input's storage or the
  // output's was changed in place (fill_, copy_from_, an optimizer's step, ...) after the op ran:
  // its backward would read changed values, or pass a gradient through values the graph no
  // longer describes. libtorch's rule, with one difference: a change to an output is refused
  // whether or not the op's backward reads it (libtorch records in-place ops in the graph).
  void check_versions(const Tensor& out) const;

  const char* op;
  Inputs inputs;
  memory::Vector<uint64_t> versions;  // each input's storage version when the op ran
  uint64_t output_version = 0;        // the output's, when the op made it
};

// The backward closure lives inside the node: one reused block per op, no std::function.
template <class Backward>
struct NodeWith final : Node {
  NodeWith(const char* op, Inputs inputs, Backward fn) : Node(op, std::move(inputs)), fn(std::move(fn)) {}
  void backward(const Tensor& out, const Tensor& grad_out) override { fn(out, grad_out); }
  Backward fn;
};

// Whether an op on these inputs is recorded: gradients are enabled and some input requires one.
bool records(const Node::Inputs& inputs);
Tensor attach_node(Tensor out, std::shared_ptr<Node> node);

// Records `backward` on `out` when records(inputs); returns out.
template <class Backward>
Tensor attach(Tensor out, const char* op, Node::Inputs inputs, Backward&& backward) {
  if (!records(inputs)) return out;
  using Fn = std::decay_t<Backward>;
  return attach_node(std::move(out), memory::make_shared<NodeWith<Fn>>(op, std::move(inputs),
                                                                         std::forward<Backward>(backward)));
}

// The gradient buffer of `t` to accumulate into (zero-filled on first use), or nullptr when `t`
// needs no gradient. Backward functions call this once per input.
float* grad_sink(const Tensor& t);

// The same, but a buffer made now is left unwritten and *fresh is set: the caller then writes
// every element (=) instead of adding (+=), which saves a zero fill and a read per element.
float* grad_sink(const Tensor& t, bool& fresh);

// Hands the gradient g (contiguous, in t's element order) on to t whole. Where t is not a leaf and
// has no gradient yet, t takes g's buffer without a copy (residual adds, reshapes); grad_sink
// copies a buffer so shared before anything is added into it. Else g is added in.
void hand_on(const Tensor& t, const Tensor& g);

// Whether a backward function may overwrite the gradient g it was handed, once it has read it:
// run_backward keeps no gradient of an intermediate past its node, so only a buffer that hand_on
// shares with another tensor's gradient must stay as it is.
bool may_overwrite(const Tensor& g);

// Runs backward from `root` seeded with `seed` (same shape), then frees the graph behind root. A
// graph is walked once: a backward that reaches a tensor whose graph an earlier backward freed
// (from this root or any other) throws before any gradient is written.
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
