#include "tinygpt/data/token_array.h"

#include <fmt/format.h>

#include <stdexcept>

namespace tinygpt::data {

TokenArray TokenArray::of_shards(std::shared_ptr<const ShardSet> shards, int64_t start, int64_t end) {
  if (start < 0 || end < start || end > shards->size())
    throw std::out_of_range(fmt::format("TokenArray: [{}, {}) is outside the shards' {} tokens", start, end,
                                        shards->size()));
  TokenArray out(shards->token_bytes() == 4 ? int64_t{1} << 20 : 0);
  out.shards_ = std::move(shards);
  out.offset_ = start, out.count_ = end - start;
  return out;
}

int32_t TokenArray::operator[](int64_t i) const {
  if (shards_) {
    int32_t id = 0;
    shards_->read(offset_ + i, 1, &id);
    return id;
  }
  return wide_ ? static_cast<int32_t>(wide_ids_[i]) : ids_[i];
}

void TokenArray::append(std::span<const int32_t> ids) {
  if (shards_) throw std::logic_error("TokenArray: tokens read from shards cannot be appended to");
  if (wide_) wide_ids_.insert(wide_ids_.end(), ids.begin(), ids.end());
  else ids_.insert(ids_.end(), ids.begin(), ids.end());
}

void TokenArray::copy_to(int64_t start, int64_t n, int32_t* out) const {
  if (shards_) return shards_->read(offset_ + start, n, out);
  if (wide_)
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<int32_t>(wide_ids_[start + i]);
  else
    for (int64_t i = 0; i < n; ++i) out[i] = ids_[start + i];
}

TokenArray TokenArray::slice(int64_t start, int64_t end) const {
  if (shards_) return of_shards(shards_, offset_ + start, offset_ + end);
  TokenArray out;
  out.wide_ = wide_;
  if (wide_) out.wide_ids_.assign(wide_ids_.begin() + start, wide_ids_.begin() + end);
  else out.ids_.assign(ids_.begin() + start, ids_.begin() + end);
  return out;
}

}  // namespace tinygpt::data
