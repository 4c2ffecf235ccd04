#include "module.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <stdexcept>

#include "../autograd/random.h"

namespace tinygpt::nn {

namespace {
// A member lies within its module's object; no module class is anywhere near this large.
constexpr uintptr_t kMaxMemberOffset = uintptr_t{1} << 16;
}  // namespace

uint64_t child_seed(uint64_t seed, const std::string& name) {
  Fnv1a name_hash;
  for (const unsigned char c : name) name_hash.add(c);
  return splitmix64(seed ^ name_hash.value());
}

Module::Module(Module&& other) noexcept { *this = std::move(other); }

Module& Module::operator=(Module&& other) noexcept {
  // Members sit at the same offsets in both objects: their addresses move by the objects' distance.
  const uintptr_t from = reinterpret_cast<uintptr_t>(&other), to = reinterpret_cast<uintptr_t>(this);
  parameters_ = std::move(other.parameters_);
  buffers_ = std::move(other.buffers_);
  children_ = std::move(other.children_);
  owned_ = std::move(other.owned_);
  training_ = other.training_;
  own_seed_ = other.own_seed_, place_seed_ = other.place_seed_;
  for (Child& c : children_)
    if (c.member) c.module = reinterpret_cast<Module*>(reinterpret_cast<uintptr_t>(c.module) - from + to);
  return *this;
}

namespace {
void check_name(const std::string& name, const char* what) {
  if (name.empty() || name.find('/') != std::string::npos)  // '/' would nest groups in a saved file
    throw std::invalid_argument(fmt::format("{}('{}'): a name must be non-empty and without '/'", what, name));
}
}  // namespace

Tensor Module::register_parameter(std::string name, Tensor value) {
  check_name(name, "register_parameter");
  value.set_requires_grad(true);
  parameters_.emplace_back(std::move(name), value);
  return value;
}

Tensor Module::register_buffer(std::string name, Tensor value) {
  check_name(name, "register_buffer");
  if (!value.defined()) throw std::invalid_argument(fmt::format("register_buffer('{}'): an undefined tensor", name));
  value = value.detach().contiguous();
  buffers_.emplace_back(std::move(name), value);
  return value;
}

void Module::register_module(std::string name, Module& member) {
  check_name(name, "register_module");
  const uintptr_t self = reinterpret_cast<uintptr_t>(this), child = reinterpret_cast<uintptr_t>(&member);
  if (child <= self || child - self >= kMaxMemberOffset)
    throw std::invalid_argument(fmt::format("register_module('{}'): not a member of this module; create a child "
                                            "that lives elsewhere with add_module, which owns it",
                                            name));
  member.place(child_seed(place_seed_, name));
  children_.push_back({std::move(name), &member, true});
}

void Module::adopt(std::string name, std::unique_ptr<Module> child) {
  check_name(name, "add_module");
  child->place(child_seed(place_seed_, name));
  children_.push_back({std::move(name), child.get(), false});
  owned_.push_back(std::move(child));
}

void Module::place(uint64_t seed) {
  if (own_seed_) return;
  place_seed_ = seed;
  if (children_.empty()) return reset_parameters(seed);  // a layer draws its own values
  for (Child& c : children_) c.module->place(child_seed(seed, c.name));
}

std::vector<std::pair<std::string, Tensor>> Module::named_parameters() const {
  std::vector<std::pair<std::string, Tensor>> out = parameters_;
  for (const Child& c : children_)
    for (auto& [name, tensor] : c.module->named_parameters()) out.emplace_back(c.name + "." + name, tensor);
  return out;
}

std::vector<std::pair<std::string, Tensor>> Module::named_buffers() const {
  std::vector<std::pair<std::string, Tensor>> out = buffers_;
  for (const Child& c : children_)
    for (auto& [name, tensor] : c.module->named_buffers()) out.emplace_back(c.name + "." + name, tensor);
  return out;
}

std::vector<std::pair<std::string, Tensor>> Module::state_dict() const {
  std::vector<std::pair<std::string, Tensor>> out = named_parameters(), buffers = named_buffers();
  out.insert(out.end(), buffers.begin(), buffers.end());
  return out;
}

void Module::load_state_dict(const std::vector<std::pair<std::string, Tensor>>& values) {
  const auto own = state_dict();
  std::map<std::string, const Tensor*> given;
  for (const auto& [name, t] : values)
    if (!given.emplace(name, &t).second)
      throw std::invalid_argument(fmt::format("load_state_dict: '{}' given twice", name));
  for (const auto& [name, t] : own) {
    auto it = given.find(name);
    if (it == given.end()) throw std::invalid_argument(fmt::format("load_state_dict: '{}' is missing", name));
    if (it->second->shape() != t.shape())
      throw std::invalid_argument(fmt::format("load_state_dict: '{}' has shape {}, the module's is {}", name,
                                              to_string(it->second->shape()), to_string(t.shape())));
  }
  if (given.size() != own.size())
    for (const auto& [name, t] : values)
      if (std::none_of(own.begin(), own.end(), [&](const auto& o) { return o.first == name; }))
        throw std::invalid_argument(fmt::format("load_state_dict: '{}' is not in the module", name));
  for (const auto& [name, t] : own) t.copy_from_(*given.at(name));
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

std::vector<std::pair<std::string, Module*>> Module::named_children() const {
  std::vector<std::pair<std::string, Module*>> out;
  for (const Child& c : children_) out.emplace_back(c.name, c.module);
  return out;
}

std::vector<std::pair<std::string, Module*>> Module::named_modules() {
  std::vector<std::pair<std::string, Module*>> out{{"", this}};
  for (const Child& c : children_)
    for (auto& [name, m] : c.module->named_modules()) out.emplace_back(name.empty() ? c.name : c.name + "." + name, m);
  return out;
}

void Module::zero_grad() {  // walks the tree: a training step builds no parameter list
  for (auto& [name, p] : parameters_) p.zero_grad();
  for (Child& c : children_) c.module->zero_grad();
}

void Module::train(bool on) {
  training_ = on;
  for (Child& c : children_) c.module->train(on);
}

void Module::reset_parameters(uint64_t seed) {
  for (Child& c : children_) c.module->reset_parameters(child_seed(seed, c.name));
}

}  // namespace tinygpt::nn
