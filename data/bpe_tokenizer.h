#pragma once
// Byte-level BPE: tokens 0..255 are the raw bytes (byte b is token b, or byte_ids[b] in GPT-2's own
// order); merge k joins the pair (a, b) of token ids into token 256 + k. Text is first cut into
// chunks (pretokenize.h) and merges never cross a chunk boundary. Encoding repeatedly merges the
// adjacent pair with the lowest merge index, leftmost first. Special tokens ("<|endoftext|>") are
// found in the text before chunking and become their own ids, never split or merged.
#include <array>
#include <functional>
#include <map>
#include <utility>

#include "pretokenize.h"
#include "tokenizer.h"

namespace tinygpt::data {

using Merge = std::pair<int32_t, int32_t>;

struct SpecialToken {
  std::string text;  // valid UTF-8, not empty, no newline
  int32_t id;        // at least 256 + n_merges
  bool operator==(const SpecialToken&) const = default;
};

// Learns merges from chunk counts: add text in pieces (each piece is cut into chunks on its own),
// then train. Counting is incremental: each merge updates only the words that contain its pair.
class BpeTrainer {
 public:
  explicit BpeTrainer(Split split) : split_(split) {}
  void add(std::string_view text);  // valid UTF-8
  // Learns vocab_size - 256 merges; the most frequent pair wins, ties going to the smallest
  // (a, b). Throws when vocab_size < 256 or when fewer pairs occur at least twice than needed.
  // progress(merges learned, merges wanted) is called as they are learned.
  std::vector<Merge> train(int64_t vocab_size, const std::function<void(int64_t, int64_t)>& progress = {}) const;

 private:
  Split split_;
  std::map<std::string, int64_t, std::less<>> chunk_counts_;
};

class LongestMatches;  // detail/longest_matches.h

class BpeTokenizer : public Tokenizer {
 public:
  // Limits on merges from a file: a list whose merges join earlier merges could make each token
  // twice as long as the one before.
  static constexpr int64_t kMaxMerges = int64_t{1} << 24;
  static constexpr size_t kMaxTokenBytes = size_t{256} << 20;
  static constexpr size_t kMaxSpecials = 65536, kMaxSpecialBytes = 1024;
  static constexpr size_t kMaxSpecialTotalBytes = size_t{2} << 20;  // bounds the matcher: 12 bytes a byte
  static constexpr int32_t kMaxSpecialId = int32_t{1} << 24;  // a vocabulary's limit (nn::kMaxVocab)
  // byte_ids: empty (byte b is token b) or a permutation of 0..255. Throws std::invalid_argument,
  // naming the merge or token, when the pieces do not make a tokenizer.
  BpeTokenizer(std::vector<Merge> merges, Split split, std::vector<int32_t> byte_ids = {},
               std::vector<SpecialToken> specials = {});
  static BpeTokenizer train(std::string_view text, int64_t vocab_size, Split split = Split::gpt2);

  TokenizerKind kind() const override { return TokenizerKind::bpe; }
  // 256 + n_merges, or one past the highest special id (ids between are padding: they decode to "").
  int64_t vocab_size() const override { return static_cast<int64_t>(bytes_.size()); }
  using Tokenizer::encode;
  void encode(std::string_view text, std::vector<int32_t>& out, std::string_view where) const override;
  std::string decode(std::span<const int32_t> ids) const override;
  std::string token_bytes(int32_t id) const override;
  const std::vector<Merge>& merges() const { return merges_; }
  Split split() const { return split_; }
  const std::vector<int32_t>& byte_ids() const { return byte_ids_; }  // empty: byte b is token b
  const std::vector<SpecialToken>& specials() const { return specials_; }
  TokenizerRecord record() const override;
  std::optional<int32_t> document_token() const override;  // <|endoftext|>'s id, when it is a special token

 protected:
  // The split, the merges, every byte's token and the special tokens (by id).
  void append_definition(std::string& out) const override;

 private:
  void encode_chunk(std::string_view chunk, std::vector<int32_t>& out) const;
  void encode_ordinary(std::string_view text, std::vector<int32_t>& out) const;  // no special tokens
  void set_byte_tokens();
  void set_special_tokens();
  void set_ranks();
  int32_t rank(int32_t a, int32_t b) const;  // merge index of the pair, or -1

  std::vector<Merge> merges_;
  Split split_;
  std::vector<int32_t> byte_ids_;
  std::array<int32_t, 256> byte_token_;            // byte -> token id
  std::vector<SpecialToken> specials_;
  std::shared_ptr<const LongestMatches> special_matches_;  // where specials start in a text
  std::vector<std::string> bytes_;                  // what each token stands for
  // pair -> merge index, by open addressing in one flat table: the encoder's most frequent lookup
  struct RankSlot {
    uint64_t pair;
    int32_t rank;
  };
  std::vector<RankSlot> ranks_;
};

}  // namespace tinygpt::data
