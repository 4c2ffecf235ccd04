#include "run_data.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <stdexcept>

#include "../data/shards.h"
#include "../io/sentencepiece_model.h"
#include "checkpoint.h"
#include "tokenizer_source.h"

namespace tinygpt::train {

namespace fs = std::filesystem;

namespace {

bool is_folder(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

std::string tokenizer_file_in(const std::string& dir) { return (fs::path(dir) / "tokenizer.h5").string(); }

bool has_tokenizer_file(const std::string& dir) {
  std::error_code ec;
  return fs::exists(tokenizer_file_in(dir), ec);
}

// A folder's splits, opened and checked against the tokenizer that reads them.
struct Folder {
  std::shared_ptr<const data::ShardSet> train, val;  // val: null when the folder has none
};

Folder open_folder(const std::string& dir, const data::Tokenizer& tokenizer, const std::string& owner) {
  if (data::shard_files(dir, "train").empty() && data::shard_files(dir, "val").empty())
    throw std::invalid_argument(fmt::format("'{}' holds no token shards (files named <name>_train_<n>.bin and "
                                            "<name>_val_<n>.bin, as tinygpt prepare writes them)",
                                            dir));
  if (const std::optional<data::TokenizerIdentity> made_by = folder_tokenizer(dir))
    data::require_same_tokenizer(*made_by, fmt::format("the shards in '{}'", dir), tokenizer, owner);
  return {data::open_shards(dir, "train", tokenizer.vocab_size()), data::open_shards(dir, "val", tokenizer.vocab_size())};
}

data::TokenArray all_of(const std::shared_ptr<const data::ShardSet>& set) {
  return data::TokenArray::of_shards(set, 0, set->size());
}

data::TokenArray joined(std::vector<data::TokenArray> parts) {
  return parts.size() == 1 ? std::move(parts.front()) : data::TokenArray::concat(std::move(parts));
}

// A folder's tokens as validation text: its val split, else its train split.
data::TokenArray validation_tokens_of(const std::string& dir, const data::Tokenizer& tokenizer, const std::string& owner) {
  const Folder f = open_folder(dir, tokenizer, owner);
  return all_of(f.val ? f.val : f.train);
}

// The tokenizer --tokenizer-from or --tokenizer-model names, with words for errors; null when neither.
std::shared_ptr<const data::Tokenizer> named_tokenizer(const TrainOptions& o, std::string& owner) {
  if (!o.tokenizer_from.empty()) {
    owner = fmt::format("--tokenizer-from '{}'", o.tokenizer_from);
    return read_tokenizer_of(o.tokenizer_from);
  }
  if (!o.tokenizer_model.empty()) {
    owner = fmt::format("--tokenizer-model '{}'", o.tokenizer_model);
    return io::read_sentencepiece_file(o.tokenizer_model);
  }
  return nullptr;
}

// A new run's tokenizer when nothing names one: the first folder's tokenizer.h5, or one made from
// the training text (a character vocabulary also takes in the validation text's characters).
std::shared_ptr<const data::Tokenizer> own_tokenizer(const TrainOptions& o, DataKind kind, std::string& owner) {
  const std::vector<std::string> files = training_files(o);
  if (kind == DataKind::shard_folders) {
    if (!has_tokenizer_file(files.front()))
      throw std::invalid_argument(fmt::format("'{}' holds token shards but no tokenizer.h5: give --tokenizer-from with "
                                              "the tokenizer they were made with (a checkpoint, a tokenizer file, a "
                                              "Hugging Face folder; an imported GPT-2 for llm.c's GPT-2 shards)",
                                              files.front()));
    owner = fmt::format("the tokenizer.h5 of '{}' (the first --data folder)", files.front());
    return read_tokenizer_file(tokenizer_file_in(files.front()));
  }
  if (o.tokenizer == data::TokenizerKind::sentencepiece)
    throw std::invalid_argument("--tokenizer sentencepiece needs --tokenizer-model (a SentencePiece model file)");
  std::vector<std::string> val_text;
  if (!o.val_data.empty() && data_kind(o.val_data, "--val-data") == DataKind::text_files) val_text = o.val_data;
  owner = fmt::format("the {} tokenizer made from the training text", data::name(o.tokenizer));
  return data::make_tokenizer(
      {.files = files, .val_files = val_text, .tokenizer = o.tokenizer, .vocab_size = o.vocab_size});
}

}  // namespace

DataKind data_kind(const std::vector<std::string>& paths, const std::string& flag) {
  size_t folders = 0;
  for (const std::string& p : paths) folders += is_folder(p);
  if (folders == 0) return DataKind::text_files;
  if (folders == paths.size()) return DataKind::shard_folders;
  const auto folder = std::find_if(paths.begin(), paths.end(), is_folder);
  const auto file = std::find_if_not(paths.begin(), paths.end(), is_folder);
  throw std::invalid_argument(fmt::format("{} takes text files or folders of token shards, not both ('{}' is a folder, "
                                          "'{}' is not): tokenize the text into a folder with tinygpt prepare",
                                          flag, *folder, *file));
}

std::string validation_split_of(const std::string& dir) { return data::shard_files(dir, "val").empty() ? "train" : "val"; }

std::optional<data::TokenizerIdentity> folder_tokenizer(const std::string& dir) {
  std::optional<data::TokenizerIdentity> named;
  std::string namer;
  if (has_tokenizer_file(dir)) named = read_tokenizer_file(tokenizer_file_in(dir))->identity(), namer = tokenizer_file_in(dir);
  for (const char* split : {"train", "val"}) {
    const std::vector<std::string> files = data::shard_files(dir, split);
    if (files.empty()) continue;
    const data::ShardSet set(files, int64_t{1} << 24);  // reads only the headers
    if (!set.tokenizer()) continue;
    if (named && *named != *set.tokenizer())
      throw std::invalid_argument(fmt::format("'{}' names {}, but shard '{}' was made by {}: the folder mixes two "
                                              "tokenizers' files (prepare it again)",
                                              namer, named->describe(), files.front(), set.tokenizer()->describe()));
    named = set.tokenizer(), namer = files.front();
  }
  return named;
}

void check_flags_apply(const TrainOptions& o, const std::set<std::string>& given, RunStart start) {
  auto refuse = [](const std::string& why) { throw std::invalid_argument(why); };
  const std::vector<std::string> files = training_files(o);
  const DataKind kind = data_kind(files, "--data");
  if (!o.val_data.empty()) data_kind(o.val_data, "--val-data");
  const bool folders = kind == DataKind::shard_folders;
  // The tokenizer comes from one place.
  for (const char* flag : {"tokenizer", "vocab-size", "tokenizer-model", "tokenizer-from"}) {
    if (!given.count(flag)) continue;
    if (start == RunStart::init_from)
      refuse(fmt::format("--{} cannot be given with --init-from: the model's tokenizer comes from its checkpoint", flag));
    if (std::string_view(flag) != "tokenizer-from" && given.count("tokenizer-from"))
      refuse(fmt::format("--{} cannot be given with --tokenizer-from, which names the tokenizer", flag));
  }
  if (given.count("tokenizer-model") && o.tokenizer != data::TokenizerKind::sentencepiece)
    refuse("--tokenizer-model is a SentencePiece model: give it with --tokenizer sentencepiece");
  if (given.count("vocab-size") && (folders || o.tokenizer != data::TokenizerKind::bpe))
    refuse(folders ? "--vocab-size cannot apply to shard folders: their tokenizer is the one that made them"
                   : "--vocab-size is the size of the BPE vocabulary learned from the text: give it with --tokenizer bpe");
  if (folders && given.count("tokenizer") && !given.count("tokenizer-model"))
    refuse("--tokenizer cannot apply to shard folders: they were made by a tokenizer of their own (their "
           "tokenizer.h5; --tokenizer-from names it for shards without one)");
  // Validation text comes from one place.
  if (given.count("val-fraction")) {
    if (!o.val_data.empty())
      refuse("--val-fraction holds out training tokens for validation; --val-data gives validation text instead: give "
             "one of them");
    if (folders && std::all_of(files.begin(), files.end(), [](const std::string& d) { return validation_split_of(d) == "val"; }))
      refuse("--val-fraction cannot apply: every --data folder has val shards of its own, so nothing is held out");
  }
  // Weights mix folders.
  if (!o.data_weights.empty()) {
    if (!folders)
      refuse("--data-weights mixes folders of token shards: tokenize each text into a folder with tinygpt prepare");
    if (parse_data_weights(o.data_weights).size() != files.size())
      refuse(fmt::format("--data-weights has {} weights for {} --data folders: give one each",
                         parse_data_weights(o.data_weights).size(), files.size()));
  }
}

void check_folders_tokenizer(const TrainOptions& o, const data::Tokenizer& tokenizer, const std::string& owner) {
  std::vector<std::string> paths = training_files(o);
  paths.insert(paths.end(), o.val_data.begin(), o.val_data.end());
  for (const std::string& dir : paths)
    if (is_folder(dir))
      if (const std::optional<data::TokenizerIdentity> made_by = folder_tokenizer(dir))
        data::require_same_tokenizer(*made_by, fmt::format("the shards in '{}'", dir), tokenizer, owner);
}

data::Corpus load_run_corpus(const TrainOptions& o, std::shared_ptr<const data::Tokenizer> tokenizer,
                             const std::string& owner) {
  const std::vector<std::string> files = training_files(o);
  const DataKind kind = data_kind(files, "--data");
  if (kind == DataKind::shard_folders)  // before a tokenizer is looked for
    for (const std::string& dir : files)
      if (data::shard_files(dir, "train").empty())
        throw std::invalid_argument(fmt::format("'{}' holds no training shards (files named <name>_train_<n>.bin)", dir));
  std::string reader = owner;
  if (!tokenizer) tokenizer = named_tokenizer(o, reader);
  if (!tokenizer) tokenizer = own_tokenizer(o, kind, reader);
  data::Corpus corpus;
  corpus.tokenizer = tokenizer;
  const std::vector<double> weights = parse_data_weights(o.data_weights);
  if (!weights.empty() && (kind != DataKind::shard_folders || weights.size() != files.size()))
    throw std::invalid_argument(fmt::format("--data-weights has {} weights for {} --data {}: give one per folder",
                                            weights.size(), files.size(),
                                            kind == DataKind::shard_folders ? "folders" : "text files"));
  // Validation text given: it is the validation split, whole.
  std::optional<data::TokenArray> val;
  if (!o.val_data.empty()) {
    if (data_kind(o.val_data, "--val-data") == DataKind::text_files) {
      val = data::tokenize_files(*tokenizer, o.val_data);
    } else {
      std::vector<data::TokenArray> parts;
      for (const std::string& dir : o.val_data) parts.push_back(validation_tokens_of(dir, *tokenizer, reader));
      val = joined(std::move(parts));
    }
  }
  if (kind == DataKind::text_files) {
    data::TokenArray all = data::tokenize_files(*tokenizer, files);
    const int64_t held_out = val ? 0 : data::validation_tokens(all.size(), o.val_fraction);
    corpus.train = all.slice(0, all.size() - held_out);
    corpus.val = val ? std::move(*val) : all.slice(all.size() - held_out, all.size());
    return corpus;
  }
  // Shard folders: each one's train split, and its val split (or its last --val-fraction).
  for (const std::string& dir : files) {
    const Folder f = open_folder(dir, *tokenizer, reader);
    const int64_t held_out = val || f.val ? 0 : data::validation_tokens(f.train->size(), o.val_fraction);
    corpus.train_sources.push_back(data::TokenArray::of_shards(f.train, 0, f.train->size() - held_out));
    corpus.val_sources.push_back(val ? data::TokenArray() : f.val ? all_of(f.val)
                                                          : data::TokenArray::of_shards(f.train, f.train->size() - held_out,
                                                                                        f.train->size()));
  }
  corpus.train = joined(corpus.train_sources);
  corpus.val = val ? std::move(*val) : joined(corpus.val_sources);
  if (weights.empty() || val) corpus.val_sources.clear();
  if (weights.empty()) corpus.train_sources.clear();
  corpus.weights = weights;
  return corpus;
}

data::TokenArray tokens_to_score(const std::vector<std::string>& paths, const std::string& split,
                                 const data::Tokenizer& tokenizer, const std::string& owner) {
  if (data_kind(paths, "--data") == DataKind::text_files) return data::tokenize_files(tokenizer, paths);
  std::vector<data::TokenArray> parts;
  for (const std::string& dir : paths) {
    const Folder f = open_folder(dir, tokenizer, owner);
    const auto& set = split == "train" ? f.train : f.val;
    if (!set)
      throw std::invalid_argument(fmt::format("'{}' holds no {} shards (files named <name>_{}_<n>.bin)", dir, split, split));
    parts.push_back(all_of(set));
  }
  return joined(std::move(parts));
}

}  // namespace tinygpt::train
