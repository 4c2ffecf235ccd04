#pragma once
// Text <-> token ids. Two kinds (SPEC.md's /tokenizer group): "char" (one token per Unicode code
// point of the training text) and "bpe" (byte-level byte-pair encoding).
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tinygpt::data {

// Raised by encode for a character the character vocabulary lacks; `offset` is its byte offset
// in the text given to encode, so that a caller reading in blocks can place it in the file.
struct UnknownCharacter : std::runtime_error {
  UnknownCharacter(const std::string& message, int32_t code_point, size_t offset)
      : std::runtime_error(message), code_point(code_point), offset(offset) {}
  int32_t code_point;
  size_t offset;
};

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  virtual const char* kind() const = 0;  // "char" or "bpe"
  virtual int64_t vocab_size() const = 0;
  // Appends the ids of `text` (valid UTF-8) to `out`; `where` names the text in error messages.
  virtual void encode(std::string_view text, std::vector<int32_t>& out, std::string_view where = "the text") const = 0;
  // The text of a sequence of ids: always valid UTF-8 (a cut multi-byte character becomes U+FFFD).
  virtual std::string decode(std::span<const int32_t> ids) const = 0;
  // The raw bytes one token stands for (for BPE possibly part of a character).
  virtual std::string token_bytes(int32_t id) const = 0;

  std::vector<int32_t> encode(std::string_view text, std::string_view where = "the text") const {
    std::vector<int32_t> out;
    encode(text, out, where);
    return out;
  }

 protected:
  void check_id(int32_t id) const;  // throws when id is not in [0, vocab_size)
};

// Line and column (1-based; columns count code points) of a byte offset in text.
struct TextPosition {
  int64_t line, column;
};
TextPosition position_of(std::string_view text, size_t offset);

}  // namespace tinygpt::data
