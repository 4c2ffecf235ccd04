// tinygpt prepare: text files into token shards in llm.c's format, with the tokenizer beside them,
// so that training reads tokens from disk instead of tokenizing its corpus at every start.
#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>

#include "tinygpt/autograd/parallel.h"
#include "tinygpt/data/bpe_tokenizer.h"
#include "tinygpt/data/corpus.h"
#include "tinygpt/data/sentencepiece_tokenizer.h"
#include "tinygpt/data/shards.h"
#include "tinygpt/data/text_files.h"
#include "tinygpt/io/output_files.h"
#include "tinygpt/io/sentencepiece_model.h"
#include "tinygpt/cli/commands.h"
#include "tinygpt/cli/flags.h"
#include "tinygpt/train/checkpoint.h"
#include "tinygpt/train/tokenizer_source.h"

namespace tinygpt::cli {

namespace {

struct PrepareArgs {
  std::vector<std::string> data, val_data;
  std::string out, name = "tinygpt", tokenizer = "char", tokenizer_from, tokenizer_model;
  int64_t vocab_size = 512, shard_tokens = 100'000'000;
  double val_fraction = 0.1;
  int64_t threads = 0;
  bool force = false;
  bool verbose = true;  // a line per shard written
};

// BPE merges are learned from at most this much text: the pair counts of a sample this size
// settle, and learning from tens of gigabytes would take hours.
constexpr int64_t kBpeSampleBytes = int64_t{100} << 20;

// Writes <name>_<split>_NNNNNN.bin shards of at most shard_tokens tokens as ids arrive: each shard
// is streamed into its file (the header's count filled in last), so memory stays flat.
class ShardWriter {
 public:
  ShardWriter(const PrepareArgs& a, std::string split, const data::TokenizerIdentity& tokenizer)
      : a_(a), split_(std::move(split)), tokenizer_(tokenizer), width_(data::shard_token_bytes(tokenizer.vocab_size)) {}
  void add(std::span<const int32_t> ids) {
    while (!ids.empty()) {
      if (!file_) open();
      const size_t take = std::min(ids.size(), static_cast<size_t>(a_.shard_tokens - in_shard_));
      const std::vector<char> payload = data::shard_payload(ids.first(take), width_);
      file_->write(payload.data(), payload.size());
      in_shard_ += static_cast<int64_t>(take), total_ += static_cast<int64_t>(take);
      ids = ids.subspan(take);
      if (in_shard_ == a_.shard_tokens) close();
    }
  }
  // Closes the last shard (an empty split still gets one, empty, shard); returns how many.
  int64_t finish() {
    if (file_ || shards_ == 0) {
      if (!file_) open();
      close();
    }
    return shards_;
  }
  int64_t tokens() const { return total_; }
  void skip_shard(int64_t tokens) { ++shards_, total_ += tokens; }  // a shard already on disk stays

 private:
  void open() {
    path_ = (std::filesystem::path(a_.out) / fmt::format("{}_{}_{:06d}.bin", a_.name, split_, shards_)).string();
    file_ = std::make_unique<io::AtomicFile>(path_, "shard");
    const std::array<int32_t, 256> header = data::shard_header(0, width_, &tokenizer_);
    file_->write(header.data(), sizeof header);
    in_shard_ = 0;
  }
  void close() {
    const std::array<int32_t, 256> header = data::shard_header(in_shard_, width_, &tokenizer_);
    file_->write_at(0, header.data(), sizeof header);  // little-endian on the machines tinygpt builds for
    file_->commit();
    file_.reset();
    ++shards_;
    if (a_.verbose) fmt::print("wrote {}: {} tokens\n", path_, in_shard_);
    std::fflush(stdout);
  }

