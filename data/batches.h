#pragma once
// Training batches (random windows) and evaluation windows (the evaluation rule, docs/checkpoint-format.md).
#include <cstdint>
#include <string>
#include <vector>

#include "../autograd/random.h"
#include "token_array.h"

namespace tinygpt::data {

// B windows of T + 1 consecutive tokens, each starting uniformly at random: inputs are the first T,
// targets the last T (shifted by one). The RNG state is the sampler's whole state, so a restored
// sampler yields exactly the batches the original would have.
class BatchSampler {
 public:
  // Reads `tokens` for as long as it lives: they must outlive it (a temporary is refused).
  BatchSampler(const TokenArray& tokens, int64_t batch, int64_t block, uint64_t seed);
  BatchSampler(TokenArray&& tokens, int64_t batch, int64_t block, uint64_t seed) = delete;
  // A mixture: each window comes from source k with probability weights[k] / sum(weights) (one
  // uniform draw), then starts uniformly at random inside it. The sources must outlive it.
  BatchSampler(std::vector<const TokenArray*> sources, std::vector<double> weights, int64_t batch, int64_t block,
               uint64_t seed);
  void next(std::vector<int32_t>& inputs, std::vector<int32_t>& targets);  // each [B * T], row-major
  const Rng::State& state() const { return rng_.state(); }
  void set_state(const Rng::State& state) { rng_.set_state(state); }

 private:
  std::vector<const TokenArray*> sources_;
  std::vector<double> cumulative_;  // the weights' running sums, the last 1 (empty: one source)
  int64_t batch_, block_;
  Rng rng_;
  std::vector<int32_t> window_;
};

// Evaluation windows: w = 0, 1, ... while w T + 1 < N; inputs tokens[wT, wT + len), targets
// tokens[wT + 1, wT + len + 1), len = min(T, N - 1 - wT). Every target is covered exactly once.
struct EvalWindow {
  int64_t start, length;
};
std::vector<EvalWindow> evaluation_windows(int64_t n_tokens, int64_t block);

}  // namespace tinygpt::data
