#pragma once
// GPT-2's published tokenizer files: a vocabulary (OpenAI's encoder.json or Hugging Face's
// vocab.json: token text -> id) and a merge list (vocab.bpe or merges.txt: "a b" per line, merge r
// making token 256 + r). Token text spells bytes in GPT-2's printable alphabet (byte_alphabet()).
// Entries that are neither bytes nor merges are special tokens ("<|endoftext|>" = 50256).
#include <array>
#include <string>

#include "tinygpt/data/bpe_tokenizer.h"

namespace tinygpt::data {

// GPT-2's byte -> printable character table: the visible Latin-1 bytes stand for themselves, the
// other 68 bytes for U+0100 onwards in byte order (space is 'Ġ', newline 'Ċ').
const std::array<int32_t, 256>& byte_alphabet();

// Reads encoder.json + vocab.bpe, or vocab.json + merges.txt, from `dir` (either pair; an error
// names what is missing). Every file is checked whole: JSON syntax, ids unique and in range, merge
// lines of two known tokens whose join has id 256 + line, every byte present.
BpeTokenizer read_gpt2_tokenizer(const std::string& dir);
BpeTokenizer read_gpt2_tokenizer(const std::string& vocab_path, const std::string& merges_path);

// Hugging Face's spelling of a tokenizer: vocab.json and merges.txt. Throws when the tokenizer has
// no GPT-2-compatible equivalent (no GPT-2 split, or two tokens standing for the same bytes).
struct Gpt2Files {
  std::string vocab_json, merges_txt;
};
Gpt2Files gpt2_files(const BpeTokenizer& tokenizer);

}  // namespace tinygpt::data
