#pragma once
// A corpus as token ids: in memory, 2 bytes per token when the vocabulary fits in 16 bits, else 4;
// or a stretch of token shards on disk (shards.h), read as they are needed and never loaded; or
// several of these end to end (the splits of several shard folders).
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "shards.h"

namespace tinygpt::data {

class TokenArray {
 public:
  explicit TokenArray(int64_t vocab_size = 0) : wide_(vocab_size > 65536) {}
  // Tokens [start, end) of the shards, read in place.
  static TokenArray of_shards(std::shared_ptr<const ShardSet> shards, int64_t start, int64_t end);
  // `parts` end to end, read where they are.
  static TokenArray concat(std::vector<TokenArray> parts);

  int64_t size() const {
    if (parts_) return part_starts_.back();
    return shards_ ? count_ : wide_ ? static_cast<int64_t>(wide_ids_.size()) : static_cast<int64_t>(ids_.size());
  }
  int32_t operator[](int64_t i) const;
  void append(std::span<const int32_t> ids);  // in memory, not of parts
  // out[0..n) = ids [start, start + n)
  void copy_to(int64_t start, int64_t n, int32_t* out) const;
  TokenArray slice(int64_t start, int64_t end) const;  // of shards or parts: a view of them
  int64_t bytes() const;  // in memory
  const ShardSet* shards() const { return shards_.get(); }

 private:
  bool wide_;
  std::vector<uint16_t> ids_;
  std::vector<uint32_t> wide_ids_;
  std::shared_ptr<const ShardSet> shards_;
  int64_t offset_ = 0, count_ = 0;  // the view's stretch of the shards
  std::shared_ptr<const std::vector<TokenArray>> parts_;
  std::vector<int64_t> part_starts_;  // parts_'s first token in the whole, and the total last
};

}  // namespace tinygpt::data