  const PrepareArgs& a_;
  std::string split_, path_;
  data::TokenizerIdentity tokenizer_;
  int width_;
  std::unique_ptr<io::AtomicFile> file_;
  int64_t in_shard_ = 0, total_ = 0, shards_ = 0;
};

// Streams the files' tokens into `out`, each document (file) after document_start's token where
// the tokenizer has one; a live line of progress on a terminal.
void tokenize_into(const data::Tokenizer& tokenizer, const std::vector<std::string>& files, ShardWriter& out,
                   const char* what) {
  const auto total_bytes = static_cast<double>(data::regular_file_bytes(files));
  double done_bytes = 0;
  const bool terminal = isatty(fileno(stdout));
  const auto start = std::chrono::steady_clock::now();
  data::tokenize_in_order(tokenizer, files, [&](size_t, std::span<const int32_t> ids, size_t bytes) {
    out.add(ids);
    done_bytes += static_cast<double>(bytes);
    if (!terminal) return;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double rate = s > 0 ? done_bytes / s : 0;
    fmt::print("\r\033[K{}: {:.1f} of {:.1f} MB, {:.1f} MB/s, {} tokens, ETA {:.0f}s", what, done_bytes / 1e6,
               total_bytes / 1e6, rate / 1e6, out.tokens(), rate > 0 ? (total_bytes - done_bytes) / rate : 0.0);
    std::fflush(stdout);
  });
  if (terminal) fmt::print("\r\033[K");
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print("tokenized {:.1f} MB of {} text in {:.2f} s: {:.1f} MB/s on {} thread{}\n", done_bytes / 1e6, what, s,
             s > 0 ? done_bytes / 1e6 / s : 0.0, num_threads(), num_threads() == 1 ? "" : "s");
}

// Moves the last n tokens of the train shards into val shards: the train split is cut short (its
// last shard rewritten, whole shards past the cut removed), as train holds out --val-fraction.
int64_t hold_out_tail(const PrepareArgs& a, int64_t n, const data::TokenizerIdentity& tokenizer, ShardWriter& val) {
  const int64_t vocab = tokenizer.vocab_size;
  const std::vector<std::string> files = data::shard_files(a.out, "train");
  std::vector<int32_t> chunk(1 << 20);
  int64_t kept = 0;
  {
    const data::ShardSet train(files, vocab);
    kept = train.size() - n;
    for (int64_t at = kept; at < train.size(); at += static_cast<int64_t>(chunk.size())) {
      const int64_t take = std::min<int64_t>(static_cast<int64_t>(chunk.size()), train.size() - at);
      train.read(at, take, chunk.data());
      val.add(std::span<const int32_t>(chunk.data(), static_cast<size_t>(take)));
    }
    // The train split again, up to the cut: the same shards but the last ones.
    PrepareArgs rewrite = a;
    rewrite.verbose = false;
    ShardWriter again(rewrite, "train", tokenizer);
    const int64_t last_whole = kept / a.shard_tokens * a.shard_tokens;  // shards before it stay as they are
    for (int64_t s = 0; s < last_whole / a.shard_tokens; ++s) again.skip_shard(a.shard_tokens);
    for (int64_t at = last_whole; at < kept; at += static_cast<int64_t>(chunk.size())) {
      const int64_t take = std::min<int64_t>(static_cast<int64_t>(chunk.size()), kept - at);
      train.read(at, take, chunk.data());
      again.add(std::span<const int32_t>(chunk.data(), static_cast<size_t>(take)));
    }
    if (kept > last_whole) again.finish();
  }
  const size_t train_shards = static_cast<size_t>((kept + a.shard_tokens - 1) / a.shard_tokens);
  for (size_t s = std::max<size_t>(train_shards, 1); s < files.size(); ++s) std::filesystem::remove(files[s]);
  fmt::print("held out the last {} tokens for validation: the train split ends at token {}, in {} ({} shard{} "
             "removed)\n",
             n, kept, files.at(std::max<size_t>(train_shards, 1) - 1),
             files.size() - std::max<size_t>(train_shards, 1), files.size() - std::max<size_t>(train_shards, 1) == 1 ? "" : "s");
  return kept;
}

void prepare(const PrepareArgs& a) {
  std::error_code ec;
  if (std::filesystem::exists(a.out, ec) && !std::filesystem::is_directory(a.out, ec))
    throw std::invalid_argument(fmt::format("--out '{}' exists and is not a folder", a.out));
  const bool has_shards = !data::shard_files(a.out, "train").empty() || !data::shard_files(a.out, "val").empty();
  if (!a.force && (has_shards || std::filesystem::exists(std::filesystem::path(a.out) / "tokenizer.h5", ec)))
    throw std::invalid_argument(fmt::format("'{}' already holds shards or a tokenizer.h5: give --force to replace "
                                            "them, or choose another --out",
                                            a.out));
  if (!std::filesystem::exists(a.out, ec) && !std::filesystem::create_directories(a.out, ec))
    throw std::runtime_error(fmt::format("cannot create '{}': {}", a.out, ec.message()));
  for (const char* split : {"train", "val"})  // with --force: the old shards go, so that no stale one is read
    for (const std::string& old : data::shard_files(a.out, split)) std::filesystem::remove(old);
  std::shared_ptr<const data::Tokenizer> tokenizer;
  if ((a.tokenizer == "sentencepiece") != !a.tokenizer_model.empty())
    throw std::invalid_argument("--tokenizer sentencepiece and --tokenizer-model (a SentencePiece model file) go together");
  if (!a.tokenizer_from.empty()) {
    tokenizer = train::read_tokenizer_of(a.tokenizer_from);
  } else if (!a.tokenizer_model.empty()) {
    tokenizer = io::read_sentencepiece_file(a.tokenizer_model);
  } else {
    const int64_t bytes = data::regular_file_bytes(a.data);
    if (a.tokenizer == "bpe" && bytes > kBpeSampleBytes)
      fmt::print("learning BPE merges from the first {} MB of the {} MB of training text\n", kBpeSampleBytes >> 20,
                 bytes >> 20);
    tokenizer = data::make_tokenizer({.files = a.data, .val_files = a.val_data, .tokenizer = a.tokenizer,
                                      .vocab_size = a.vocab_size},
                                     kBpeSampleBytes);
  }
  const data::TokenizerIdentity identity = tokenizer->identity();
  const int64_t vocab = tokenizer->vocab_size();
  ShardWriter train(a, "train", identity), val(a, "val", identity);
  tokenize_into(*tokenizer, a.data, train, "train");
  int64_t train_shards = train.finish(), train_tokens = train.tokens();
  if (!a.val_data.empty()) {
    tokenize_into(*tokenizer, a.val_data, val, "val");
  } else if (const int64_t n_val = data::validation_tokens(train_tokens, a.val_fraction); n_val > 0) {
    train_tokens = hold_out_tail(a, n_val, identity, val);
    train_shards = static_cast<int64_t>(data::shard_files(a.out, "train").size());
  }
  const int64_t val_shards = val.tokens() > 0 || !a.val_data.empty() ? val.finish() : 0;
  train::write_tokenizer_file((std::filesystem::path(a.out) / "tokenizer.h5").string(), *tokenizer);
  fmt::print("prepared {}: {} training tokens in {} shard{}, {} validation tokens in {}; {} tokenizer, {} tokens "
             "(tokenizer.h5); train on it with: tinygpt train --data {}\n",
             a.out, train_tokens, train_shards, train_shards == 1 ? "" : "s", val.tokens(), val_shards,
             tokenizer->kind(), vocab, a.out);
}

}  // namespace

void add_prepare(CLI::App& app) {
  auto args = std::make_shared<PrepareArgs>();
  CLI::App* cmd = app.add_subcommand(
      "prepare", "tokenize text files once into token shards (llm.c's format) and their tokenizer, for train --data DIR");
  cmd->add_option("--data", args->data, "text files to tokenize for training")->required();
  cmd->add_option("--val-data", args->val_data, "text files for the validation shards (default: the last --val-fraction)");
  add_number(cmd, "--val-fraction", args->val_fraction, io::Range{0, 1, false, true},
             "share of the tokens for the validation shards when --val-data is not given");
  cmd->add_option("--out", args->out, "folder for the shards and tokenizer.h5 (made if missing)")->required();
  cmd->add_option("--name", args->name, "the shards' name: <name>_train_000000.bin, ...")->capture_default_str();
  cmd->add_option("--tokenizer", args->tokenizer, "how text becomes tokens")
      ->type_name("char|bpe|sentencepiece")
      ->check(CLI::IsMember({"char", "bpe", "sentencepiece"}))
      ->capture_default_str();
  add_number(cmd, "--vocab-size", args->vocab_size, io::Range{256, 1 << 24}, "BPE vocabulary size");
  cmd->add_option("--tokenizer-model", args->tokenizer_model,
                  "with --tokenizer sentencepiece: the SentencePiece model file (e.g. Llama's tokenizer.model)");
  cmd->add_option("--tokenizer-from", args->tokenizer_from,
                  "use this checkpoint's or tokenizer file's tokenizer (e.g. an imported GPT-2's) instead of making one");
  add_number(cmd, "--shard-tokens", args->shard_tokens, io::Range{1, 2147483647.0}, "tokens per shard");
  cmd->add_flag("--force", args->force, "replace the shards and tokenizer.h5 that --out already holds");
  add_number(cmd, "--threads", args->threads, train::kThreadRange, "worker threads (0: all cores)");
  cmd->callback([args] {
    set_num_threads(static_cast<int>(args->threads));
    prepare(*args);
  });
}

}  // namespace tinygpt::cli
