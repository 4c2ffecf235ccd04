#include "adamw.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "../autograd/parallel.h"
#include "../autograd/elementary.h"

namespace tinygpt::optim {

namespace {
constexpr int64_t kChunk = 8192;  // elements per task, and per partial sum of the update's size
}  // namespace

AdamW::AdamW(std::vector<std::pair<std::string, Tensor>> named, AdamWOptions options)
    : AdamW({ParamGroup{std::move(named)}}, options, false) {}
AdamW::AdamW(std::vector<ParamGroup> groups, AdamWOptions options) : AdamW(std::move(groups), options, false) {}

Adam::Adam(std::vector<std::pair<std::string, Tensor>> named, AdamOptions o) : Adam({ParamGroup{std::move(named)}}, o) {}
Adam::Adam(std::vector<ParamGroup> groups, AdamOptions o)
    : AdamW(std::move(groups), {o.lr, o.beta1, o.beta2, o.eps, o.weight_decay}, true) {}

AdamW::AdamW(std::vector<ParamGroup> groups, AdamWOptions options, bool coupled)
    : Optimizer(std::move(groups), options.lr), options_(options), coupled_(coupled) {
  auto check = [coupled](bool ok, const char* what, double value) {
    if (!ok) throw std::invalid_argument(fmt::format("{}: {} (got {})", coupled ? "Adam" : "AdamW", what, value));
  };
  check(options.beta1 >= 0.0f && options.beta1 < 1.0f, "beta1 must be in [0, 1)", options.beta1);
  check(options.beta2 >= 0.0f && options.beta2 < 1.0f, "beta2 must be in [0, 1)", options.beta2);
  check(options.eps > 0.0f && std::isfinite(options.eps), "eps must be finite and more than 0", options.eps);
  check(options.weight_decay >= 0.0f && std::isfinite(options.weight_decay),
        "weight_decay must be finite and at least 0", options.weight_decay);
  for (size_t i = 0; i < params_.size(); ++i) {
    const auto& [name, p] = params_[i];
    state_.push_back({name, p, Tensor::zeros(p.shape()), Tensor::zeros(p.shape()),
                      coupled || group_decays(i) || p.dim() >= 2});
    chunk_sums_.resize(std::max(chunk_sums_.size(), static_cast<size_t>((p.numel() + kChunk - 1) / kChunk)));
  }
  last_update_.resize(state_.size());
}

std::vector<std::pair<std::string, Tensor>> AdamW::state_tensors() const {
  std::vector<std::pair<std::string, Tensor>> out;
  for (const State& s : state_) out.emplace_back("m/" + s.name, s.m), out.emplace_back("v/" + s.name, s.v);
  return out;
}

void AdamW::step(float lr, float grad_scale) {
  ++steps_;
  const AdamWOptions& o = options_;
  const double bias1 = 1.0 - whole_power(o.beta1, steps_);  // in double, as PyTorch
  const auto bias2_sqrt = static_cast<float>(std::sqrt(1.0 - whole_power(o.beta2, steps_)));
  for (size_t i = 0; i < state_.size(); ++i) {
    State& s = state_[i];
    last_update_[i] = {};
    if (!s.param.has_grad()) continue;
    const float lr_i = lr_of(i, lr), wd = weight_decay_of(i, o.weight_decay);
    const auto step_size = static_cast<float>(lr_i / bias1);
    float *p = s.param.data(), *m = s.m.data(), *v = s.v.data();
    const float* g = s.param.grad().data();
    const float decay = s.decay && !coupled_ ? 1.0f - lr_i * wd : 1.0f;
    const float l2 = s.decay && coupled_ ? wd : 0.0f;
    // Every constant by value: read through a reference, the compiler must assume the stores below
    // may change it, and keeps the loop scalar.
    // 1 - beta in double, then float, as PyTorch's alpha = 1 - beta (1 - 0.999f is 1.3e-5 off).
    const int64_t n = s.param.numel(), chunks = (n + kChunk - 1) / kChunk;
    UpdateSquares* sums = chunk_sums_.data();
    const bool keep = update_sums_ == UpdateSums::kept;
    // One element's step; returns the change it made to the weight.
    const auto advance = [=, beta1 = static_cast<float>(o.beta1), beta2 = static_cast<float>(o.beta2),
                          rest1 = static_cast<float>(1.0 - o.beta1), rest2 = static_cast<float>(1.0 - o.beta2),
                          eps = o.eps](int64_t k) {
      const float gi = g[k] * grad_scale + l2 * p[k];  // exact when grad_scale is 1 and l2 0
      m[k] = beta1 * m[k] + rest1 * gi;
      v[k] = beta2 * v[k] + rest2 * gi * gi;
      const float before = p[k];
      p[k] = before * decay - step_size * m[k] / (std::sqrt(v[k]) / bias2_sqrt + eps);
      return p[k] - before;
    };
    parallel_for(chunks, 1, [=](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) {
        const int64_t begin = c * kChunk, end = std::min(n, (c + 1) * kChunk);
        if (!keep) {
          for (int64_t k = begin; k < end; ++k) advance(k);
          continue;
        }
        const double weight = sum_in_lanes<double>(begin, end, [p](int64_t k) { return double(p[k]) * p[k]; });
        // Each element's step once, in order; its change's square summed in lanes (vector speed).
        const double update = sum_in_lanes<double>(begin, end, [&](int64_t k) {
          const float change = advance(k);
          return double(change) * change;
        });
        sums[c] = {update, weight};
      }
    });
    for (int64_t c = 0; keep && c < chunks; ++c)  // in chunk order: any thread count, the same sums
      last_update_[i].update += sums[c].update, last_update_[i].weight += sums[c].weight;
    s.param.mark_changed(coupled_ ? "Adam::step" : "AdamW::step");
  }
}

}  // namespace tinygpt::optim
