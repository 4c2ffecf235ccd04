#pragma once
// A corpus as token ids, 2 bytes per token when the vocabulary fits in 16 bits, else 4.
#include <cstdint>
#include <span>
#include <vector>

namespace tinygpt::data {

class TokenArray {
 public:
  explicit TokenArray(int64_t vocab_size = 0) : wide_(vocab_size > 65536) {}
  int64_t size() const { return wide_ ? static_cast<int64_t>(wide_ids_.size()) : static_cast<int64_t>(ids_.size()); }
  int32_t operator[](int64_t i) const { return wide_ ? static_cast<int32_t>(wide_ids_[i]) : ids_[i]; }
  void append(std::span<const int32_t> ids);
  // out[0..n) = ids [start, start + n)
  void copy_to(int64_t start, int64_t n, int32_t* out) const;
  TokenArray slice(int64_t start, int64_t end) const;
  int64_t bytes() const { return size() * (wide_ ? 4 : 2); }

 private:
  bool wide_;
  std::vector<uint16_t> ids_;
  std::vector<uint32_t> wide_ids_;
};

}  // namespace tinygpt::data
