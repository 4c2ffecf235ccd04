#include "grad_clip.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "../autograd/parallel.h"

namespace tinygpt::optim {

double global_grad_norm(const std::vector<Tensor>& params) {
  double total = 0;
  for (const Tensor& p : params)
    if (p.has_grad()) {
      const float* g = p.grad().data();
      total += deterministic_sum(p.numel(), [g](int64_t i) { return static_cast<double>(g[i]) * g[i]; });
    }
  return std::sqrt(total);
}

float clip_scale(double norm, double max_norm) {
  return max_norm > 0 && norm > max_norm ? static_cast<float>(max_norm / (norm + 1e-6)) : 1.0f;
}

double clip_grad_norm(const std::vector<Tensor>& params, double max_norm) {
  const double norm = global_grad_norm(params);
  const float scale = clip_scale(norm, max_norm);
  if (scale == 1.0f) return norm;
  for (const Tensor& p : params) {
    if (!p.has_grad()) continue;
    float* g = p.grad().data();
    parallel_for(p.numel(), 16384, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) g[i] *= scale;
    });
  }
  return norm;
}

void clip_grad_value(const std::vector<Tensor>& params, double clip) {
  if (!(clip >= 0) || std::isinf(clip))
    throw std::invalid_argument(fmt::format("clip_grad_value: clip {} is not a finite number of at least 0", clip));
  const auto c = static_cast<float>(clip);
  for (const Tensor& p : params) {
    if (!p.has_grad()) continue;
    float* g = p.grad().data();
    parallel_for(p.numel(), 16384, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) g[i] = std::clamp(g[i], -c, c);  // NaN stays NaN, as torch.clamp
    });
  }
}

}  // namespace tinygpt::optim
