#include "rmsprop.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "../autograd/parallel.h"

namespace tinygpt::optim {

namespace {
void require(bool ok, const char* optimizer, const char* what, float value) {
  if (!ok) throw std::invalid_argument(fmt::format("{}: {} (got {})", optimizer, what, value));
}
bool finite_nonnegative(float v) { return v >= 0.0f && std::isfinite(v); }

std::vector<Tensor> zeros_like(const std::vector<std::pair<std::string, Tensor>>& params, float value = 0.0f) {
  std::vector<Tensor> out;
  for (const auto& [name, p] : params) out.push_back(Tensor::full(p.shape(), value));
  return out;
}

void name_state(std::vector<std::pair<std::string, Tensor>>& out, const char* group, const std::vector<Tensor>& state,
                const std::vector<std::pair<std::string, Tensor>>& params) {
  for (size_t i = 0; i < state.size(); ++i) out.emplace_back(std::string(group) + "/" + params[i].first, state[i]);
}
}  // namespace

RMSprop::RMSprop(std::vector<std::pair<std::string, Tensor>> named, RMSpropOptions o)
    : RMSprop({ParamGroup{std::move(named)}}, o) {}

RMSprop::RMSprop(std::vector<ParamGroup> groups, RMSpropOptions o) : Optimizer(std::move(groups), o.lr), options_(o) {
  require(o.alpha >= 0.0f && o.alpha <= 1.0f, "RMSprop", "alpha must be in [0, 1]", o.alpha);
  require(o.eps > 0.0f && std::isfinite(o.eps), "RMSprop", "eps must be finite and more than 0", o.eps);
  require(finite_nonnegative(o.weight_decay), "RMSprop", "weight_decay must be finite and at least 0", o.weight_decay);
  require(finite_nonnegative(o.momentum), "RMSprop", "momentum must be finite and at least 0", o.momentum);
  square_avg_ = zeros_like(params_);
  if (o.centered) grad_avg_ = zeros_like(params_);
  if (o.momentum > 0.0f) momentum_ = zeros_like(params_);
}

std::vector<std::pair<std::string, Tensor>> RMSprop::state_tensors() const {
  std::vector<std::pair<std::string, Tensor>> out;
  name_state(out, "square_avg", square_avg_, params_);
  name_state(out, "grad_avg", grad_avg_, params_);
  name_state(out, "momentum", momentum_, params_);
  return out;
}

void RMSprop::step(float lr, float grad_scale) {
  ++steps_;
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& param = params_[i].second;
    if (!param.has_grad()) continue;
    float *p = param.data(), *v = square_avg_[i].data();
    float* a = grad_avg_.empty() ? nullptr : grad_avg_[i].data();
    float* b = momentum_.empty() ? nullptr : momentum_[i].data();
    const float* g = param.grad().data();
    parallel_for(param.numel(), 8192, [=, o = options_, lr = lr_of(i, lr),
                                       wd = weight_decay_of(i, options_.weight_decay)](int64_t i0, int64_t i1) {
      for (int64_t j = i0; j < i1; ++j) {
        const float gj = g[j] * grad_scale + wd * p[j];
        v[j] = o.alpha * v[j] + (1.0f - o.alpha) * gj * gj;
        float spread = v[j];
        if (a) {
          a[j] = o.alpha * a[j] + (1.0f - o.alpha) * gj;
          spread -= a[j] * a[j];
        }
        float d = gj / (std::sqrt(spread) + o.eps);
        if (b) d = b[j] = o.momentum * b[j] + d;
        p[j] -= lr * d;
      }
    });
    param.mark_changed("RMSprop::step");
  }
}

Adagrad::Adagrad(std::vector<std::pair<std::string, Tensor>> named, AdagradOptions o)
    : Adagrad({ParamGroup{std::move(named)}}, o) {}

Adagrad::Adagrad(std::vector<ParamGroup> groups, AdagradOptions o) : Optimizer(std::move(groups), o.lr), options_(o) {
  require(finite_nonnegative(o.lr_decay), "Adagrad", "lr_decay must be finite and at least 0", o.lr_decay);
  require(finite_nonnegative(o.weight_decay), "Adagrad", "weight_decay must be finite and at least 0", o.weight_decay);
  require(finite_nonnegative(o.initial_accumulator_value), "Adagrad",
          "initial_accumulator_value must be finite and at least 0", o.initial_accumulator_value);
  require(o.eps > 0.0f && std::isfinite(o.eps), "Adagrad", "eps must be finite and more than 0", o.eps);
  sum_ = zeros_like(params_, o.initial_accumulator_value);
}

std::vector<std::pair<std::string, Tensor>> Adagrad::state_tensors() const {
  std::vector<std::pair<std::string, Tensor>> out;
  name_state(out, "sum", sum_, params_);
  return out;
}

void Adagrad::step(float lr, float grad_scale) {
  ++steps_;
  const float decayed = 1.0f + static_cast<float>(steps_ - 1) * options_.lr_decay;
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& param = params_[i].second;
    if (!param.has_grad()) continue;
    float *p = param.data(), *s = sum_[i].data();
    const float* g = param.grad().data();
    parallel_for(param.numel(), 8192, [=, clr = lr_of(i, lr) / decayed, wd = weight_decay_of(i, options_.weight_decay),
                                       eps = options_.eps](int64_t i0, int64_t i1) {
      for (int64_t j = i0; j < i1; ++j) {
        const float gj = g[j] * grad_scale + wd * p[j];
        s[j] += gj * gj;
        p[j] -= clr * gj / (std::sqrt(s[j]) + eps);
      }
    });
    param.mark_changed("Adagrad::step");
  }
}

}  // namespace tinygpt::optim
