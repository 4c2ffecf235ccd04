#include "tinygpt/data/token_array.h"

namespace tinygpt::data {

void TokenArray::append(std::span<const int32_t> ids) {
  if (wide_) wide_ids_.insert(wide_ids_.end(), ids.begin(), ids.end());
  else ids_.insert(ids_.end(), ids.begin(), ids.end());
}

void TokenArray::copy_to(int64_t start, int64_t n, int32_t* out) const {
  if (wide_)
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<int32_t>(wide_ids_[start + i]);
  else
    for (int64_t i = 0; i < n; ++i) out[i] = ids_[start + i];
}

TokenArray TokenArray::slice(int64_t start, int64_t end) const {
  TokenArray out;
  out.wide_ = wide_;
  if (wide_) out.wide_ids_.assign(wide_ids_.begin() + start, wide_ids_.begin() + end);
  else out.ids_.assign(ids_.begin() + start, ids_.begin() + end);
  return out;
}

}  // namespace tinygpt::data
