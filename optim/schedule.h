#pragma once
// Learning rate at iteration `it` (0-based), as nanoGPT: linear warm-up to lr over `warmup`
// iterations, then cosine decay to min_lr at `decay_iters`, and min_lr after.
#include <cmath>
#include <cstdint>

#include "tinygpt/optim/optimizer.h"

namespace tinygpt::optim {

struct LrSchedule {
  float lr = 1e-3f, min_lr = 1e-4f;
  int64_t warmup = 100, decay_iters = 2000;

  float at(int64_t it) const {
    if (it < warmup) return lr * static_cast<float>(it + 1) / static_cast<float>(warmup + 1);
    if (it >= decay_iters) return min_lr;
    const double ratio = static_cast<double>(it - warmup) / static_cast<double>(decay_iters - warmup);
    const double coeff = 0.5 * (1.0 + std::cos(3.14159265358979323846 * ratio));
    return static_cast<float>(min_lr + coeff * (lr - min_lr));
  }
  // Sets the optimizer's learning rate for iteration `it`.
  void apply(Optimizer& optimizer, int64_t it) const { optimizer.set_lr(at(it)); }
};

}  // namespace tinygpt::optim
