#include "graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <unordered_set>

#include "kernels/strided.h"
#include "detail/profile.h"

namespace tinygpt {

namespace {
thread_local bool g_grad_enabled = true;
}

bool grad_enabled() { return g_grad_enabled; }
NoGradGuard::NoGradGuard() : previous_(g_grad_enabled) { g_grad_enabled = false; }
NoGradGuard::~NoGradGuard() { g_grad_enabled = previous_; }

bool records(const Node::Inputs& inputs) {
  return g_grad_enabled && std::any_of(inputs.begin(), inputs.end(),
                                       [](const Tensor& t) { return t.defined() && t.requires_grad(); });
}

Node::Node(const char* op, Inputs inputs) : op(op), inputs(std::move(inputs)) {
  versions.reserve(this->inputs.size());
  for (const Tensor& t : this->inputs) versions.push_back(t.defined() ? t.version() : 0);
}

namespace {
std::string changed_by(const Tensor& t) {
  const char* by = t.impl()->storage->changed_by;
  return by ? by : "an in-place write";
}
}  // namespace

void Node::check_versions(const Tensor& out) const {
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].defined() && inputs[i].version() != versions[i])
      throw std::logic_error(fmt::format("{}: input {} was changed in place by {} after {} read it and before "
                                         "backward, which needs the values it read: change it after backward, or "
                                         "change a copy",
                                         op, i, changed_by(inputs[i]), op));
  if (out.version() != output_version)
    throw std::logic_error(fmt::format("{}: its output was changed in place by {} after {} made it and before "
                                       "backward, which would pass a gradient through values the graph does not "
                                       "describe: change a copy (clone) instead",
                                       op, changed_by(out), op));
}

Tensor attach_node(Tensor out, std::shared_ptr<Node> node) {
  node->output_version = out.version();
  out.impl()->requires_grad = true;
  out.impl()->grad_fn = std::move(node);
  return out;
}

namespace {
// A gradient buffer that hand_on shares with another tensor (or with the gradient being read) is
// copied before anything is added into it.
void own(std::shared_ptr<Buffer>& grad) {
  if (grad.use_count() > 1) grad = memory::make_shared<Buffer>(grad->begin(), grad->end());
}
}  // namespace

float* grad_sink(const Tensor& t, bool& fresh) {
  fresh = false;
  if (!t.defined() || !t.requires_grad()) return nullptr;
  auto& grad = t.impl()->grad;
  if (!grad) {
    grad = memory::make_shared<Buffer>(t.numel());
    fresh = true;
  }
  own(grad);
  return grad->data();
}

float* grad_sink(const Tensor& t) {
  if (!t.defined() || !t.requires_grad()) return nullptr;
  auto& grad = t.impl()->grad;
  if (!grad) grad = memory::make_shared<Buffer>(t.numel(), 0.0f);
  own(grad);
  return grad->data();
}

void hand_on(const Tensor& t, const Tensor& g) {
  if (!t.defined() || !t.requires_grad()) return;
  auto& grad = t.impl()->grad;
  const std::shared_ptr<Buffer>& whole = g.impl()->storage;
  // Not a leaf's: the optimizer and clipping write leaves' gradients in place, outside grad_sink.
  if (!grad && t.impl()->grad_fn && g.impl()->offset == 0 && static_cast<int64_t>(whole->size()) == t.numel()) {
    grad = whole;
    return;
  }
  bool fresh = false;
  float* sink = grad_sink(t, fresh);
  pass_into(sink, g.data(), t.numel(), fresh);
}

bool may_overwrite(const Tensor& g) { return g.impl()->storage.use_count() == 1; }

namespace {
using ImplPtr = std::shared_ptr<TensorImpl>;

// Post-order DFS without recursion: the graph of a deep model is thousands of nodes long.
// Holding owning pointers keeps every tensor alive while its consumers' nodes are freed.
// Its bookkeeping lives in reused memory too (memory.h).
memory::Vector<ImplPtr> topological_order(const ImplPtr& root) {
  memory::Vector<ImplPtr> order;
  std::unordered_set<TensorImpl*, std::hash<TensorImpl*>, std::equal_to<>, memory::Allocator<TensorImpl*>> seen{
      root.get()};
  memory::Vector<std::pair<ImplPtr, size_t>> stack{{root, 0}};
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    const auto* inputs = node->grad_fn ? &node->grad_fn->inputs : nullptr;
    if (inputs && next < inputs->size()) {
      const ImplPtr& child = (*inputs)[next++].impl_ptr();
      if (child && child->requires_grad && seen.insert(child.get()).second) {
        if (child->graph_freed)
          throw std::logic_error(fmt::format("backward: {} reads a tensor whose graph an earlier backward freed; run "
                                             "the forward pass again (or keep the graph: compute both losses "
                                             "and call backward once on their sum)",
                                             node->grad_fn->op));
        stack.push_back({child, 0});
      }
    } else {
      order.push_back(node);
      stack.pop_back();
    }
  }
  return order;  // inputs before the tensors computed from them
}
}  // namespace

void run_backward(const Tensor& root, const Tensor& seed) {
  if (!root.requires_grad())
    throw std::invalid_argument("backward: the tensor does not require a gradient (no input needed one)");
  if (root.impl()->graph_freed)
    throw std::logic_error("backward: the graph behind this tensor was freed by an earlier backward; run the "
                           "forward pass again");
  if (seed.shape() != root.shape())
    throw std::invalid_argument(fmt::format("backward: seed gradient of shape {} for a tensor of shape {}",
                                            to_string(seed.shape()), to_string(root.shape())));
  memory::Vector<ImplPtr> order = topological_order(root.impl_ptr());
  const Tensor seed_c = seed.contiguous();
  bool fresh = false;
  float* g = grad_sink(root, fresh);
  pass_into(g, seed_c.data(), root.numel(), fresh);

  NoGradGuard no_grad;  // backward computes plain numbers, it builds no graph
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const ImplPtr& t = *it;
    if (!t->grad_fn) continue;  // a leaf keeps its accumulated gradient
    std::shared_ptr<Node> node = std::move(t->grad_fn);  // frees the graph as we go
    t->graph_freed = true;
    std::shared_ptr<Buffer> grad = std::move(t->grad);   // intermediate gradients are not kept
    if (!grad) continue;
    auto grad_impl = memory::make_shared<TensorImpl>();
    grad_impl->storage = std::move(grad);
    grad_impl->shape = t->shape;
    grad_impl->strides = contiguous_strides(t->shape);
    OpTimer timer(node->op);
    node->check_versions(Tensor(t));
    node->backward(Tensor(t), Tensor(std::move(grad_impl)));
  }
}

}  // namespace tinygpt
