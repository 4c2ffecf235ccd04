// tinygpt prepare: text files into token shards in llm.c's format, with the tokenizer beside them,
// so that training reads tokens from disk instead of tokenizing its corpus at every start.
#include <fmt/format.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>
#include <span>

#include "../autograd/threads.h"
#include "commands.h"
#include "flags.h"
#include "../data/corpus.h"
#include "../data/input_file.h"
#include "../data/shards.h"
#include "../data/text_files.h"
#include "../io/output_files.h"
#include "../io/sentencepiece_model.h"
#include "../io/staged_folder.h"
#include "../nn/gpt.h"
#include "../train/checkpoint.h"
#include "../train/existing_outputs.h"
#include "../train/progress.h"
#include "../train/run_data.h"
#include "../train/run_lock.h"
#include "../train/tokenizer_source.h"

namespace tinygpt::cli {

namespace {

namespace fs = std::filesystem;

struct PrepareArgs {
  std::vector<std::string> data, val_data;
  std::string out, name = "tinygpt", tokenizer_from, tokenizer_model;
  data::TokenizerKind tokenizer = data::TokenizerKind::chars;
  int64_t vocab_size = 512, shard_tokens = 100'000'000;
  double val_fraction = 0.1;
  int64_t threads = 0;
  bool force = false;
  std::set<std::string> given;  // the flags on the command line, without "--"
};

// BPE merges are learned from at most this much text: the pair counts of a sample this size
// settle, and learning from tens of gigabytes would take hours.
constexpr int64_t kBpeSampleBytes = int64_t{100} << 20;

// Writes <name>_<split>_NNNNNN.bin shards of at most shard_tokens tokens as ids arrive: each shard
// is streamed into its file (the header's count filled in last), so memory stays flat.
class ShardWriter {
 public:
  ShardWriter(const PrepareArgs& a, std::string dir, std::string split, const data::TokenizerIdentity& tokenizer)
      : a_(a), dir_(std::move(dir)), split_(std::move(split)), tokenizer_(tokenizer),
        width_(data::shard_token_bytes(tokenizer.vocab_size)) {}
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
  // Closes the last shard (an empty split still gets one, empty, shard).
  void finish() {
    if (file_ || shards_ == 0) {
      if (!file_) open();
      close();
    }
  }
  int64_t tokens() const { return total_; }
  int64_t shards() const { return shards_; }

 private:
  void open() {
    const std::string path = (fs::path(dir_) / fmt::format("{}_{}_{:06d}.bin", a_.name, split_, shards_)).string();
    file_ = std::make_unique<io::AtomicFile>(path, "shard");
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
  }

