#pragma once
// Who hears of a run as it goes. On rank 0 the loop tells its reporters of every step, then of the
// evaluation it ended with, and of the lines the loop itself writes (a sample, a step not applied,
// an evaluation cut short); before the first step, of what the run is, and at its end, of how it
// ended. The log files (log_files.h) hear first; the console's Progress is another, and the
// command line adds the loss plot's.
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "../io/run_log.h"
#include "options.h"

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

// The run as it begins: told once, before its first step.
struct StartReport {
  RunStart start;
  std::string source;  // the checkpoint a fine-tuning run starts from, as given
  const TrainOptions& options;
  int ranks;
  int64_t iteration;   // where the run stands
  int64_t parameters;
  std::string tokenizer;  // its kind's name
  int64_t vocab_size, train_tokens, val_tokens;
  std::string memory;  // the memory plan, described (memory_budget.h)
  std::vector<std::string> changes;  // those a resume made
  std::string log;
};

// The run as it ends without an error: finished, or stopped with its checkpoint saved.
struct EndReport {
  enum class How { finished, stopped, paused } how;  // stopped: by a signal; paused: where the caller asked
  int signal;  // stopped: the signal this process got (0: one that another rank got)
  const TrainOptions& options;
  int ranks;
  int64_t iteration;
  double train_loss, val_loss, best_val_loss;  // best: NaN when none is kept
  std::string best;  // the best checkpoint's path (keep_best)
};

class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual void start(const StartReport&) {}
  virtual void end(const EndReport&) {}
  virtual void step(const StepReport&) {}
  virtual void evaluation(const EvaluationReport&) {}
  virtual void message(const std::string&) {}  // a line of its own
};

// Several reporters as one, each told in the order given.
class Reporters : public Reporter {
 public:
  Reporters(std::initializer_list<Reporter*> all) : all_(all) {}
  void start(const StartReport& r) override {
    for (Reporter* each : all_) each->start(r);
  }
  void end(const EndReport& r) override {
    for (Reporter* each : all_) each->end(r);
  }
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
