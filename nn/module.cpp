#include "tinygpt/nn/module.h"

namespace tinygpt::nn {

Tensor Module::register_parameter(std::string name, Tensor value) {
  value.set_requires_grad(true);
  parameters_.emplace_back(std::move(name), value);
  return value;
}

void Module::register_module(std::string name, Module& child) { children_.emplace_back(std::move(name), &child); }

std::vector<std::pair<std::string, Tensor>> Module::named_parameters() const {
  std::vector<std::pair<std::string, Tensor>> out = parameters_;
  for (const auto& [prefix, child] : children_)
    for (auto& [name, tensor] : child->named_parameters()) out.emplace_back(prefix + "." + name, tensor);
  return out;
}

std::vector<Tensor> Module::parameters() const {
  std::vector<Tensor> out;
  for (auto& [name, tensor] : named_parameters()) out.push_back(tensor);
  return out;
}

int64_t Module::parameter_count() const {
  int64_t n = 0;
  for (const Tensor& p : parameters()) n += p.numel();
  return n;
}

void Module::zero_grad() {  // walks the tree: a training step builds no parameter list
  for (auto& [name, p] : parameters_) p.zero_grad();
  for (auto& [name, child] : children_) child->zero_grad();
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [name, child] : children_) child->train(on);
}

}  // namespace tinygpt::nn