  const PrepareArgs& a_;
  std::string dir_, split_;
  data::TokenizerIdentity tokenizer_;
  int width_;
  std::unique_ptr<io::AtomicFile> file_;
  int64_t in_shard_ = 0, total_ = 0, shards_ = 0;
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Streams the files' tokens into `out` (the document token between files), with a live line.
void tokenize_into(const data::Tokenizer& tokenizer, const std::vector<std::string>& files, ShardWriter& out,
                   const char* what, train::LiveLine& live) {
  const auto total_bytes = static_cast<double>(data::regular_file_bytes(files));
  double done_bytes = 0;
  const auto start = std::chrono::steady_clock::now();
  data::tokenize_in_order(tokenizer, files, [&](size_t, std::span<const int32_t> ids, size_t bytes) {
    out.add(ids);
    done_bytes += static_cast<double>(bytes);
    const double s = seconds_since(start), rate = s > 0 ? done_bytes / s : 0;
    live.show(fmt::format("{}: {:.1f} of {:.1f} MB, {:.1f} MB/s, {} tokens, ETA {:.0f}s", what, done_bytes / 1e6,
                          total_bytes / 1e6, rate / 1e6, out.tokens(),
                          rate > 0 ? (total_bytes - done_bytes) / rate : 0.0));
  });
  const double s = seconds_since(start);
  live.message(fmt::format("tokenized {:.1f} MB of {} text into {} tokens in {:.2f} s: {:.1f} MB/s on {} thread{}",
                           done_bytes / 1e6, what, out.tokens(), s, s > 0 ? done_bytes / 1e6 / s : 0.0, num_threads(),
                           num_threads() == 1 ? "" : "s"));
}

// Cuts the shard at `path` to its first `tokens`: its header rewritten, the rest truncated away,
// synced. Only for a shard of the staging folder, which nobody sees before it is whole.
void cut_shard(const std::string& path, int64_t tokens, const data::TokenizerIdentity& tokenizer) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  const auto fail = [&](const char* doing) {
    const int error = errno;
    if (fd >= 0) ::close(fd);
    throw std::runtime_error(fmt::format("cannot cut shard '{}' short ({}): {}", path, doing, std::strerror(error)));
  };
  if (fd < 0) fail("open");
  const int width = data::shard_token_bytes(tokenizer.vocab_size);
  const std::array<int32_t, 256> header = data::shard_header(tokens, width, &tokenizer);
  if (::pwrite(fd, header.data(), sizeof header, 0) != static_cast<ssize_t>(sizeof header)) fail("write its header");
  if (::ftruncate(fd, static_cast<off_t>(sizeof header) + tokens * width) != 0) fail("truncate");
  if (::fsync(fd) != 0) fail("sync");
  ::close(fd);
}

// Moves the last n tokens of the train shards into val shards: the train split is cut short (the
// shard holding the cut cut short in place, whole shards past it removed), as train holds out
// --val-fraction.
void hold_out_tail(const PrepareArgs& a, const std::string& dir, int64_t n, const data::TokenizerIdentity& tokenizer,
                   ShardWriter& val) {
  const std::vector<std::string> files = data::shard_files(dir, "train");
  std::vector<int32_t> chunk(1 << 20);
  int64_t kept = 0;
  {
    const data::ShardSet train(files, tokenizer.vocab_size);
    kept = train.size() - n;
    for (int64_t at = kept; at < train.size(); at += static_cast<int64_t>(chunk.size())) {
      const int64_t take = std::min<int64_t>(static_cast<int64_t>(chunk.size()), train.size() - at);
      train.read(at, take, chunk.data());
      val.add(std::span<const int32_t>(chunk.data(), static_cast<size_t>(take)));
    }
  }
  const int64_t whole_shards = kept / a.shard_tokens;  // these stay as they are
  if (const int64_t rest = kept - whole_shards * a.shard_tokens; rest > 0)
    cut_shard(files[static_cast<size_t>(whole_shards)], rest, tokenizer);
  const size_t train_shards = std::max<size_t>(static_cast<size_t>((kept + a.shard_tokens - 1) / a.shard_tokens), 1);
  for (size_t s = train_shards; s < files.size(); ++s) fs::remove(files[s]);
}

// Flags that mean nothing with the others given are refused, never ignored.
void check_flags(const PrepareArgs& a) {
  auto given = [&](const char* flag) { return a.given.count(flag) > 0; };
  if (given("tokenizer-from"))
    for (const char* flag : {"tokenizer", "vocab-size", "tokenizer-model"})
      if (given(flag))
        throw std::invalid_argument(fmt::format("--{} cannot be given with --tokenizer-from, which names the tokenizer",
                                                flag));
  if ((a.tokenizer == data::TokenizerKind::sentencepiece) != !a.tokenizer_model.empty())
    throw std::invalid_argument("--tokenizer sentencepiece and --tokenizer-model (a SentencePiece model file) go together");
  if (given("vocab-size") && a.tokenizer != data::TokenizerKind::bpe)
    throw std::invalid_argument("--vocab-size is the size of the BPE vocabulary learned from the text: give it with "
                                "--tokenizer bpe");
  if (given("val-fraction") && !a.val_data.empty())
    throw std::invalid_argument("--val-fraction holds out training tokens for validation; --val-data gives validation "
                                "text instead: give one of them");
  for (const auto* files : {&a.data, &a.val_data})
    if (!files->empty() && train::data_kind(*files, "prepare's --data and --val-data") != train::DataKind::text_files)
      throw std::invalid_argument("prepare tokenizes text files: a folder of shards is tokenized already");
}

// The folder may take the new shards: a folder (made if missing, inside one that exists) whose shards and tokenizer.h5
// are replaced only with --force, and only when they are what their names say; none of them an input.
void check_out_folder(const PrepareArgs& a) {
  std::error_code ec;
  const fs::path parent = fs::absolute(a.out, ec).lexically_normal().parent_path();  // --out has no trailing '/'

  if (!fs::is_directory(parent, ec))
    throw std::invalid_argument(fmt::format("--out '{}': there is no folder '{}' to make it in", a.out, parent.string()));
  if (fs::exists(a.out, ec) && !fs::is_directory(a.out, ec))
    throw std::invalid_argument(fmt::format("--out '{}' is {}, not a folder", a.out, train::describe_path(a.out)));
  std::vector<std::string> inputs = a.data;
  inputs.insert(inputs.end(), a.val_data.begin(), a.val_data.end());
  inputs.insert(inputs.end(), {a.tokenizer_from, a.tokenizer_model});
  std::vector<std::string> ours = {(fs::path(a.out) / "tokenizer.h5").string()};
  for (const char* split : {"train", "val"})
    for (const std::string& shard : data::shard_files(a.out, split)) ours.push_back(shard);
  for (const std::string& file : ours) io::refuse_own_input(file, inputs, "--out");
  const bool has_tokenizer = fs::exists(ours.front(), ec);
  if (ours.size() == 1 && !has_tokenizer) return;
  if (!a.force)
    throw std::invalid_argument(fmt::format("'{}' already holds shards or a tokenizer.h5 ({}): give --force to replace "
                                            "them, or choose another --out",
                                            a.out, train::describe_path(a.out)));
  if (has_tokenizer && train::describe_path(ours.front()) != "a tokenizer file")
    throw std::invalid_argument(fmt::format("'{}' is {}, not a tokenizer file: not replacing it, --force or not",
                                            ours.front(), train::describe_path(ours.front())));
  for (size_t k = 1; k < ours.size(); ++k) {
    try {
      data::ShardSet({ours[k]}, int64_t{1} << 24);
    } catch (const std::exception& e) {
      throw std::invalid_argument(fmt::format("'{}' is named as a shard but is not one ({}): not replacing it, --force "
                                              "or not",
                                              ours[k], e.what()));
    }
  }
}

std::shared_ptr<const data::Tokenizer> make_tokenizer(const PrepareArgs& a, train::LiveLine& live) {
  if (!a.tokenizer_from.empty()) return train::read_tokenizer_of(a.tokenizer_from);
  if (!a.tokenizer_model.empty()) return io::read_sentencepiece_file(a.tokenizer_model);
  const int64_t bytes = data::regular_file_bytes(a.data);
  const bool bpe = a.tokenizer == data::TokenizerKind::bpe;
  const int64_t sample = bpe ? std::min(bytes, kBpeSampleBytes) : bytes;
  if (bpe && bytes > kBpeSampleBytes)
    live.message(fmt::format("learning BPE merges from the first {} MB of the {} MB of training text",
                             kBpeSampleBytes >> 20, bytes >> 20));
  const auto start = std::chrono::steady_clock::now();
  const data::TokenizerProgress progress{
      .read = [&](int64_t read) {
        live.show(fmt::format("{} tokenizer: reading {:.1f} of {:.1f} MB", data::name(a.tokenizer), read / 1e6, sample / 1e6));
      },
      .merged = [&](int64_t merges, int64_t wanted) {
        live.show(fmt::format("bpe tokenizer: learning merge {} of {} ({})", merges, wanted,
                              train::format_duration(seconds_since(start))));
      }};
  auto tokenizer = data::make_tokenizer(
      {.files = a.data, .val_files = a.val_data, .tokenizer = a.tokenizer, .vocab_size = a.vocab_size},
      kBpeSampleBytes, progress);
  live.message(fmt::format("made a {} tokenizer of {} tokens in {}", data::name(a.tokenizer), tokenizer->vocab_size(),
                           train::format_duration(seconds_since(start))));
  return tokenizer;
}

// One line per shard the folder now holds, then the totals: what was written, once it is final.
void report(const PrepareArgs& a, const data::Tokenizer& tokenizer) {
  int64_t tokens[2] = {0, 0}, shards[2] = {0, 0};
  for (int split = 0; split < 2; ++split) {
    const char* name = split == 0 ? "train" : "val";
    for (const std::string& shard : data::shard_files(a.out, name)) {
      const int64_t n = data::ShardSet({shard}, tokenizer.vocab_size()).size();
      fmt::print("{} shard {}: {} tokens\n", name, shard, n);
      tokens[split] += n, ++shards[split];
    }
  }
  fmt::print("prepared {}: {} training tokens in {} shard{}, {} validation tokens in {} shard{}; {} tokenizer, {} "
             "tokens (tokenizer.h5); train on it with: tinygpt train --data {}\n",
             a.out, tokens[0], shards[0], shards[0] == 1 ? "" : "s", tokens[1], shards[1], shards[1] == 1 ? "" : "s",
             data::name(tokenizer.kind()), tokenizer.vocab_size(), a.out);
}

// Entries of the --out folder that prepare's new contents replace: shards and tokenizer.h5.
bool prepared_file(const std::string& name) {
  return name == "tokenizer.h5" || data::is_shard_name(name, "train") || data::is_shard_name(name, "val");
}

void prepare(const PrepareArgs& a) {
  check_flags(a);
  check_out_folder(a);
  const train::RunLock lock(a.out);  // one writer per folder
  // The new shards are built beside the folder and swapped in when complete: the old ones stay until then.
  io::StagedFolder out(a.out, prepared_file);
  train::LiveLine live(stdout, isatty(fileno(stdout)));
  const std::shared_ptr<const data::Tokenizer> tokenizer = make_tokenizer(a, live);
  const data::TokenizerIdentity identity = tokenizer->identity();
  ShardWriter train(a, out.path(), "train", identity), val(a, out.path(), "val", identity);
  tokenize_into(*tokenizer, a.data, train, "train", live);
  train.finish();
  if (!a.val_data.empty()) {
    tokenize_into(*tokenizer, a.val_data, val, "val", live);
    val.finish();
  } else if (const int64_t n_val = data::validation_tokens(train.tokens(), a.val_fraction); n_val > 0) {
    live.message(fmt::format("holding out the last {} of the {} tokens for validation (--val-fraction {})", n_val,
                             train.tokens(), a.val_fraction));
    hold_out_tail(a, out.path(), n_val, identity, val);
    val.finish();
  }
  train::write_tokenizer_file(out.file("tokenizer.h5"), *tokenizer);
  out.commit();
  live.clear();
  report(a, *tokenizer);
}

}  // namespace

void add_prepare(CLI::App& app) {
  auto args = std::make_shared<PrepareArgs>();
  CLI::App* cmd = app.add_subcommand(
      "prepare", "tokenize text files once into token shards (llm.c's format) and their tokenizer, for train --data DIR");
  takes_paths(cmd->add_option("--data", args->data, "text files to tokenize for training (the document token between them)")
                  ->required());
  takes_paths(cmd->add_option("--val-data", args->val_data,
                              "text files for the validation shards (default: the last --val-fraction)"));
  add_number(cmd, "--val-fraction", args->val_fraction, io::Range{0, 1, false, true},
             "share of the tokens for the validation shards when --val-data is not given");
  cmd->add_option("--out", args->out, "folder for the shards and tokenizer.h5 (made if missing)")->required();
  cmd->add_option("--name", args->name, "the shards' name: <name>_train_000000.bin, ...")->capture_default_str();
  add_option_flag(cmd, "tokenizer", args->tokenizer, "how text becomes tokens", io::Range{}, train::kTokenizerChoices);
  add_number(cmd, "--vocab-size", args->vocab_size, io::Range{256, nn::kMaxVocab}, "BPE vocabulary size");
  cmd->add_option("--tokenizer-model", args->tokenizer_model,
                  "with --tokenizer sentencepiece: the SentencePiece model file (e.g. Llama's tokenizer.model)");
  cmd->add_option("--tokenizer-from", args->tokenizer_from,
                  "use the tokenizer this holds (a checkpoint, a tokenizer file, a shard folder, a Hugging Face folder, "
                  "a SentencePiece model; e.g. an imported GPT-2's) instead of making one");
  add_number(cmd, "--shard-tokens", args->shard_tokens, io::Range{1, 2147483647.0}, "tokens per shard");
  cmd->add_flag("--force", args->force, "replace the shards and tokenizer.h5 that --out already holds");
  add_number(cmd, "--threads", args->threads, train::kThreadRange, "worker threads (0: all cores)");
  cmd->callback([args, cmd] {
    for (const CLI::Option* option : cmd->get_options())
      if (option->count() > 0 && option->get_lnames().size() > 0) args->given.insert(option->get_lnames().front());
    set_num_threads(static_cast<int>(args->threads));
    while (args->out.size() > 1 && args->out.back() == '/') args->out.pop_back();  // "shards/": the folder shards
    prepare(*args);
  });
}

}  // namespace tinygpt::cli
