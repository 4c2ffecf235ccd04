#pragma once
// Byte-level BPE: tokens 0..255 are the raw bytes; merge k joins the pair (a, b) into token 256 + k.
// Text is first cut into chunks (pretokenize.h) and merges never cross a chunk boundary. Encoding
// repeatedly merges the adjacent pair with the lowest merge index, leftmost first.
#include <map>
#include <unordered_map>
#include <utility>

#include "tinygpt/data/pretokenize.h"
#include "tinygpt/data/tokenizer.h"

namespace tinygpt::data {

using Merge = std::pair<int32_t, int32_t>;

// Learns merges from chunk counts: add text in pieces (each piece is cut into chunks on its own),
// then train. Counting is incremental: each merge updates only the words that contain its pair.
class BpeTrainer {
 public:
  explicit BpeTrainer(Split split) : split_(split) {}
  void add(std::string_view text);  // valid UTF-8
  // Learns vocab_size - 256 merges; the most frequent pair wins, ties going to the smallest
  // (a, b). Throws when vocab_size < 256 or when fewer pairs occur at least twice than needed.
  std::vector<Merge> train(int64_t vocab_size) const;

 private:
  Split split_;
  std::map<std::string, int64_t, std::less<>> chunk_counts_;
};

class BpeTokenizer : public Tokenizer {
 public:
  // Limits on merges from a file: a list whose merges join earlier merges could make each token
  // twice as long as the one before.
  static constexpr int64_t kMaxMerges = int64_t{1} << 24;
  static constexpr size_t kMaxTokenBytes = size_t{256} << 20;
  BpeTokenizer(std::vector<Merge> merges, Split split);
  static BpeTokenizer train(std::string_view text, int64_t vocab_size, Split split = Split::gpt2);

  const char* kind() const override { return "bpe"; }
  int64_t vocab_size() const override { return 256 + static_cast<int64_t>(merges_.size()); }
  using Tokenizer::encode;
  void encode(std::string_view text, std::vector<int32_t>& out, std::string_view where) const override;
  std::string decode(std::span<const int32_t> ids) const override;
  std::string token_bytes(int32_t id) const override;
  const std::vector<Merge>& merges() const { return merges_; }
  Split split() const { return split_; }

 private:
  void encode_chunk(std::string_view chunk, std::vector<int32_t>& out) const;
  int32_t rank(int32_t a, int32_t b) const;  // merge index of the pair, or -1

  std::vector<Merge> merges_;
  Split split_;
  std::vector<std::string> bytes_;                  // what each token stands for
  std::unordered_map<uint64_t, int32_t> ranks_;     // pair -> merge index
};

}  // namespace tinygpt::data
