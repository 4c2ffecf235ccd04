#pragma once
// Token ids drawn from a seed, for model tests.
#include <cstdint>
#include <vector>

#include "tinygpt/autograd/random.h"

namespace tinygpt::testing {

inline std::vector<int32_t> random_ids(int64_t n, int64_t vocab, uint64_t seed) {
  Rng rng(seed);
  std::vector<int32_t> ids(static_cast<size_t>(n));
  for (auto& id : ids) id = static_cast<int32_t>(rng.below(static_cast<uint64_t>(vocab)));
  return ids;
}

}  // namespace tinygpt::testing
