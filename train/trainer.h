#pragma once
// The training loop: batches -> forward -> loss -> backward -> clip -> AdamW, with validation
// estimates, a CSV log, checkpoints, and exact resume (every later loss bitwise identical).
// With several ranks (distributed.h) each draws its own batches, gradients are averaged before
// clipping, losses are averaged over ranks, and only rank 0 writes the log and checkpoints.
#include <cmath>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "../data/batches.h"
#include "../data/corpus.h"
#include "../io/run_log.h"
#include "../nn/gpt.h"
#include "../optim/adamw.h"
#include "../optim/schedule.h"
#include "checkpoint.h"
#include "distributed.h"
#include "interrupt.h"
#include "memory_budget.h"
#include "multiple_choice.h"
#include "reporter.h"
#include "run_lock.h"
#include "run_plan.h"
#include "spike_guard.h"

namespace tinygpt::train {

// Every Trainer holds its run's lock (run_lock.h) from construction to destruction, and never
// replaces a checkpoint, log or picture that another run left unless told to (`force`).
class Trainer {
 public:
  // The run a plan describes (run_plan.h); rank 0 writes the log and metrics it starts with.
  Trainer(RunPlan plan, Communicator comm);
  // The same for the three ways to start: plan_new_run, plan_fine_tuning and plan_resume.
  explicit Trainer(const TrainOptions& options, Communicator comm = Communicator::single(),
                   ExistingOutputs existing = ExistingOutputs::refuse)
      : Trainer(plan_new_run(options, comm, existing), comm) {}
  Trainer(const TrainOptions& options, const InitFrom& init, Communicator comm = Communicator::single(),
          ExistingOutputs existing = ExistingOutputs::refuse)
      : Trainer(plan_fine_tuning(options, init, comm, existing), comm) {}
  Trainer(const std::string& checkpoint, const Resume& changes, Communicator comm = Communicator::single())
      : Trainer(plan_resume(checkpoint, changes, comm), comm) {}

  enum class Outcome { finished, interrupted };
  // Trains up to options.iters, telling `report` (on rank 0, after the log files) of the run's
  // start, each step, evaluation and message, and its end; stops early, with a checkpoint, when
  // `interrupt` is raised or when iteration `pause_at` is complete (the run can then be resumed
  // from the checkpoint).
  Outcome run(Reporter& report, const InterruptWatch* interrupt = nullptr, int64_t pause_at = -1);

  // An evaluation at the current iteration, on every rank. With `interrupt`, the ranks ask together
  // after every batch whether a signal came, and the evaluation ends there: nullopt.
  struct Evaluation {
    double val_loss = NAN;  // the mean over eval_iters random validation batches (NaN: no validation text)
    std::optional<io::TaskColumns> task;  // with options.eval_task: its scores, each rank scoring a share
  };
  std::optional<Evaluation> evaluate(const InterruptWatch* interrupt = nullptr);
  double estimate_val_loss() { return evaluate()->val_loss; }
  // The flags (names without --) the run's command line or settings file gave, kept in its
  // checkpoint: a settings file of the run writes those that other flags would otherwise derive.
  void record_given_settings(const std::set<std::string>& names);
  const nn::GPT& model() const { return *model_; }
  const TrainState& state() const { return state_; }
  const data::Corpus& corpus() const { return corpus_; }
  const Communicator& communicator() const { return comm_; }
  std::string log_path() const;   // the CSV beside the checkpoint
  std::string metrics_path() const;  // its JSON-lines metrics (io/run_metrics.h)
  // What the last train_step did: gradient norm, clipping, update-to-weight ratios (tokens and
  // peak_share are filled in by run()).
  const io::StepColumns& last_step() const { return last_step_; }
  // What the run is estimated to hold at its peak (memory_budget.h), for the line at its start.
  const MemoryPlan& memory_plan() const { return memory_plan_; }
  std::string plot_path() const;  // its loss plot (SVG): the command line's reporter redraws it
  std::string best_path() const;  // with keep_best: the checkpoint of the lowest validation loss
  // The lines this resume added to state().changes (empty for a new run).
  const std::vector<std::string>& new_changes() const { return new_changes_; }
  void save();                   // a checkpoint of the current state at options.out
  // One optimizer step at learning rate `lr` (grad_accum micro-batches, clipping, AdamW); returns
  // the mean training loss. After the first steps it allocates nothing: memory is reused. A step
  // the spike guard judges (a loss or gradient not finite, or a spike) is not applied; run() logs
  // it and ends the run, unsaved, when the guard's patience is spent.
  double train_step(float lr);

