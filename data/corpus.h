#pragma once
// From text files to train and validation token arrays, with the tokenizer that made them.
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "pretokenize.h"
#include "token_array.h"
#include "tokenizer.h"

namespace tinygpt::data {

struct CorpusOptions {
  std::vector<std::string> files;      // training text, in order
  std::vector<std::string> val_files;  // if given, the validation text; else the last val_fraction
  double val_fraction = 0.1;           //   of the training tokens
  TokenizerKind tokenizer = TokenizerKind::chars;  // chars or bpe (a SentencePiece model is read)
  int64_t vocab_size = 512;            // for bpe
  Split split = Split::gpt2;           // for bpe: how text is cut before merging (pretokenize.h)
};

struct Corpus {
  std::shared_ptr<const Tokenizer> tokenizer;
  TokenArray train, val;
  // Sources mixed by weight (several shard folders with --data-weights): each one's training and
  // validation tokens, which train and val hold end to end. Empty: one source, read as a whole.
  std::vector<TokenArray> train_sources, val_sources;
  std::vector<double> weights;
};

// Builds a tokenizer from the training files (a character vocabulary also takes in the validation
// files' characters, so that validation never meets an unknown one), then tokenizes everything (files are read in blocks,
// so memory stays near the token arrays' size).
Corpus load_corpus(const CorpusOptions& options);

// The same with a tokenizer that already exists (resuming a run): no tokenizer is built.
Corpus load_corpus(const CorpusOptions& options, std::shared_ptr<const Tokenizer> tokenizer);

// How many of `tokens` the validation split holds out at their end: the share `fraction`, rounded
// down (train, prepare and training from shards all cut here).
int64_t validation_tokens(int64_t tokens, double fraction);

// Tokenizes files with an existing tokenizer (resume, eval), as tokenize_in_order delivers them
// (the document token between files). Errors name the file and the place.
TokenArray tokenize_files(const Tokenizer& tokenizer, const std::vector<std::string>& files);

// Tokenizes files on all threads and hands the ids over in file order: deliver(file, ids, bytes) for
// each block of each file (`bytes`: the block's text), blocks cut as the reader cuts them, so the
// ids are the same for any thread count. Memory stays at a few blocks per thread whatever the size.
// Each file is a document: between two files comes the tokenizer's document token where it has
// one (delivered alone, with bytes 0, as the next file's), so one file gives exactly its ids.
void tokenize_in_order(const Tokenizer& tokenizer, const std::vector<std::string>& files,
                       const std::function<void(size_t file, std::span<const int32_t> ids, size_t bytes)>& deliver);

// What making a tokenizer reports as it goes: bytes of text read, then (BPE) merges learned.
struct TokenizerProgress {
  std::function<void(int64_t bytes)> read;
  std::function<void(int64_t merges, int64_t wanted)> merged;
};

// The tokenizer a corpus would be tokenized with: made from the training files (a character
// vocabulary also takes in the validation files' characters). With bpe_sample_bytes > 0, BPE
// merges are learned from at most that many bytes of the training text, from its start.
std::shared_ptr<const Tokenizer> make_tokenizer(const CorpusOptions& options, int64_t bpe_sample_bytes = 0,
                                                const TokenizerProgress& progress = {});

}  // namespace tinygpt::data
