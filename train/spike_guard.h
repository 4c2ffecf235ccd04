#pragma once
// The loss-spike guard. A step whose loss or gradient norm is not finite, or is more than a factor
// above the median of the recent applied steps', is not applied: the weights and the optimizer
// stay as they were and the run goes on with the next batch. After `patience` such steps in a row
// the run stops with an error, keeping its last checkpoint. Its history is part of a checkpoint,
// so that a resumed run judges every step as the straight run does.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tinygpt::train {

struct SpikeOptions {
  double loss_factor = 1.5;   // 0: losses are judged only for being finite
  double grad_factor = 10.0;  // 0: gradient norms likewise
  int64_t window = 50;        // applied steps whose median is the reference
  int64_t patience = 5;       // skipped steps in a row that stop the run
};

class SpikeGuard {
 public:
  // Steps judged against a median need this many applied steps before them.
  static constexpr int64_t kMinHistory = 5;

  struct Step {
    double loss, grad_norm;
  };
  struct State {
    std::vector<Step> history;  // the last `window` applied steps, oldest first
    int64_t in_a_row = 0;       // skipped steps since the last applied one
    int64_t skipped = 0;        // skipped steps in the whole run
  };

  explicit SpikeGuard(SpikeOptions options = {});
  // Whether to apply a step: nullopt (then it joins the history), or why not ("loss 9.07 is 2.4x the
  // median 3.80 of the last 50 steps (--spike-loss 1.5)").
  std::optional<std::string> judge(double loss, double grad_norm);
  bool exhausted() const { return state_.in_a_row >= options_.patience; }  // the run must stop

  const State& state() const { return state_; }
  void set_state(State state);  // throws when it holds more than `window` steps or a non-finite one
  void set_options(SpikeOptions options);  // a resume's new factors and patience (same window)

 private:
  double median(bool of_loss);
  SpikeOptions options_;
  State state_;
  std::vector<double> scratch_;  // for the medians, reserved once
};

// The state as text lines for a checkpoint: "skipped <in a row> <in all>", then "<loss> <grad_norm>"
// per step of the history in hexadecimal floating point (exact). parse_guard_lines throws
// std::invalid_argument naming the line it cannot read.
std::vector<std::string> guard_lines(const SpikeGuard::State& state);
SpikeGuard::State parse_guard_lines(const std::vector<std::string>& lines);

}  // namespace tinygpt::train
