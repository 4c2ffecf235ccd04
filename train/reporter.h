#pragma once
// Who hears of a run as it goes. On rank 0 the loop tells its reporter of every evaluation (once
// the log holds it), then of the step it ended, and of the lines the loop itself writes (a sample,
// a step not applied, an evaluation cut short): the console's Progress is one, and the command line
// adds the loss plot's. The start-of-run lines (sizes, memory plan, changes) are the caller's.
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "../io/run_log.h"

namespace tinygpt::train {

struct StepReport {
  int64_t iteration, total;  // iteration: completed ones
  double train_loss, lr, tokens_per_s, elapsed_s;
  std::optional<double> val_loss;
  double grad_norm = NAN;   // before clipping; NaN: not shown
  bool clipped = false;
  double peak_share = NAN;  // of the CPU's FMA peak; NaN: not shown
};

struct EvaluationReport {
  int64_t iteration;
  double val_loss;
  std::optional<io::TaskColumns> task;
};

class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual void step(const StepReport&) {}
  virtual void evaluation(const EvaluationReport&) {}
  virtual void message(const std::string&) {}  // a line of its own
};

// Several reporters as one, each told in the order given.
class Reporters : public Reporter {
 public:
  Reporters(std::initializer_list<Reporter*> all) : all_(all) {}
  void step(const StepReport& r) override {
    for (Reporter* each : all_) each->step(r);
  }
  void evaluation(const EvaluationReport& e) override {
    for (Reporter* each : all_) each->evaluation(e);
  }
  void message(const std::string& text) override {
    for (Reporter* each : all_) each->message(text);
  }

 private:
  std::vector<Reporter*> all_;
};

}  // namespace tinygpt::train
