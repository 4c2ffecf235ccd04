#pragma once
// Everything a training run is configured by. The same list of fields binds the command-line
// flags and is stored in (and restored from) the checkpoint's /train group.
#include <cstdint>
#include <string>
#include <vector>

namespace tinygpt::train {

// The Debian `fortunes` package's plain-text files: the corpus used when --data is not given.
constexpr const char* kDefaultCorpusDir = "/usr/share/games/fortunes";

struct TrainOptions {
  std::vector<std::string> data, val_data;
  double val_fraction = 0.1;
  std::string out = "tinygpt.h5";
  std::string tokenizer = "char";
  int64_t vocab_size = 512;
  int64_t layers = 4, heads = 4, embd = 128, block = 64;
  double dropout = 0.0;
  int64_t batch = 12, iters = 2000;
  double lr = 1e-3, min_lr = 1e-4;
  int64_t warmup = 100;
  double weight_decay = 0.1, grad_clip = 1.0;
  int64_t grad_accum = 1;
  int64_t eval_every = 250, eval_iters = 20, ckpt_every = 500, log_every = 10;
  int64_t seed = 1337, threads = 0;
};

// visit(flag_name, field, help) for every option: one list for the CLI and the checkpoint.
template <class Options, class Visit>
void for_each_option(Options& o, Visit&& visit) {
  visit("data", o.data, "training text files (default: the fortunes package's files)");
  visit("val-data", o.val_data, "validation text files (default: the last --val-fraction of the training tokens)");
  visit("val-fraction", o.val_fraction, "share of the training tokens held out for validation");
  visit("out", o.out, "checkpoint to write (HDF5); the CSV log and loss plot go beside it");
  visit("tokenizer", o.tokenizer, "char or bpe");
  visit("vocab-size", o.vocab_size, "BPE vocabulary size (at least 256)");
  visit("layers", o.layers, "transformer blocks");
  visit("heads", o.heads, "attention heads per block");
  visit("embd", o.embd, "embedding width (a multiple of --heads)");
  visit("block", o.block, "context length in tokens");
  visit("dropout", o.dropout, "dropout probability");
  visit("batch", o.batch, "sequences per micro-batch");
  visit("iters", o.iters, "total training iterations");
  visit("lr", o.lr, "peak learning rate");
  visit("min-lr", o.min_lr, "learning rate at the end of the cosine decay");
  visit("warmup", o.warmup, "linear warm-up iterations");
  visit("weight-decay", o.weight_decay, "AdamW decoupled weight decay (weights and embeddings only)");
  visit("grad-clip", o.grad_clip, "clip the global gradient norm to this (0: off)");
  visit("grad-accum", o.grad_accum, "micro-batches per iteration");
  visit("eval-every", o.eval_every, "iterations between validation-loss estimates");
  visit("eval-iters", o.eval_iters, "batches per validation-loss estimate");
  visit("ckpt-every", o.ckpt_every, "iterations between checkpoints");
  visit("log-every", o.log_every, "iterations between progress lines when not on a terminal");
  visit("seed", o.seed, "seed for initialization, batches and dropout");
  visit("threads", o.threads, "worker threads (0: all cores)");
}

// Throws a clear error for impossible settings (zero sizes, n_embd % n_head, ranges).
void validate(const TrainOptions& o);

// The fortunes files (sorted) when `data` is empty, else `data`.
std::vector<std::string> training_files(const TrainOptions& o);

}  // namespace tinygpt::train
