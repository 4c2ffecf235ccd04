#include "tokenizer.h"

#include <fmt/format.h>

#include <iterator>
#include <stdexcept>

#include "sha256.h"
#include "utf8.h"

namespace tinygpt::data {

void Tokenizer::check_id(int32_t id) const {
  if (id < 0 || id >= vocab_size())
    throw std::out_of_range(fmt::format("{} tokenizer: token id {} is out of range for vocab_size {}", name(kind()), id,
                                        vocab_size()));
}

namespace {
constexpr const char* kKindNames[] = {"char", "bpe", "sentencepiece"};  // in TokenizerKind's order
}  // namespace

const char* name(TokenizerKind kind) { return kKindNames[static_cast<size_t>(kind)]; }

std::optional<TokenizerKind> parse_tokenizer_kind(std::string_view text) {
  for (size_t k = 0; k < std::size(kKindNames); ++k)
    if (text == kKindNames[k]) return static_cast<TokenizerKind>(k);
  return std::nullopt;
}

TokenizerIdentity Tokenizer::identity() const {
  // "tinygpt tokenizer", the kind and the vocabulary size, then the kind's own data: a digest
  // never equals one of another kind or size.
  std::string definition = fmt::format("tinygpt tokenizer\n{}\n{}\n", name(kind()), vocab_size());
  append_definition(definition);
  Sha256 sha;
  sha.update(definition.data(), definition.size());
  return {kind(), vocab_size(), sha.digest()};
}

std::string TokenizerIdentity::hex() const {
  std::string out;
  for (uint8_t b : digest) out += fmt::format("{:02x}", b);
  return out;
}

std::string TokenizerIdentity::describe() const {
  return fmt::format("a {} tokenizer of {} tokens (digest {})", name(kind), vocab_size, hex().substr(0, 12));
}

void require_same_tokenizer(const TokenizerIdentity& expected, const std::string& what, const Tokenizer& tokenizer,
                            const std::string& user) {
  const TokenizerIdentity actual = tokenizer.identity();
  if (actual == expected) return;
  throw std::invalid_argument(fmt::format("{} were made by {}, but {} has {}: token ids mean nothing through another "
                                          "tokenizer",
                                          what, expected.describe(), user, actual.describe()));
}

TextPosition position_of(std::string_view text, size_t offset) {
  int64_t line = 1, column = 1;
  for (size_t i = 0; i < offset && i < text.size();) {
    if (text[i] == '\n') {
      ++line, column = 1, ++i;
      continue;
    }
    if (next_code_point(text, i) < 0) ++i;
    ++column;
  }
  return {line, column};
}

}  // namespace tinygpt::data
