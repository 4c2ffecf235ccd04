#pragma once
// The training loop: batches -> forward -> loss -> backward -> clip -> AdamW, with validation
// estimates, a CSV log, checkpoints, and exact resume (every later loss bitwise identical).
#include <memory>
#include <optional>
#include <string>

#include "data/batches.h"
#include "data/corpus.h"
#include "nn/gpt.h"
#include "optim/adamw.h"
#include "optim/schedule.h"
#include "train/checkpoint.h"
#include "train/interrupt.h"
#include "train/progress.h"

namespace tinygpt::train {

class Trainer {
 public:
  // A new run: tokenizer from the data, a freshly initialized model.
  explicit Trainer(const TrainOptions& options);
  // Continues the run saved in `checkpoint`; `iters` may change the total (nothing else may).
  Trainer(const std::string& checkpoint, std::optional<int64_t> iters);

  enum class Outcome { finished, interrupted };
  // Trains up to options.iters; stops early, with a checkpoint, when `interrupt` is raised or
  // when iteration `pause_at` is complete (the run can then be resumed from the checkpoint).
  Outcome run(Progress& progress, const InterruptWatch* interrupt = nullptr, int64_t pause_at = -1);

  double estimate_val_loss();  // mean loss over eval_iters random validation batches
  const nn::GPT& model() const { return *model_; }
  const TrainState& state() const { return state_; }
  const data::Corpus& corpus() const { return corpus_; }
  std::string log_path() const;   // the CSV beside the checkpoint
  std::string plot_path() const;  // its loss plot (SVG), refreshed at every evaluation
  void save();                   // a checkpoint of the current state at options.out
  // One optimizer step at learning rate `lr` (grad_accum micro-batches, clipping, AdamW); returns
  // the mean training loss. After the first steps it allocates nothing: memory is reused.
  double train_step(float lr);

 private:
  void prepare();  // sampler, schedule and log, once the state is known

  memory::Reuse reuse_;  // first in, last out: steps reuse the memory earlier steps freed
  TrainOptions options_;
  data::Corpus corpus_;
  std::shared_ptr<nn::GPT> model_;
  std::unique_ptr<optim::AdamW> optimizer_;
  std::unique_ptr<data::BatchSampler> sampler_;
  optim::LrSchedule schedule_;
  TrainState state_;
  std::vector<int32_t> inputs_, targets_;
  std::vector<Tensor> parameters_;  // the model's, listed once
};

}  // namespace tinygpt::train
