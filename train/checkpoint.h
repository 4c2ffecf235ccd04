#pragma once
// HDF5 checkpoints in the layout of docs/checkpoint-format.md:
//   /                 format = "tinygpt", format_version = 1, 2 or 3: the lowest that holds the run
//                     (2: a tokenizer with byte_ids or special tokens; 3: a Llama-family /config
//                     field off its default, or a SentencePiece tokenizer); all three are read
//   /config           vocab_size, block_size, n_layer, n_head, n_embd (version 3: norm, position,
//                     mlp, n_kv_head, ... )
//   /model/<name>     float32, nanoGPT's state_dict names and PyTorch's [out, in] layout
//   /tokenizer        kind = "char" (vocab), "bpe" (merges, split, byte_ids, special tokens) or
//                     "sentencepiece" (the model's bytes); its digest
//   /optim            m/<name>, v/<name>; step and hyperparameters as attributes
//   /train            iteration, RNG state, run options, losses, the text's files: what an exact
//                     resume needs
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "../autograd/random.h"
#include "../data/tokenizer.h"
#include "../nn/gpt.h"
#include "../optim/adamw.h"
#include "spike_guard.h"
#include "data_identity.h"
#include "options.h"

namespace tinygpt::train {

struct TrainState {
  int64_t iteration = 0;           // completed iterations
  // The training batch samplers' RNGs, one per rank (one process: one); /train's rng_state holds
  // rank 0's, rank_rng_states [world_size, 4] all of them when the run had several ranks.
  std::vector<Rng::State> sampler_states{Rng::State{}};
  uint64_t dropout_counter = 0;
  double train_loss = 0, val_loss = 0;  // the last ones logged (val: the last estimate; NaN if none)
  int64_t tokens_seen = 0;
  double seconds = 0;              // training time so far
  int64_t train_tokens = 0, val_tokens = 0;  // to notice data that changed before a resume
  std::vector<DataFile> data_files;  // the text, file by file (absent from files written before they were kept)
  double best_val_loss = NAN;        // the lowest validation loss so far (NaN: none yet)
  bool eval_pending = false;         // a signal cut short the evaluation at `iteration`: a resume does it first
  std::string init_from;             // a fine-tuning run's starting checkpoint (absolute path); empty: fresh weights
  std::vector<std::string> given;    // the settings the run's command line (or settings file) gave, by flag name
  std::vector<std::string> changes;  // one line for each setting changed on resume, and for moved or changed text
  SpikeGuard::State guard;           // the loss-spike guard's history (empty in files written before it was kept)
  TrainOptions options;
};

struct Checkpoint {
  nn::GPTConfig config;
  std::shared_ptr<nn::GPT> model;  // with the checkpoint's weights
  std::shared_ptr<const data::Tokenizer> tokenizer;
  std::optional<optim::AdamWOptions> optim;  // absent in a weights-only file
  int64_t optim_step = 0;
  std::map<std::string, Tensor> m, v;
  std::optional<TrainState> train;
  bool sealed = false;  // its seal (io/hdf5_seal.h) matched; false: a file without one, parsed with care
};

// Writes atomically: a new temporary file in the same folder, sealed with the SHA-256 of its bytes,
// flushed to disk, then renamed over `path`, so a crash or kill mid-write never destroys the
// previous checkpoint. Refuses to replace a file that is not a checkpoint, and to write weights or
// moments that are not finite (the error names the tensor).
void write_checkpoint(const std::string& path, const nn::GPT& model, const data::Tokenizer& tokenizer,
                      const optim::AdamW* optimizer, const TrainState* state);

// Reads and checks everything before it is used: the seal (a damaged file is refused before libhdf5
// parses it; a file without a seal is parsed first in a child process), every size and number
// against its range, /config against the datasets' shapes before the model is built, weights and
// moments finite, generator states non-zero. Any problem is one error naming the file and item.
//
// CheckpointPart::weights reads the model, its tokenizer and the run's state but not the optimizer's
// moments (their names and shapes are checked; optim stays absent, m and v empty), and lets libhdf5 read them from disk: memory holds the
// weights, not the file (a sealed file's seal is checked by streaming it; one without a seal is
// still read whole).
enum class CheckpointPart { everything, weights };
Checkpoint read_checkpoint(const std::string& path, CheckpointPart part = CheckpointPart::everything);

// A tokenizer alone, in a checkpoint's /tokenizer layout under a root whose format is
// "tinygpt-tokenizer": the file `tinygpt prepare` leaves beside its shards (docs/data-format.md).
void write_tokenizer_file(const std::string& path, const data::Tokenizer& tokenizer);
// The tokenizer of a tokenizer file or of a checkpoint (its /tokenizer alone: no weights are read).
// (Anything else that holds one: tokenizer_source.h.)
std::shared_ptr<const data::Tokenizer> read_tokenizer_file(const std::string& path);

}  // namespace tinygpt::train
