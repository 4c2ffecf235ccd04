#include "optim/grad_clip.h"

#include <cmath>

#include "autograd/parallel.h"

namespace tinygpt::optim {

double clip_grad_norm(const std::vector<Tensor>& params, double max_norm) {
  double total = 0;
  for (const Tensor& p : params)
    if (p.has_grad()) {
      const float* g = p.grad().data();
      total += deterministic_sum(p.numel(), [g](int64_t i) { return static_cast<double>(g[i]) * g[i]; });
    }
  const double norm = std::sqrt(total);
  if (max_norm > 0 && norm > max_norm) {
    const auto scale = static_cast<float>(max_norm / (norm + 1e-6));
    for (const Tensor& p : params) {
      if (!p.has_grad()) continue;
      float* g = p.grad().data();
      parallel_for(p.numel(), 16384, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) g[i] *= scale;
      });
    }
  }
  return norm;
}

}  // namespace tinygpt::optim
