#pragma once
// Text <-> token ids. Three kinds (docs/checkpoint-format.md's /tokenizer group): "char" (one token
// per Unicode code point of the training text), "bpe" (byte-level byte-pair encoding; GPT-2's files
// are one) and "sentencepiece" (a SentencePiece model's). Each has an identity, a digest of what
// defines it, so that token ids are never read through another tokenizer than the one that made
// them, and may have a document token, which the corpus puts between files.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
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

// The three kinds, named in files and on the command line as name() gives them.
enum class TokenizerKind { chars, bpe, sentencepiece };
const char* name(TokenizerKind kind);  // "char", "bpe", "sentencepiece"
// The kind `text` names, or nullopt.
std::optional<TokenizerKind> parse_tokenizer_kind(std::string_view text);

// Which tokenizer made a sequence of ids: tokenizers with the same identity give the same ids for
// every text. The digest is SHA-256 over the kind, the vocabulary size and the data that defines
// the tokenizer (a character vocabulary's code points; BPE's split, merges, byte order and special
// tokens; a SentencePiece model's bytes).
struct TokenizerIdentity {
  TokenizerKind kind = TokenizerKind::chars;
  int64_t vocab_size = 0;
  std::array<uint8_t, 32> digest{};

  std::string hex() const;  // the digest as 64 lower-case hex digits
  // "a bpe tokenizer of 400 tokens (digest 3fa2c1d0e4b5)"
  std::string describe() const;
  bool operator==(const TokenizerIdentity&) const = default;
};

struct TokenizerRecord;  // tokenizer_record.h

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  virtual TokenizerKind kind() const = 0;
  virtual int64_t vocab_size() const = 0;
  // Appends the ids of `text` (valid UTF-8) to `out`; `where` names the text in error messages.
  virtual void encode(std::string_view text, std::vector<int32_t>& out, std::string_view where = "the text") const = 0;
  // The text of a sequence of ids: always valid UTF-8 (a cut multi-byte character becomes U+FFFD).
  virtual std::string decode(std::span<const int32_t> ids) const = 0;
  // The raw bytes one token stands for (for BPE possibly part of a character).
  virtual std::string token_bytes(int32_t id) const = 0;
  // The same for the first token of a text, where a tokenizer's decoding may drop what it added
  // on encoding (a SentencePiece model's dummy-prefix space): decode's first bytes.
  virtual std::string first_token_bytes(int32_t id) const { return token_bytes(id); }

  std::vector<int32_t> encode(std::string_view text, std::string_view where = "the text") const {
    std::vector<int32_t> out;
    encode(text, out, where);
    return out;
  }
  // The token that stands between two documents (text files): GPT-2's <|endoftext|>, a
  // SentencePiece model's BOS; none for a character vocabulary or a BPE without <|endoftext|>.
  virtual std::optional<int32_t> document_token() const { return std::nullopt; }
  // Whether `id` ends a text when sampled: the document token (a model trained here predicts it
  // where a document ends), and a SentencePiece model's EOS.
  virtual bool ends_text(int32_t id) const { return id == document_token(); }
  TokenizerIdentity identity() const;
  // What defines it, as a file keeps it (tokenizer_record.h).
  virtual TokenizerRecord record() const = 0;

 protected:
  void check_id(int32_t id) const;  // throws when id is not in [0, vocab_size)
  // Appends the data that defines this tokenizer beyond its kind and size, in a fixed layout.
  virtual void append_definition(std::string& out) const = 0;
};

// Throws std::invalid_argument when `tokenizer` is not the one `expected` describes, naming both:
// "<what> were made by a bpe tokenizer of 400 tokens (digest ...), but <user> has a char tokenizer
// of 65 tokens (digest ...)".
void require_same_tokenizer(const TokenizerIdentity& expected, const std::string& what, const Tokenizer& tokenizer,
                            const std::string& user);

// Line and column (1-based; columns count code points) of a byte offset in text.
struct TextPosition {
  int64_t line, column;
};
TextPosition position_of(std::string_view text, size_t offset);

}  // namespace tinygpt::data
