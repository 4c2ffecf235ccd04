#pragma once
// What defines a tokenizer, as the fields a file keeps: the /tokenizer group of a checkpoint and of
// a shard folder's tokenizer.h5 (docs/checkpoint-format.md). Every tokenizer gives its record
// (Tokenizer::record); each kind fills its own fields and leaves the others empty.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bpe_tokenizer.h"

namespace tinygpt::data {

struct TokenizerRecord {
  TokenizerKind kind = TokenizerKind::chars;
  std::vector<int32_t> code_points;    // char: the vocabulary, in id order
  std::vector<Merge> merges;           // bpe: in rank order
  Split split = Split::gpt2;           // bpe: how text is cut into chunks first
  std::vector<int32_t> byte_ids;       // bpe: empty (byte b is token b) or a permutation of 0..255
  std::vector<SpecialToken> specials;  // bpe
  std::string model_proto;             // sentencepiece: the model's bytes
};

// The tokenizer of a char or bpe record; throws std::invalid_argument naming what does not make
// one. A SentencePiece model is loaded through io::load_sentencepiece, which checks it first in a
// child process (io/sentencepiece_model.h).
std::shared_ptr<const Tokenizer> make_tokenizer(TokenizerRecord record);

}  // namespace tinygpt::data
