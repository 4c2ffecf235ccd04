#pragma once
// Who hears of a run as it goes. On rank 0 the loop tells its reporters of every step, then of the
// evaluation it ended with, and of the lines the loop itself writes (a sample, a step not applied,
// an evaluation cut short). The log files (log_files.h) hear first; the console's Progress is
// another, and the command line adds the loss plot's. The start-of-run lines (sizes, memory plan,
// changes) are the caller's.
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "../io/run_log.h"

namespace tinygpt::train {

struct StepReport {
  io::LogRow row;  // the step's row of the log: row.iter iterations are complete
  int64_t total;   // the run's iterations
};

struct EvaluationReport {
  int64_t iteration;
  double val_loss;
  std::optional<io::TaskColumns> task;
  bool late = false;  // finished on resume, after a signal cut it short: its step was reported before
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
