#pragma once
// A Module owns named parameters and child modules. Names compose with dots, so a GPT's parameters
// carry exactly nanoGPT's state_dict names ("transformer.h.0.attn.c_attn.weight").
//
// Children come two ways, and both register them as they are made:
//   Linear& fc = add_module<Linear>("fc", 4, 8);   // constructed in place and owned: cannot be forgotten
//   register_module("ln", ln);                      // a member declared in the class (ln: LayerNorm)
// A module moves with its tree: members move with it, owned children are handed over.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../autograd/tensor.h"

namespace tinygpt::nn {

class Module {
 public:
  Module() = default;
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  Module(Module&& other) noexcept;
  Module& operator=(Module&& other) noexcept;

  std::vector<std::pair<std::string, Tensor>> named_parameters() const;
  std::vector<Tensor> parameters() const;
  // Buffers: tensors a module keeps and saves that are not trained (running statistics, a fixed
  // mask, a table of angles), by dotted name as parameters are.
  std::vector<std::pair<std::string, Tensor>> named_buffers() const;
  // Every parameter, then every buffer: what nn::save writes and nn::load reads.
  std::vector<std::pair<std::string, Tensor>> state_dict() const;
  // Copies values in by name; every name and shape is checked (missing, unexpected, another shape)
  // before anything is changed, and the first mismatch is a std::invalid_argument naming it.
  void load_state_dict(const std::vector<std::pair<std::string, Tensor>>& values);
  int64_t parameter_count() const;
  std::vector<std::pair<std::string, Module*>> named_children() const;
  // This module (named "") and every module below it, by dotted name, parents before children
  // (torch's named_modules).
  std::vector<std::pair<std::string, Module*>> named_modules();
  void zero_grad();
  void train(bool on = true);
  void eval() { train(false); }
  bool training() const { return training_; }

  // Initializes the parameters again from `seed`, each module by its own scheme (Linear, Embedding
  // and LayerNorm as PyTorch's defaults). This one hands each child a seed mixed from `seed` and the
  // child's name, so that children of the same shape start different; a module with parameters of
  // its own overrides it.
  virtual void reset_parameters(uint64_t seed);

  // Where a module's first values come from when it is given no seed: its place in the tree. A
  // root's seed is 0; a child registered as `name` gets child_seed(its parent's, name), and is
  // initialized again from it (with its children, recursively) whenever it is registered. So two
  // siblings never start equal, a model is the same whatever order it was built in, and a model
  // built without seeds equals one reset_parameters(0)'d. A layer given a seed (or Init::none)
  // keeps its own values and its subtree is left alone.
  uint64_t place_seed() const { return place_seed_; }

 protected:
  // For a module whose values come from a seed it was given (not from its place).
  void keep_own_seed(uint64_t seed) { own_seed_ = true, place_seed_ = seed; }
  // Registers a leaf tensor that needs a gradient; returns it for the member to keep.
  Tensor register_parameter(std::string name, Tensor value);
  // Registers a tensor that is saved and loaded with the module but not trained (no gradient).
  Tensor register_buffer(std::string name, Tensor value);
  // Registers a child that is a member of this module's class (it moves with this module).
  void register_module(std::string name, Module& member);
  // Constructs a child in place, owned and registered: the reference stays valid for the life of
  // this module, moves included.
  template <class M, class... Args>
  M& add_module(std::string name, Args&&... args) {
    auto child = std::make_unique<M>(std::forward<Args>(args)...);
    M& ref = *child;
    adopt(std::move(name), std::move(child));
    return ref;
  }

 private:
  void adopt(std::string name, std::unique_ptr<Module> child);
  void place(uint64_t seed);  // initializes again from `seed` what follows its place (see place_seed)
  struct Child {
    std::string name;
    Module* module;
    bool member;  // a member of this object (else owned on the heap)
  };
  std::vector<std::pair<std::string, Tensor>> parameters_, buffers_;
  std::vector<Child> children_;
  std::vector<std::unique_ptr<Module>> owned_;
  bool training_ = true;
  bool own_seed_ = false;
  uint64_t place_seed_ = 0;
};

// Mixes a seed with a name: the seed a child gets from its parent's.
uint64_t child_seed(uint64_t seed, const std::string& name);

}  // namespace tinygpt::nn
