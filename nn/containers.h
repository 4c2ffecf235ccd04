#pragma once
// Modules that hold other modules: Sequential runs its children in order, ModuleList only keeps
// them (a model's forward decides how to use them). Children are constructed in place by add(),
// registered as "0", "1", ..., and each starts from its own seed: child i's is child_seed(the
// container's, "i"), the container's being the one it is given or its place in the model
// (Module::place_seed), so two Linear(64, 64) never start equal.
#include <cstdint>
#include <concepts>
#include <functional>
#include <optional>
#include <type_traits>
#include <string>
#include <vector>

#include "module.h"

namespace tinygpt::nn {

class ModuleList : public Module {
 public:
  explicit ModuleList(std::optional<uint64_t> seed = std::nullopt) {
    if (seed) keep_own_seed(*seed);
  }
  template <class M, class... Args>
  M& add(Args&&... args) {
    static_assert(std::is_base_of_v<Module, M>, "ModuleList::add<M>: M must be a module (derive from nn::Module)");
    M& child = add_module<M>(std::to_string(items_.size()), std::forward<Args>(args)...);  // placed as child "i"
    items_.push_back(&child);
    return child;
  }
  size_t size() const { return items_.size(); }
  Module& operator[](size_t i) const { return *items_.at(i); }
  // for (nn::Module& m : list): the children in order.
  class Iterator {
   public:
    explicit Iterator(std::vector<Module*>::const_iterator at) : at_(at) {}
    Module& operator*() const { return **at_; }
    Iterator& operator++() {
      ++at_;
      return *this;
    }
    bool operator==(const Iterator&) const = default;

   private:
    std::vector<Module*>::const_iterator at_;
  };
  Iterator begin() const { return Iterator(items_.begin()); }
  Iterator end() const { return Iterator(items_.end()); }
  template <class M>
  M& at(size_t i) const { return dynamic_cast<M&>(*items_.at(i)); }  // std::bad_cast if it is not an M

 private:
  std::vector<Module*> items_;  // owned by Module
};

// A ModuleList whose forward runs its children in order.
class Sequential : public ModuleList {
 public:
  explicit Sequential(std::optional<uint64_t> seed = std::nullopt) : ModuleList(seed) {}
  // M must have Tensor forward(const Tensor&) (const or not).
  template <class M, class... Args>
  M& add(Args&&... args) {
    static_assert(requires(M& m, const Tensor& x) { { m.forward(x) } -> std::convertible_to<Tensor>; },
                  "Sequential::add<M>: M needs Tensor forward(const Tensor&); keep other modules (an Embedding) "
                  "in a ModuleList and call them yourself");
    M& child = ModuleList::add<M>(std::forward<Args>(args)...);
    steps_.push_back([&child](const Tensor& x) { return child.forward(x); });
    return child;
  }
  Tensor forward(const Tensor& x) const;

 private:
  std::vector<std::function<Tensor(const Tensor&)>> steps_;
};

}  // namespace tinygpt::nn
