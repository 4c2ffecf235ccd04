#include "sgd.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "../autograd/parallel.h"

namespace tinygpt::optim {

SGD::SGD(std::vector<std::pair<std::string, Tensor>> named, SGDOptions options)
    : SGD({ParamGroup{std::move(named)}}, options) {}

SGD::SGD(std::vector<ParamGroup> groups, SGDOptions options)
    : Optimizer(std::move(groups), options.lr), options_(options) {
  auto check = [](bool ok, const char* what) {
    if (!ok) throw std::invalid_argument(fmt::format("SGD: {}", what));
  };
  check(options.momentum >= 0.0f && std::isfinite(options.momentum), "momentum must be finite and at least 0");
  check(options.dampening >= 0.0f && options.dampening <= 1.0f, "dampening must be in [0, 1]");
  check(options.weight_decay >= 0.0f && std::isfinite(options.weight_decay), "weight_decay must be finite and at least 0");
  check(!options.nesterov || (options.momentum > 0.0f && options.dampening == 0.0f),
        "Nesterov momentum needs momentum > 0 and dampening 0");
  if (options.momentum > 0.0f)
    for (const auto& [name, p] : params_) momentum_.push_back(Tensor::zeros(p.shape()));
}

std::vector<std::pair<std::string, Tensor>> SGD::state_tensors() const {
  std::vector<std::pair<std::string, Tensor>> out;
  for (size_t i = 0; i < momentum_.size(); ++i) out.emplace_back("momentum/" + params_[i].first, momentum_[i]);
  return out;
}

void SGD::step(float lr, float grad_scale) {
  const bool first = steps_++ == 0;
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& param = params_[i].second;
    if (!param.has_grad()) continue;
    float* p = param.data();
    const float* g = param.grad().data();
    float* b = momentum_.empty() ? nullptr : momentum_[i].data();
    parallel_for(param.numel(), 8192,
                 [=, lr = lr_of(i, lr), wd = weight_decay_of(i, options_.weight_decay), mu = options_.momentum,
                  damp = options_.dampening,
                  nesterov = options_.nesterov](int64_t i0, int64_t i1) {
                   for (int64_t j = i0; j < i1; ++j) {
                     float d = g[j] * grad_scale + wd * p[j];
                     if (b) {
                       b[j] = first ? d : mu * b[j] + (1.0f - damp) * d;
                       d = nesterov ? d + mu * b[j] : b[j];
                     }
                     p[j] -= lr * d;
                   }
                 });
    param.mark_changed("SGD::step");
  }
}

}  // namespace tinygpt::optim
