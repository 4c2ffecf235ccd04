#include "train/options.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>

namespace tinygpt::train {

void validate(const TrainOptions& o) {
  auto positive = [](int64_t v, const char* flag) {
    if (v <= 0) throw std::invalid_argument(fmt::format("--{} must be positive, got {}", flag, v));
  };
  positive(o.layers, "layers");
  positive(o.heads, "heads");
  positive(o.embd, "embd");
  positive(o.block, "block");
  positive(o.batch, "batch");
  positive(o.iters, "iters");
  positive(o.grad_accum, "grad-accum");
  positive(o.eval_every, "eval-every");
  positive(o.eval_iters, "eval-iters");
  positive(o.ckpt_every, "ckpt-every");
  positive(o.log_every, "log-every");
  if (o.embd % o.heads != 0)
    throw std::invalid_argument(fmt::format("--embd {} is not divisible by --heads {}", o.embd, o.heads));
  if (o.tokenizer != "char" && o.tokenizer != "bpe")
    throw std::invalid_argument(fmt::format("--tokenizer must be char or bpe, got '{}'", o.tokenizer));
  if (o.tokenizer == "bpe" && o.vocab_size < 256)
    throw std::invalid_argument(fmt::format("--vocab-size {} is below 256 (the byte tokens)", o.vocab_size));
  if (!(o.dropout >= 0 && o.dropout < 1)) throw std::invalid_argument(fmt::format("--dropout {} is not in [0, 1)", o.dropout));
  if (!(o.val_fraction >= 0 && o.val_fraction < 1))
    throw std::invalid_argument(fmt::format("--val-fraction {} is not in [0, 1)", o.val_fraction));
  if (!(o.lr > 0) || o.min_lr < 0 || o.min_lr > o.lr)
    throw std::invalid_argument(fmt::format("learning rates must satisfy 0 <= --min-lr <= --lr, 0 < --lr (got {} and {})",
                                            o.min_lr, o.lr));
  if (o.warmup < 0) throw std::invalid_argument("--warmup must not be negative");
  if (o.weight_decay < 0 || o.grad_clip < 0) throw std::invalid_argument("--weight-decay and --grad-clip must not be negative");
  if (o.threads < 0) throw std::invalid_argument("--threads must not be negative");
}

std::vector<std::string> training_files(const TrainOptions& o) {
  if (!o.data.empty()) return o.data;
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(kDefaultCorpusDir, ec))
    if (entry.is_regular_file() && !entry.path().has_extension()) files.push_back(entry.path().string());
  if (files.empty())
    throw std::runtime_error(fmt::format("no --data given and no default corpus in {} (install the Debian package "
                                         "'fortunes', or name text files with --data)",
                                         kDefaultCorpusDir));
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace tinygpt::train
