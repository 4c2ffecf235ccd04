#include "tinygpt/optim/optimizer.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

namespace tinygpt::optim {

Optimizer::Optimizer(std::vector<std::pair<std::string, Tensor>> named, float lr) : params_(std::move(named)) {
  set_lr(lr);
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
