#include "batches.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace tinygpt::data {

BatchSampler::BatchSampler(const TokenArray& tokens, int64_t batch, int64_t block, uint64_t seed)
    : BatchSampler(std::vector<const TokenArray*>{&tokens}, {}, batch, block, seed) {}

BatchSampler::BatchSampler(std::vector<const TokenArray*> sources, std::vector<double> weights, int64_t batch,
                           int64_t block, uint64_t seed)
    : sources_(std::move(sources)), batch_(batch), block_(block), rng_(seed), window_(block + 1) {
  if (batch <= 0 || block <= 0)
    throw std::invalid_argument(fmt::format("batch sampler: batch {} and block {} must be positive", batch, block));
  if (sources_.empty() || (sources_.size() > 1 && weights.size() != sources_.size()))
    throw std::invalid_argument(fmt::format("batch sampler: {} sources need as many weights (got {})", sources_.size(),
                                            weights.size()));
  double sum = 0;
  for (double w : weights) {
    if (!(w > 0 && std::isfinite(w))) throw std::invalid_argument(fmt::format("batch sampler: weight {} is not positive", w));
    sum += w;
  }
  for (double w : weights) cumulative_.push_back((cumulative_.empty() ? 0.0 : cumulative_.back()) + w / sum);
  for (size_t k = 0; k < sources_.size(); ++k)
    if (sources_[k]->size() < block + 1)
      throw std::invalid_argument(fmt::format("the training text{} has {} tokens; block size {} needs at least {}",
                                              sources_.size() > 1 ? fmt::format(" of source {}", k + 1) : "",
                                              sources_[k]->size(), block, block + 1));
}

void BatchSampler::next(std::vector<int32_t>& inputs, std::vector<int32_t>& targets) {
  inputs.resize(batch_ * block_);
  targets.resize(batch_ * block_);
  for (int64_t b = 0; b < batch_; ++b) {
    size_t k = 0;
    if (sources_.size() > 1) {  // the first running sum above the draw
      const double u = rng_.uniform();
      while (k + 1 < sources_.size() && cumulative_[k] <= u) ++k;
    }
    const TokenArray& tokens = *sources_[k];
    const auto starts = static_cast<uint64_t>(tokens.size() - block_);  // window starts 0 .. N - T - 1
    tokens.copy_to(static_cast<int64_t>(rng_.below(starts)), block_ + 1, window_.data());
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
