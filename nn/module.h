#pragma once
// A Module owns named parameters and child modules. Names compose with dots, so a GPT's parameters
// carry exactly nanoGPT's state_dict names ("transformer.h.0.attn.c_attn.weight").
#include <string>
#include <utility>
#include <vector>

#include "tinygpt/autograd/tensor.h"

namespace tinygpt::nn {

class Module {
 public:
  Module() = default;
  virtual ~Module() = default;
  Module(const Module&) = delete;  // children are registered by address
  Module& operator=(const Module&) = delete;

  std::vector<std::pair<std::string, Tensor>> named_parameters() const;
  std::vector<Tensor> parameters() const;
  int64_t parameter_count() const;
  void zero_grad();
  void train(bool on = true);
  void eval() { train(false); }
  bool training() const { return training_; }

 protected:
  // Registers a leaf tensor that needs a gradient; returns it for the member to keep.
  Tensor register_parameter(std::string name, Tensor value);
  void register_module(std::string name, Module& child);

 private:
  std::vector<std::pair<std::string, Tensor>> parameters_;
  std::vector<std::pair<std::string, Module*>> children_;
  bool training_ = true;
};

}  // namespace tinygpt::nn
