#pragma once
// The text a run reads: text files, tokenized at its start, or folders of token shards (tinygpt
// prepare's or llm.c's) read in place, several of them end to end or mixed by --data-weights; and
// the validation text beside it. Shards are read only through the tokenizer that made them, and a
// flag either means something for the data at hand or is refused before any work.
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "../data/corpus.h"
#include "options.h"

namespace tinygpt::train {

enum class DataKind { text_files, shard_folders };

// What `paths` (given with `flag`, e.g. "--data") are: all folders or all files; throws on a mix.
DataKind data_kind(const std::vector<std::string>& paths, const std::string& flag);

// The split a folder gives as validation text (--val-data DIR): "val" when it has val shards, else "train".
std::string validation_split_of(const std::string& dir);

// Throws, before any work, when a flag given on the command line (`given`: names without "--")
// cannot apply to the run's data or start ("--vocab-size cannot apply to shard folders: ...").
void check_flags_apply(const TrainOptions& o, const std::set<std::string>& given, RunStart start);

// The tokenizer a folder's shards were made with, as far as the folder says: tokenizer.h5 beside
// them and the shards' headers, which must agree (else an error naming both). None when neither
// says (llm.c's shards).
std::optional<data::TokenizerIdentity> folder_tokenizer(const std::string& dir);

// Throws when a shard folder among --data and --val-data names a tokenizer other than `tokenizer`
// (`owner` names it), naming both: a check before anything is read.
void check_folders_tokenizer(const TrainOptions& o, const data::Tokenizer& tokenizer, const std::string& owner);

// The run's text and validation text. `tokenizer`: the checkpoint's on --resume and --init-from,
// named by `owner` in errors ("the checkpoint 'a.h5'"); null for a new run, which takes
// --tokenizer-from's, --tokenizer-model's, the shard folders' own (tokenizer.h5), or makes one from
// the text. Every shard folder must have been made by that tokenizer.
data::Corpus load_run_corpus(const TrainOptions& o, std::shared_ptr<const data::Tokenizer> tokenizer,
                             const std::string& owner);

// The tokens `tinygpt eval` scores: text files tokenized by `tokenizer` (the document token between
// them), or shard folders' `split` end to end, each made by `tokenizer` (`owner` names it).
data::TokenArray tokens_to_score(const std::vector<std::string>& paths, const std::string& split,
                                 const data::Tokenizer& tokenizer, const std::string& owner);

}  // namespace tinygpt::train
