#include "spike_guard.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace tinygpt::train {

SpikeGuard::SpikeGuard(SpikeOptions options) { set_options(options); }

void SpikeGuard::set_options(SpikeOptions options) {
  if (options.window < 1 || options.patience < 1)
    throw std::invalid_argument(fmt::format("spike guard: window {} and patience {} must be at least 1",
                                            options.window, options.patience));
  options_ = options;
  state_.history.reserve(static_cast<size_t>(options.window));
  scratch_.reserve(static_cast<size_t>(options.window));
}

void SpikeGuard::set_state(State state) {
  if (state.history.size() > static_cast<size_t>(options_.window) || state.in_a_row < 0 || state.skipped < state.in_a_row)
    throw std::invalid_argument(fmt::format("spike guard: a history of {} steps ({} skipped in a row, {} in all) does "
                                            "not fit a window of {}",
                                            state.history.size(), state.in_a_row, state.skipped, options_.window));
  for (const Step& s : state.history)
    if (!std::isfinite(s.loss) || !std::isfinite(s.grad_norm) || s.loss < 0 || s.grad_norm < 0)
      throw std::invalid_argument("spike guard: its history holds a step that is not a finite loss and norm");
  state_ = std::move(state);
  state_.history.reserve(static_cast<size_t>(options_.window));
}

double SpikeGuard::median(bool of_loss) {
  scratch_.clear();
  for (const Step& s : state_.history) scratch_.push_back(of_loss ? s.loss : s.grad_norm);
  const auto middle = scratch_.begin() + static_cast<std::ptrdiff_t>(scratch_.size() / 2);
  std::nth_element(scratch_.begin(), middle, scratch_.end());
  return *middle;
}

std::optional<std::string> SpikeGuard::judge(double loss, double grad_norm) {
  std::optional<std::string> why;
  if (!std::isfinite(loss)) why = fmt::format("the training loss became {}", std::isnan(loss) ? "nan" : "inf");
  else if (!std::isfinite(grad_norm)) why = fmt::format("the gradient norm became {}", grad_norm);
  const bool judged = static_cast<int64_t>(state_.history.size()) >= kMinHistory;
  auto spike = [&](double value, double factor, bool of_loss, const char* what, const char* flag) {
    if (why || !judged || factor <= 0) return;
    const double reference = median(of_loss);
    if (value > factor * reference)
      why = fmt::format("{} {:.4g} is {:.4g}x the median {:.4g} of the last {} steps ({} {:g})", what, value,
                        value / reference, reference, state_.history.size(), flag, factor);
  };
  spike(loss, options_.loss_factor, true, "the loss", "--spike-loss");
  spike(grad_norm, options_.grad_factor, false, "the gradient norm", "--spike-grad");
  if (why) {
    ++state_.in_a_row, ++state_.skipped;
    return why;
  }
  state_.in_a_row = 0;
  if (static_cast<int64_t>(state_.history.size()) == options_.window) state_.history.erase(state_.history.begin());
  state_.history.push_back({loss, grad_norm});
  return std::nullopt;
}

std::vector<std::string> guard_lines(const SpikeGuard::State& state) {
  std::vector<std::string> lines = {fmt::format("skipped {} {}", state.in_a_row, state.skipped)};
  for (const SpikeGuard::Step& s : state.history) lines.push_back(fmt::format("{:a} {:a}", s.loss, s.grad_norm));
  return lines;
}

SpikeGuard::State parse_guard_lines(const std::vector<std::string>& lines) {
  constexpr size_t kMaxLines = 100001;  // the largest --spike-window, and the counts' line
  if (lines.empty() || lines.size() > kMaxLines)
    throw std::invalid_argument(fmt::format("{} lines, not 1 to {}", lines.size(), kMaxLines));
  SpikeGuard::State state;
  long long in_a_row = -1, skipped = -1;
  int used = 0;
  if (std::sscanf(lines[0].c_str(), "skipped %lld %lld%n", &in_a_row, &skipped, &used) != 2 ||
      static_cast<size_t>(used) != lines[0].size() || in_a_row < 0 || skipped < in_a_row)
    throw std::invalid_argument(fmt::format("line 1 is not 'skipped <in a row> <in all>': '{}'", lines[0]));
  state.in_a_row = in_a_row, state.skipped = skipped;
  for (size_t i = 1; i < lines.size(); ++i) {
    const char* text = lines[i].c_str();
    char* end = nullptr;
    const double loss = std::strtod(text, &end);
    const bool space = *end == ' ';
    const double norm = space ? std::strtod(end + 1, &end) : NAN;
    if (!space || *end != '\0' || !std::isfinite(loss) || !std::isfinite(norm) || loss < 0 || norm < 0)
      throw std::invalid_argument(fmt::format("line {} is not '<loss> <gradient norm>': '{}'", i + 1, lines[i]));
    state.history.push_back({loss, norm});
  }
  return state;
}

}  // namespace tinygpt::train
