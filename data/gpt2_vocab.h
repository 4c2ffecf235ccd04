#pragma once
// GPT-2's published tokenizer files: a vocabulary (OpenAI's encoder.json or Hugging Face's
// vocab.json: token text -> id) and a merge list (vocab.bpe or merges.txt: "a b" per line, merge r
// making token 256 + r). Token text spells bytes in GPT-2's printable alphabet (byte_alphabet()).
// Entries that are neither bytes nor merges are special tokens ("<|endoftext|>" = 50256).
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "bpe_tokenizer.h"

namespace tinygpt::data {

// GPT-2's byte -> printable character table: the visible Latin-1 bytes stand for themselves, the
// other 68 bytes for U+0100 onwards in byte order (space is 'Ġ', newline 'Ċ').
const std::array<int32_t, 256>& byte_alphabet();

// The two files of a GPT-2 tokenizer in `dir`: vocab.json + merges.txt (Hugging Face) or
// encoder.json + vocab.bpe (OpenAI), whichever pair is complete (the first when both are); `pair`
// says which, for a message. Throws naming what each pair lacks when neither is complete.
struct Gpt2TokenizerFiles {
  std::string vocab, merges;
  std::string pair;            // "vocab.json + merges.txt" or "encoder.json + vocab.bpe"
  std::vector<std::string> listed_specials;  // tokenizer_config.json's and special_tokens_map.json's tokens
};
Gpt2TokenizerFiles find_gpt2_tokenizer(const std::string& dir);

// Reads a GPT-2 tokenizer, checked for meaning as well as form: ids unique and below vocab_limit
// (a model's vocab_size where known); the merge list LF or CRLF, an exact "#version: 0.2" header
// when it has one, lines of two known tokens whose join has id 256 + line; every byte present; and
// every other entry a special token, either <|...|> or listed (`listed_specials`). An entry that
// is none of these (a merge list cut short leaves its tokens so) is an error naming the first few
// and their count.
BpeTokenizer read_gpt2_tokenizer(const std::string& dir, int64_t vocab_limit = BpeTokenizer::kMaxSpecialId);
BpeTokenizer read_gpt2_tokenizer(const Gpt2TokenizerFiles& files, int64_t vocab_limit = BpeTokenizer::kMaxSpecialId);

// Hugging Face's spelling of a tokenizer: vocab.json and merges.txt. Throws when the tokenizer has
// no GPT-2-compatible equivalent (no GPT-2 split, or two tokens standing for the same bytes).
struct Gpt2Files {
  std::string vocab_json, merges_txt;
};
Gpt2Files gpt2_files(const BpeTokenizer& tokenizer);

}  // namespace tinygpt::data
