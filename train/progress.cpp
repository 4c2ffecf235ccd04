#include "progress.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>

#include "../autograd/precision.h"

namespace tinygpt::train {

std::string format_duration(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  const auto whole = static_cast<int64_t>(s);
  if (s < 60) return fmt::format("{:.1f}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", whole / 60, whole % 60);
  return fmt::format("{}h{:02}m", whole / 3600, whole % 3600 / 60);
}

void Progress::start(const StartReport& r) {
  const TrainOptions& o = r.options;
  if (r.ranks > 1)
    fmt::print(out_, "tinygpt: {} ranks, each {} sequences per micro-batch: {} tokens per iteration\n", r.ranks,
               o.batch, r.ranks * o.batch * o.block * o.grad_accum);
  fmt::print(out_, "tinygpt: {} parameters; {} tokenizer, {} tokens; {} training and {} validation tokens\n",
             r.parameters, r.tokenizer, r.vocab_size, r.train_tokens, r.val_tokens);
  fmt::print(out_, "tinygpt: memory: {}\n", r.memory);
  for (const std::string& change : r.changes) fmt::print(out_, "tinygpt: changed at {}\n", change);
  if (o.iters <= o.warmup)
    fmt::print(out_, "tinygpt: warning: --iters {} ends inside the {} warm-up iterations: the learning rate climbs to "
               "{:.3g} and never reaches --lr {} (give a smaller --warmup)\n",
               o.iters, o.warmup, o.lr * o.iters / (o.warmup + 1), o.lr);
  const std::string how = r.start == RunStart::init_from ? fmt::format("fine-tuning {}", r.source)
                          : r.start == RunStart::resume  ? "resuming"
                                                         : "starting";
  fmt::print(out_, "tinygpt: {} at iteration {} of {}; checkpoint {}, log {}{}\n", how, r.iteration, o.iters, o.out,
             r.log, o.precision == Precision::bf16 ? fmt::format("; bf16 products ({})", bf16_kernels_note()) : "");
  std::fflush(out_);
}

void Progress::end(const EndReport& r) {
  const TrainOptions& o = r.options;
  if (r.how == EndReport::How::finished) {
    message(fmt::format("tinygpt: done: {} iterations, train loss {:.4f}, val loss {:.4f}; checkpoint {}{}", r.iteration,
                        r.train_loss, r.val_loss, o.out,
                        std::isfinite(r.best_val_loss)
                            ? fmt::format("; best val loss {:.4f} in {}", r.best_val_loss, r.best)
                            : ""));
    return;
  }
  const std::string stopped = r.how == EndReport::How::paused ? std::string("paused")
                              : r.signal > 0 ? fmt::format("stopped by signal {}", r.signal)
                                             : std::string("stopped by a signal to another rank");
  message(fmt::format("tinygpt: {} at iteration {} of {}; checkpoint saved to {}\ntinygpt: continue with: {}tinygpt "
                      "train --resume {}",
                      stopped, r.iteration, o.iters, o.out,
                      r.ranks > 1 ? fmt::format("mpirun -np {} ", r.ranks) : "", o.out));
}

void Progress::step(const StepReport& r) {
  const io::LogRow& row = r.row;
  const double eta = row.iter > 0 ? row.seconds / row.iter * (r.total - row.iter) : NAN;
  const bool shown = row.step && !std::isnan(row.step->grad_norm);  // a step not applied may have none
  const std::string grad = !shown ? "" : fmt::format("  grad {:.3g}{}", row.step->grad_norm,
                                                          row.step->clip_scale < 1 ? " clipped" : "");
  const std::string peak = !row.step || std::isnan(row.step->peak_share) ? "" : fmt::format(" ({:.0f}% of peak)", 100 * row.step->peak_share);
  std::string line = fmt::format("iter {}/{}  loss {:.4f}{}  lr {:.2e}  {:.0f} tok/s{}  {} elapsed  ETA {}", row.iter,
                                 r.total, row.train_loss, grad, row.lr, row.tokens_per_s, peak,
                                 format_duration(row.seconds), format_duration(eta));
  if (row.val_loss) line += fmt::format("  val {:.4f}", *row.val_loss);
  if (terminal_) {
    if (row.val_loss) {
      fmt::print(out_, "\r\033[K{}\n", line);  // keep evaluations on screen
      live_ = false;
    } else {
      const int percent = static_cast<int>(100 * row.iter / std::max<int64_t>(1, r.total));
      fmt::print(out_, "\r\033[K{:3}% {}", percent, line);
      live_ = true;
    }
  } else if (row.val_loss || row.iter % every_ == 0 || row.iter == r.total) {
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
