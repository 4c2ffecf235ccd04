#include "tinygpt/data/batches.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace tinygpt::data {

BatchSampler::BatchSampler(const TokenArray& tokens, int64_t batch, int64_t block, uint64_t seed)
    : tokens_(tokens), batch_(batch), block_(block), rng_(seed), window_(block + 1) {
  if (batch <= 0 || block <= 0)
    throw std::invalid_argument(fmt::format("batch sampler: batch {} and block {} must be positive", batch, block));
  if (tokens.size() < block + 1)
    throw std::invalid_argument(fmt::format("the training text has {} tokens; block size {} needs at least {}",
                                            tokens.size(), block, block + 1));
}

void BatchSampler::next(std::vector<int32_t>& inputs, std::vector<int32_t>& targets) {
  inputs.resize(batch_ * block_);
  targets.resize(batch_ * block_);
  const auto starts = static_cast<uint64_t>(tokens_.size() - block_);  // window starts 0 .. N - T - 1
  for (int64_t b = 0; b < batch_; ++b) {
    tokens_.copy_to(static_cast<int64_t>(rng_.below(starts)), block_ + 1, window_.data());
    std::copy_n(window_.begin(), block_, inputs.begin() + b * block_);
    std::copy_n(window_.begin() + 1, block_, targets.begin() + b * block_);
  }
}

std::vector<EvalWindow> evaluation_windows(int64_t n_tokens, int64_t block) {
  std::vector<EvalWindow> windows;
  for (int64_t start = 0; start + 1 < n_tokens; start += block)
    windows.push_back({start, std::min(block, n_tokens - 1 - start)});
  return windows;
}

}  // namespace tinygpt::data
