#include "optimizer.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

namespace tinygpt::optim {

Optimizer::Optimizer(std::vector<ParamGroup> groups, float lr) {
  set_lr(lr);
  for (size_t g = 0; g < groups.size(); ++g) {
    const ParamGroup& group = groups[g];
    if (group.lr && (!(*group.lr >= 0.0f) || !std::isfinite(*group.lr) || lr <= 0.0f))
      throw std::invalid_argument(fmt::format("optimizer: group {}'s learning rate {} (finite, at least 0, and the "
                                              "optimizer's own above 0, which it scales with)", g, *group.lr));
    if (group.weight_decay && (!(*group.weight_decay >= 0.0f) || !std::isfinite(*group.weight_decay)))
      throw std::invalid_argument(fmt::format("optimizer: group {}'s weight decay {} (finite, at least 0)", g,
                                              *group.weight_decay));
    for (const auto& [name, p] : group.params) {
      for (const auto& [seen_name, seen] : params_)
        if (seen.same_as(p) || seen_name == name)
          throw std::invalid_argument(fmt::format("optimizer: parameter '{}' is in more than one group", name));
      params_.emplace_back(name, p);
      lr_scale_.push_back(group.lr ? *group.lr / lr : 1.0f);
      decay_.push_back(group.weight_decay);
    }
  }
  for (const auto& [name, p] : params_)
    if (!p.defined() || !p.requires_grad() || !p.is_contiguous())
      throw std::invalid_argument(fmt::format("optimizer: parameter '{}' must be a contiguous tensor that requires a "
                                              "gradient (register it with register_parameter)",
                                              name));
}

void Optimizer::set_lr(float lr) {
  if (!(lr >= 0.0f) || !std::isfinite(lr))
    throw std::invalid_argument(fmt::format("optimizer: the learning rate must be finite and at least 0 (got {})", lr));
  lr_ = lr;
}

void Optimizer::zero_grad() {
  for (auto& [name, p] : params_) p.zero_grad();
}

}  // namespace tinygpt::optim
