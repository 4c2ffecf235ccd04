#include "progress.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>

namespace tinygpt::train {

std::string format_duration(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  const auto whole = static_cast<int64_t>(s);
  if (s < 60) return fmt::format("{:.1f}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", whole / 60, whole % 60);
  return fmt::format("{}h{:02}m", whole / 3600, whole % 3600 / 60);
}

void Progress::step(const StepReport& r) {
  const double eta = r.iteration > 0 ? r.elapsed_s / r.iteration * (r.total - r.iteration) : NAN;
  const std::string grad =
      std::isnan(r.grad_norm) ? "" : fmt::format("  grad {:.3g}{}", r.grad_norm, r.clipped ? " clipped" : "");
  const std::string peak = std::isnan(r.peak_share) ? "" : fmt::format(" ({:.0f}% of peak)", 100 * r.peak_share);
  std::string line = fmt::format("iter {}/{}  loss {:.4f}{}  lr {:.2e}  {:.0f} tok/s{}  {} elapsed  ETA {}", r.iteration,
                                 r.total, r.train_loss, grad, r.lr, r.tokens_per_s, peak,
                                 format_duration(r.elapsed_s), format_duration(eta));
  if (r.val_loss) line += fmt::format("  val {:.4f}", *r.val_loss);
  if (terminal_) {
    if (r.val_loss) {
      fmt::print(out_, "\r\033[K{}\n", line);  // keep evaluations on screen
      live_ = false;
    } else {
      const int percent = static_cast<int>(100 * r.iteration / std::max<int64_t>(1, r.total));
      fmt::print(out_, "\r\033[K{:3}% {}", percent, line);
      live_ = true;
    }
  } else if (r.val_loss || r.iteration % every_ == 0 || r.iteration == r.total) {
    fmt::print(out_, "{}\n", line);
  }
  std::fflush(out_);
}

void LiveLine::show(const std::string& text) {
  if (!terminal_) return;
  const double now = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  if (live_ && now - last_ < 0.1) return;
  last_ = now;
  fmt::print(out_, "\r\033[K{}", text);
  std::fflush(out_);
  live_ = true;
}

void LiveLine::clear() {
  if (!live_) return;
  fmt::print(out_, "\r\033[K");
  std::fflush(out_);
  live_ = false;
}

void LiveLine::message(const std::string& text) {
  clear();
  fmt::print(out_, "{}\n", text);
  std::fflush(out_);
}

void Progress::message(const std::string& text) {
  if (live_) fmt::print(out_, "\r\033[K");
  live_ = false;
  fmt::print(out_, "{}\n", text);
  std::fflush(out_);
}

}  // namespace tinygpt::train
