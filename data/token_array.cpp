#include "token_array.h"

#include <fmt/format.h>

#include <algorithm>
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

TokenArray TokenArray::concat(std::vector<TokenArray> parts) {
  TokenArray out;
  out.part_starts_ = {0};
  for (const TokenArray& p : parts) out.part_starts_.push_back(out.part_starts_.back() + p.size());
  out.parts_ = std::make_shared<const std::vector<TokenArray>>(std::move(parts));
  return out;
}

int64_t TokenArray::bytes() const {
  if (!parts_) return shards_ ? 0 : size() * (wide_ ? 4 : 2);
  int64_t total = 0;
  for (const TokenArray& p : *parts_) total += p.bytes();
  return total;
}

int32_t TokenArray::operator[](int64_t i) const {
  if (parts_ || shards_) {
    int32_t id = 0;
    copy_to(i, 1, &id);
    return id;
  }
  return wide_ ? static_cast<int32_t>(wide_ids_[i]) : ids_[i];
}

void TokenArray::append(std::span<const int32_t> ids) {
  if (shards_ || parts_) throw std::logic_error("TokenArray: tokens read where they are cannot be appended to");
  if (wide_) wide_ids_.insert(wide_ids_.end(), ids.begin(), ids.end());
  else ids_.insert(ids_.end(), ids.begin(), ids.end());
}

void TokenArray::copy_to(int64_t start, int64_t n, int32_t* out) const {
  if (parts_) {  // part by part, from the one that holds `start`
    auto k = static_cast<size_t>(std::upper_bound(part_starts_.begin(), part_starts_.end() - 1, start) -
                                 part_starts_.begin()) - 1;
    for (; n > 0; ++k) {
      const int64_t offset = start - part_starts_[k], take = std::min(n, part_starts_[k + 1] - start);
      (*parts_)[k].copy_to(offset, take, out);
      out += take, start += take, n -= take;
    }
    return;
  }
  if (shards_) return shards_->read(offset_ + start, n, out);
  if (wide_)
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<int32_t>(wide_ids_[start + i]);
  else
    for (int64_t i = 0; i < n; ++i) out[i] = ids_[start + i];
}

TokenArray TokenArray::slice(int64_t start, int64_t end) const {
  if (parts_) {
    std::vector<TokenArray> pieces;
    for (size_t k = 0; k + 1 < part_starts_.size(); ++k) {
      const int64_t from = std::max(start, part_starts_[k]), to = std::min(end, part_starts_[k + 1]);
      if (from < to) pieces.push_back((*parts_)[k].slice(from - part_starts_[k], to - part_starts_[k]));
    }
    return concat(std::move(pieces));
  }
  if (shards_) return of_shards(shards_, offset_ + start, offset_ + end);
  TokenArray out;
  out.wide_ = wide_;
  if (wide_) out.wide_ids_.assign(wide_ids_.begin() + start, wide_ids_.begin() + end);
  else out.ids_.assign(ids_.begin() + start, ids_.begin() + end);
  return out;
}

}  // namespace tinygpt::data
