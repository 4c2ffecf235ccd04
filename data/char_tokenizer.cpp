#include "char_tokenizer.h"

#include <fmt/format.h>

#include <iterator>

#include "utf8.h"
#include "tokenizer_record.h"

namespace tinygpt::data {

CharVocabulary::CharVocabulary() : seen_((0x110000 + 63) / 64, 0) {}

void CharVocabulary::add(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const int32_t cp = next_code_point(text, i);
    if (cp < 0) throw std::invalid_argument("CharVocabulary: text is not valid UTF-8");
    seen_[cp >> 6] |= uint64_t{1} << (cp & 63);
  }
}

std::vector<int32_t> CharVocabulary::code_points() const {
  std::vector<int32_t> out;
  for (size_t w = 0; w < seen_.size(); ++w)
    for (int b = 0; b < 64; ++b)
      if (seen_[w] >> b & 1) out.push_back(static_cast<int32_t>(w * 64 + b));
  return out;
}

CharTokenizer::CharTokenizer(std::vector<int32_t> code_points) : vocab_(std::move(code_points)) {
  if (vocab_.empty()) throw std::invalid_argument("char tokenizer: the vocabulary is empty");
  ascii_.fill(-1);
  for (size_t i = 0; i < vocab_.size(); ++i) {
    const int32_t cp = vocab_[i];
    if (cp < 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) || (i > 0 && cp <= vocab_[i - 1]))
      throw std::invalid_argument(fmt::format(
          "char tokenizer: vocabulary entry {} (code point {}) is invalid, repeated or out of order", i, cp));
    if (cp < 128) ascii_[cp] = static_cast<int32_t>(i);
    else non_ascii_[cp] = static_cast<int32_t>(i);
  }
}

CharTokenizer CharTokenizer::from_text(std::string_view text) {
  CharVocabulary v;
  v.add(text);
  return CharTokenizer(v.code_points());
}

void CharTokenizer::encode(std::string_view text, std::vector<int32_t>& out, std::string_view where) const {
  out.reserve(out.size() + text.size());
  for (size_t i = 0; i < text.size();) {
    const auto byte = static_cast<uint8_t>(text[i]);
    const size_t start = i;
    int32_t id = -1, cp = byte;
    if (byte < 0x80) {  // the fast path: one table lookup
      id = ascii_[byte];
      ++i;
    } else {
      cp = next_code_point(text, i);
      if (cp < 0)
        throw std::invalid_argument(fmt::format("{} is not valid UTF-8 at byte offset {}", where, start));
      const auto it = non_ascii_.find(cp);
      if (it != non_ascii_.end()) id = it->second;
    }
    if (id < 0) {
      const TextPosition at = position_of(text, start);
      throw UnknownCharacter(fmt::format("{} at line {}, column {} of {} is not in the character vocabulary",
                                         describe_code_point(cp), at.line, at.column, where),
                             cp, start);
    }
    out.push_back(id);
  }
}

std::string CharTokenizer::decode(std::span<const int32_t> ids) const {
  std::string out;
  out.reserve(ids.size());
  for (int32_t id : ids) {
    check_id(id);
    append_utf8(out, vocab_[id]);
  }
  return out;
}

void CharTokenizer::append_definition(std::string& out) const {
  for (int32_t cp : vocab_) fmt::format_to(std::back_inserter(out), "{}\n", cp);
}

std::string CharTokenizer::token_bytes(int32_t id) const {
  check_id(id);
  std::string out;
  append_utf8(out, vocab_[id]);
  return out;
}

TokenizerRecord CharTokenizer::record() const { return {.kind = kind(), .code_points = vocab_}; }

}  // namespace tinygpt::data