 private:
  void prepare();  // the task, sampler, schedule and step's bookkeeping, once the plan is taken
  void save_to(const std::string& path);
  void log_sample(Reporter& report);
  // The checkpoints due after a step: the run's own, and a snapshot (on every rank).
  void save_due(bool stop);
  StartReport start_report() const;
  // Tells rank 0's reporters how the run ended: finished, or stopped by a signal (here or on
  // another rank), or paused where run() was asked to.
  Outcome ended(Reporter& report, EndReport::How how, const InterruptWatch* interrupt);
  // A step's row to the reporters (rank 0), with the lines that go with it and a sample when due.
  void report_step(Reporter& report, const io::LogRow& row, bool guard_stops);
  double validation_loss(const InterruptWatch* interrupt);
  std::optional<io::TaskColumns> score_task(const InterruptWatch* interrupt);
  bool stop_asked(const InterruptWatch* interrupt) const;  // on every rank, together
  // A step's FLOP/s over the FMA peak of the cores the run uses. The peak is timed at the start and
  // raised to any rate a step reaches (a start on a busy machine times it low): never above 1.
  double peak_share(double tokens_per_s);
  std::string task_line(const io::TaskColumns& task) const;  // the progress line of a task's scores
  std::string cut_short_line() const;  // the progress line of an evaluation a signal cut short
  std::string guard_stop_message() const;  // the error when the spike guard's patience is spent
  void take_evaluation(const Evaluation& e);  // the validation loss checked, the best checkpoint kept
  // The evaluation that a signal cut short at the checkpoint's iteration, done before the next step:
  // its row in the log gains its scores. False when a signal cuts it short again.
  bool finish_pending_evaluation(Reporter& report, const InterruptWatch* interrupt);

  memory::Reuse reuse_;  // first in, last out: steps reuse the memory earlier steps freed
  Communicator comm_;
  TrainOptions options_;
  RunLock lock_;  // rank 0's, on options_.out
  std::vector<std::string> new_changes_;
  data::Corpus corpus_;
  std::shared_ptr<nn::GPT> model_;
  std::unique_ptr<optim::AdamW> optimizer_;
  std::unique_ptr<data::BatchSampler> sampler_;
  optim::LrSchedule schedule_;
  TrainState state_;
  std::vector<ChoiceExample> task_examples_;  // options.eval_task's, read and tokenized once
  ChoiceRows task_rows_;
  std::vector<int32_t> inputs_, targets_;
  std::vector<Tensor> parameters_;  // the model's, listed once
  std::vector<size_t> update_groups_;  // io::kUpdateGroups index of each parameter
  io::StepColumns last_step_;
  MemoryPlan memory_plan_;
  bool last_skipped_ = false;
  bool checkpoint_saved_ = false;  // a checkpoint of this run exists at options_.out
  RunStart start_;      // how the run began
  std::string source_;  // the checkpoint it began from, as given
  std::string skip_reason_;  // why the last step was not applied
  SpikeGuard guard_;
  double flops_per_token_ = 0, peak_flops_ = 0;  // for the share of the FMA peak
  Buffer flat_grads_;               // every gradient in one buffer, for averaging over ranks
};

}  // namespace tinygpt::train
