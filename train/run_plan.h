#pragma once
// How a run starts, decided before its first step. A new run, a fine-tuning run from a checkpoint's
// weights (--init-from) and a resumed run (--resume) each read what they need and check all they can
// before any work (settings, where the outputs go, memory, the text and its tokenizer), and give
// one RunPlan. The Trainer (trainer.h) is built from a plan: one set-up, whichever way the run began.
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "../data/corpus.h"
#include "../nn/gpt.h"
#include "../optim/adamw.h"
#include "checkpoint.h"
#include "distributed.h"
#include "memory_budget.h"
#include "options.h"
#include "run_lock.h"

namespace tinygpt::train {

// What a resumed run changes; everything else continues as the checkpoint says. Only the settings
// in kResumeSettings (options.h) may be given: the steps already taken stay as they were, and the
// learning-rate schedule changes from the resumed iteration on (the optimizer keeps its moments).
// Each change is printed and recorded in the checkpoint's /train changes.
struct Resume {
  TrainOptions options;         // the new values of the settings named in `given`
  std::set<std::string> given;  // flag names without "--": "iters", "lr", "data", "out", ...
  // Continue on text whose bytes differ from the checkpoint's (recorded), and replace what lies
  // at a new `out`. Without it, both are refused with what differs.
  bool force = false;

  Resume& set_iters(int64_t iters) { options.iters = iters, given.insert("iters"); return *this; }
};

// A new run that starts from a checkpoint's weights and tokenizer (fine-tuning): a fresh optimizer
// and schedule from iteration 0. The model's shape and tokenizer are the checkpoint's; options.block
// may shrink the context (wpe keeps its first rows) but never grow it.
struct InitFrom {
  std::string checkpoint;
  bool crop_block = false;  // true: options.block is the new context; false: the checkpoint's
};

// What a new run does with a checkpoint, log or plot (and best checkpoint) that another run left
// at options.out: refuse to start (the default), or replace them (--force).
enum class ExistingOutputs { refuse, replace };

struct RunPlan {
  RunStart start = RunStart::fresh;
  std::string source;    // the checkpoint it starts from (fine-tuning) or continues (resume), as given
  TrainOptions options;  // checked; every file it reads named by its absolute path
  TrainState state;      // where the run stands: iteration 0 for a new run
  data::Corpus corpus;   // the text, tokenized, with its tokenizer
  std::shared_ptr<nn::GPT> model;
  std::unique_ptr<optim::AdamW> optimizer;  // fresh, or with the checkpoint's moments and step
  RunLock lock;          // rank 0's, on options.out
  std::vector<std::string> changes;  // the lines a resume added to state.changes
  // What the log and metrics hold when the run starts (rank 0 writes them): nothing for a new
  // run, a resumed run's rows up to its checkpoint.
  std::vector<std::string> log_rows, metrics_lines;
  bool checkpoint_exists = false;  // options.out already holds this run's checkpoint (a resume in place)
};

// Every check of a start that reads nothing but its options and the files it names comes first; a
// refused plan has written nothing (rank 0 took, then released, the run's lock).
RunPlan plan_new_run(const TrainOptions& options, const Communicator& comm,
                     ExistingOutputs existing = ExistingOutputs::refuse);
RunPlan plan_fine_tuning(const TrainOptions& options, const InitFrom& init, const Communicator& comm,
                         ExistingOutputs existing = ExistingOutputs::refuse);
// Continues the run saved in `checkpoint`, writing to `checkpoint` itself (and the log and plot
// beside it) unless changes.options.out names another file: a path stored inside a file is never
// a place to write. The number of ranks must be the one the checkpoint was written by. The text
// is found at its stored absolute paths, or at changes.options.data / val_data; its bytes must be
// the checkpoint's unless changes.force.
RunPlan plan_resume(const std::string& checkpoint, const Resume& changes, const Communicator& comm);

// Rank r's seed for its batches and dropout masks; rank 0 keeps the run's seed, so a run of one
// process draws what rank 0 of any run draws.
uint64_t rank_seed(int64_t seed, int rank);

// The memory a run with this model needs: its training state and the token arrays of its text.
MemoryPlan run_memory_plan(const nn::GPTConfig& config, const TrainOptions& o);

}  // namespace tinygpt::train
