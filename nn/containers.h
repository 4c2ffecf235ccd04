#pragma once
// Modules that hold other modules: Sequential runs its children in order, ModuleList only keeps
// them (a model's forward decides how to use them). Children are constructed in place by add(),
// registered as "0", "1", ..., and each starts from its own seed: child i is reset_parameters'd
// with a seed mixed from the container's seed and i (so two Linear(64, 64) never start equal).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tinygpt/nn/module.h"

namespace tinygpt::nn {

class ModuleList : public Module {
 public:
  explicit ModuleList(uint64_t seed = 0) : seed_(seed) {}
  template <class M, class... Args>
  M& add(Args&&... args) {
    const std::string name = std::to_string(items_.size());
    M& child = add_module<M>(name, std::forward<Args>(args)...);
    child.reset_parameters(child_seed(seed_, name));
    items_.push_back(&child);
    return child;
  }
  size_t size() const { return items_.size(); }
  Module& operator[](size_t i) const { return *items_.at(i); }
  template <class M>
  M& at(size_t i) const { return dynamic_cast<M&>(*items_.at(i)); }  // std::bad_cast if it is not an M

 private:
  uint64_t seed_;
  std::vector<Module*> items_;  // owned by Module
};

// A ModuleList whose forward runs its children in order.
class Sequential : public ModuleList {
 public:
  explicit Sequential(uint64_t seed = 0) : ModuleList(seed) {}
  // M must have Tensor forward(const Tensor&) (const or not).
  template <class M, class... Args>
  M& add(Args&&... args) {
    M& child = ModuleList::add<M>(std::forward<Args>(args)...);
    steps_.push_back([&child](const Tensor& x) { return child.forward(x); });
    return child;
  }
  Tensor forward(const Tensor& x) const;

 private:
  std::vector<std::function<Tensor(const Tensor&)>> steps_;
};

}  // namespace tinygpt::nn
