// tinygpt prepare: text files into token shards in llm.c's format, with the tokenizer beside them,
// so that training reads tokens from disk instead of tokenizing its corpus at every start.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>

#include "tinygpt/data/bpe_tokenizer.h"
#include "tinygpt/data/corpus.h"
#include "tinygpt/data/shards.h"
#include "tinygpt/io/output_files.h"
#include "tinygpt/cli/commands.h"
#include "tinygpt/cli/flags.h"
#include "tinygpt/train/checkpoint.h"

namespace tinygpt::cli {

namespace {

struct PrepareArgs {
  std::vector<std::string> data, val_data;
  std::string out, name = "tinygpt", tokenizer = "char", tokenizer_from;
  int64_t vocab_size = 512, shard_tokens = 100'000'000;
  double val_fraction = 0.1;
  bool force = false;
};

// The end-of-text token that separates documents, where the tokenizer has one (GPT-2's).
std::optional<int32_t> end_of_text(const data::Tokenizer& tokenizer) {
  if (const auto* bpe = dynamic_cast<const data::BpeTokenizer*>(&tokenizer))
    for (const data::SpecialToken& s : bpe->specials())
      if (s.text == "<|endoftext|>") return s.id;
  return std::nullopt;
}

// Each file's tokens, each document (file) after the end-of-text token where there is one (llm.c's
// layout), else the files' tokens end to end.
std::vector<int32_t> document_tokens(const data::Tokenizer& tokenizer, const std::vector<std::string>& files) {
  const std::optional<int32_t> eot = end_of_text(tokenizer);
  std::vector<int32_t> ids, one;
  for (const std::string& file : files) {
    const data::TokenArray tokens = data::tokenize_files(tokenizer, {file});
    one.resize(static_cast<size_t>(tokens.size()));
    tokens.copy_to(0, tokens.size(), one.data());
    if (eot) ids.push_back(*eot);
    ids.insert(ids.end(), one.begin(), one.end());
  }
  return ids;
}

std::vector<int32_t> all_of(const data::TokenArray& tokens) {
  std::vector<int32_t> ids(static_cast<size_t>(tokens.size()));
  tokens.copy_to(0, tokens.size(), ids.data());
  return ids;
}

// DIR/<name>_<split>_<n>.bin for each stretch of at most shard_tokens tokens; returns their number.
int64_t write_shards(const PrepareArgs& a, const std::string& split, std::span<const int32_t> ids, int64_t vocab_size) {
  const int width = data::shard_token_bytes(vocab_size);
  int64_t n = 0;
  size_t start = 0;
  do {
    const size_t count = std::min<size_t>(static_cast<size_t>(a.shard_tokens), ids.size() - start);
    const std::string path =
        (std::filesystem::path(a.out) / fmt::format("{}_{}_{:06d}.bin", a.name, split, n)).string();
    const std::array<int32_t, 256> header = data::shard_header(static_cast<int64_t>(count), width);
    const std::vector<char> payload = data::shard_payload(ids.subspan(start, count), width);
    io::AtomicFile out(path, "shard");
    out.write(header.data(), sizeof header);  // little-endian on the machines tinygpt builds for
    out.write(payload.data(), payload.size());
    out.commit();
    fmt::print("wrote {}: {} tokens\n", path, count);
    std::fflush(stdout);
    start += count, ++n;
  } while (start < ids.size());
  return n;
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
  std::shared_ptr<const data::Tokenizer> tokenizer;
  std::vector<int32_t> train, val;
  if (!a.tokenizer_from.empty()) {
    tokenizer = train::read_checkpoint(a.tokenizer_from).tokenizer;
    train = document_tokens(*tokenizer, a.data);
    if (!a.val_data.empty()) val = document_tokens(*tokenizer, a.val_data);
  } else {
    const data::Corpus corpus = data::load_corpus({.files = a.data, .val_files = a.val_data, .val_fraction = 0,
                                                   .tokenizer = a.tokenizer, .vocab_size = a.vocab_size});
    tokenizer = corpus.tokenizer;
    train = all_of(corpus.train);
    if (!a.val_data.empty()) val = all_of(corpus.val);
  }
  if (a.val_data.empty()) {  // the last --val-fraction of the tokens, as train holds them out
    const auto n_val = static_cast<size_t>(a.val_fraction * static_cast<double>(train.size()));
    val.assign(train.end() - static_cast<std::ptrdiff_t>(n_val), train.end());
    train.resize(train.size() - n_val);
  }
  const int64_t vocab = tokenizer->vocab_size();
  const int64_t val_shards = val.empty() ? 0 : write_shards(a, "val", val, vocab);
  const int64_t train_shards = write_shards(a, "train", train, vocab);
  train::write_tokenizer_file((std::filesystem::path(a.out) / "tokenizer.h5").string(), *tokenizer);
  fmt::print("prepared {}: {} training tokens in {} shard{}, {} validation tokens in {}; {} tokenizer, {} tokens "
             "(tokenizer.h5); train on it with: tinygpt train --data {}\n",
             a.out, train.size(), train_shards, train_shards == 1 ? "" : "s", val.size(), val_shards,
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
      ->type_name("char|bpe")
      ->check(CLI::IsMember({"char", "bpe"}))
      ->capture_default_str();
  add_number(cmd, "--vocab-size", args->vocab_size, io::Range{256, 1 << 24}, "BPE vocabulary size");
  cmd->add_option("--tokenizer-from", args->tokenizer_from,
                  "use this checkpoint's tokenizer (e.g. an imported GPT-2's) instead of making one");
  add_number(cmd, "--shard-tokens", args->shard_tokens, io::Range{1, 2147483647.0}, "tokens per shard");
  cmd->add_flag("--force", args->force, "replace the shards and tokenizer.h5 that --out already holds");
  cmd->callback([args] { prepare(*args); });
}

}  // namespace tinygpt::cli
