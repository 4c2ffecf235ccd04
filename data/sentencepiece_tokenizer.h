#pragma once
// SentencePiece tokenizers (Llama's, TinyStories'): text <-> ids exactly as the SentencePiece
// library computes them for a model file (the model's own normalization, pieces and byte
// fallback; encode adds no BOS or EOS). The model's bytes are the tokenizer: a checkpoint stores
// them (docs/checkpoint-format.md, /tokenizer kind "sentencepiece", dataset model_proto), so it needs no other file.
#include <memory>
#include <string>

#include "tokenizer.h"

namespace tinygpt::data {

class SentencePieceTokenizer : public Tokenizer {
 public:
  // A model file's bytes at most (Llama's is 0.5 MB; models with large vocabularies a few MB).
  static constexpr size_t kMaxModelBytes = size_t{64} << 20;
  // Throws std::invalid_argument naming `where` when the bytes are not a SentencePiece model.
  SentencePieceTokenizer(std::string model_proto, const std::string& where);
  ~SentencePieceTokenizer() override;

  TokenizerKind kind() const override { return TokenizerKind::sentencepiece; }
  int64_t vocab_size() const override;
  using Tokenizer::encode;
  void encode(std::string_view text, std::vector<int32_t>& out, std::string_view where) const override;
  std::string decode(std::span<const int32_t> ids) const override;
  // A piece's text with "▁" as a space, a byte piece's byte; control pieces (<s>, </s>) are "".
  std::string token_bytes(int32_t id) const override;
  // Without the space that the model's dummy prefix stands for, where its decoding drops it.
  std::string first_token_bytes(int32_t id) const override;
  const std::string& model_proto() const { return model_proto_; }
  TokenizerRecord record() const override;
  int32_t bos_id() const;  // -1 when the model has none
  int32_t eos_id() const;
  int32_t unk_id() const { return unk_id_; }  // the unknown piece: encode makes a run of them one
  std::string piece(int32_t id) const;  // as the model holds it ("▁the", "<0x0A>", "<s>")
  // A piece with SentencePiece's "▁" (U+2581) written as the space it stands for.
  static std::string with_spaces(std::string piece);
  float score(int32_t id) const;
  std::optional<int32_t> document_token() const override;  // BOS, when the model has one
  bool ends_text(int32_t id) const override { return id == document_token() || (id >= 0 && id == eos_id()); }
  // Whether a text may be cut before a space between two ASCII letters or digits and the parts
  // encoded on their own, the second without that space (the model's dummy prefix stands for it):
  // true when the normalizer and pieces never join text across such a space (Llama's, llama2.c's,
  // SentencePiece's defaults). BPE, word and character models then give the ids of the whole; a
  // unigram model gives each part's best path, which a float sum over a long text rounds coarser.
  bool cuts_at_spaces() const { return cuts_at_spaces_; }
  // Whether such cuts give the ids of the whole text: cuts_at_spaces() and not a unigram model.
  bool cuts_change_nothing() const { return cuts_change_nothing_; }

 protected:
  void append_definition(std::string& out) const override { out += model_proto_; }  // the model's bytes

 private:
  struct Processor;  // the SentencePiece library's, out of this header
  std::string model_proto_;
  bool cuts_at_spaces_ = false, cuts_change_nothing_ = false;
  int32_t unk_id_ = 0;
  std::unique_ptr<Processor> processor_;
};

}  // namespace tinygpt::data
