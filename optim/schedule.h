#pragma once
// Learning-rate schedules. Each gives the rate for a step count (`at`) and sets an optimizer's
// (`apply`), so that a resumed run recomputes it from the step alone; ReduceLROnPlateau follows a
// metric instead, and its state is plain fields to save beside the model.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

#include "optimizer.h"
#include "../autograd/elementary.h"

namespace tinygpt::optim {

// Learning rate at iteration `it` (0-based), as nanoGPT: linear warm-up to lr over `warmup`
// iterations, then cosine decay to min_lr at `decay_iters`, and min_lr after.
struct LrSchedule {
  float lr = 1e-3f, min_lr = 1e-4f;
  int64_t warmup = 100, decay_iters = 2000;

  float at(int64_t it) const {
    if (it < warmup) return lr * static_cast<float>(it + 1) / static_cast<float>(warmup + 1);
    if (it >= decay_iters) return min_lr;
    const double ratio = static_cast<double>(it - warmup) / static_cast<double>(decay_iters - warmup);
    const double coeff = 0.5 * (1.0 + cos_sin_double(3.14159265358979323846 * ratio).cos);
    return static_cast<float>(min_lr + coeff * (lr - min_lr));
  }
  // Sets the optimizer's learning rate for iteration `it`.
  void apply(Optimizer& optimizer, int64_t it) const { optimizer.set_lr(at(it)); }
};

// torch.optim.lr_scheduler.StepLR: lr gamma^(step / step_size), step counted from 0 (an epoch or
// an iteration, as the caller counts).
struct StepLR {
  float lr = 1e-3f;
  int64_t step_size = 1;
  float gamma = 0.1f;

  float at(int64_t step) const {
    if (step_size <= 0) throw std::invalid_argument("StepLR: step_size must be at least 1");
    return lr * static_cast<float>(whole_power(static_cast<double>(gamma), step / step_size));
  }
  void apply(Optimizer& optimizer, int64_t step) const { optimizer.set_lr(at(step)); }
};

// torch.optim.lr_scheduler.OneCycleLR (cosine annealing, two phases): from max_lr / div_factor up
// to max_lr over the first pct_start of total_steps, then down to that start / final_div_factor.
struct OneCycleLR {
  float max_lr = 1e-2f;
  int64_t total_steps = 1000;
  double pct_start = 0.3;
  double div_factor = 25.0;
  double final_div_factor = 1e4;

  float at(int64_t step) const {
    if (total_steps < 2 || !(pct_start > 0 && pct_start < 1))
      throw std::invalid_argument("OneCycleLR: total_steps must be at least 2 and pct_start in (0, 1)");
    if (step < 0 || step >= total_steps)
      throw std::invalid_argument("OneCycleLR: step outside [0, total_steps)");
    const double start = max_lr / div_factor, end = start / final_div_factor;
    const double peak_step = pct_start * static_cast<double>(total_steps) - 1;  // PyTorch's phase end
    auto anneal = [](double from, double to, double pct) { return to + (from - to) / 2 * (cos_sin_double(M_PI * pct).cos + 1); };
    const double s = static_cast<double>(step);
    if (s <= peak_step) return static_cast<float>(anneal(start, max_lr, s / peak_step));
    return static_cast<float>(anneal(max_lr, end, (s - peak_step) / (static_cast<double>(total_steps - 1) - peak_step)));
  }
  void apply(Optimizer& optimizer, int64_t step) const { optimizer.set_lr(at(step)); }
};

// torch.optim.lr_scheduler.ReduceLROnPlateau (mode min, relative threshold): when the metric has
// not improved on the best by more than threshold (relative) for more than `patience` calls, the
// rate is multiplied by factor (not below min_lr), then `cooldown` calls pass before counting again.
struct ReduceLROnPlateau {
  float factor = 0.1f;
  int64_t patience = 10;
  double threshold = 1e-4;
  int64_t cooldown = 0;
  float min_lr = 0.0f;
  float eps = 1e-8f;  // a reduction smaller than this is skipped
  // State: save these to resume exactly.
  double best = std::numeric_limits<double>::infinity();
  int64_t bad_steps = 0, cooldown_left = 0;

  // Records `metric` (e.g. a validation loss); returns whether the rate was reduced.
  bool step(Optimizer& optimizer, double metric) {
    if (!(factor > 0 && factor < 1)) throw std::invalid_argument("ReduceLROnPlateau: factor must be in (0, 1)");
    if (metric < best * (1 - threshold)) best = metric, bad_steps = 0;
    else ++bad_steps;
    if (cooldown_left > 0) --cooldown_left, bad_steps = 0;
    if (bad_steps <= patience) return false;
    const float old_lr = optimizer.lr(), new_lr = std::max(old_lr * factor, min_lr);
    cooldown_left = cooldown, bad_steps = 0;
    if (old_lr - new_lr <= eps) return false;
    optimizer.set_lr(new_lr);
    return true;
  }
};

}  // namespace tinygpt::optim
