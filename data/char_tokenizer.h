#pragma once
// Character tokenizer: the vocabulary is the sorted distinct code points of the training text;
// token id i stands for code point vocab[i].
#include <array>
#include <unordered_map>

#include "tokenizer.h"

namespace tinygpt::data {

// Collects the distinct code points of a text given in pieces.
class CharVocabulary {
 public:
  CharVocabulary();
  void add(std::string_view text);  // valid UTF-8
  std::vector<int32_t> code_points() const;  // sorted

 private:
  std::vector<uint64_t> seen_;  // a bit per code point
};

class CharTokenizer : public Tokenizer {
 public:
  explicit CharTokenizer(std::vector<int32_t> code_points);  // sorted, distinct, valid
  static CharTokenizer from_text(std::string_view text);

  TokenizerKind kind() const override { return TokenizerKind::chars; }
  int64_t vocab_size() const override { return static_cast<int64_t>(vocab_.size()); }
  using Tokenizer::encode;
  void encode(std::string_view text, std::vector<int32_t>& out, std::string_view where) const override;
  std::string decode(std::span<const int32_t> ids) const override;
  std::string token_bytes(int32_t id) const override;
  const std::vector<int32_t>& code_points() const { return vocab_; }
  TokenizerRecord record() const override;

 protected:
  void append_definition(std::string& out) const override;  // the code points

 private:
  std::vector<int32_t> vocab_;
  std::array<int32_t, 128> ascii_;                  // id of each ASCII code point, or -1
  std::unordered_map<int32_t, int32_t> non_ascii_;  // id of every other code point
};

}  // namespace tinygpt::data
