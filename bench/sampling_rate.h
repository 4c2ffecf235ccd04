#pragma once
// The benchmarks' measure of sampling speed: greedy decoding with the key/value cache.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include "tinygpt/nn/sampling.h"

namespace tinygpt::bench {

// Best tokens/s over `rounds` of: feed `prompt` (untimed), then `tokens` greedy steps (timed).
inline double sampling_rate(nn::GPT& model, const std::vector<int32_t>& prompt, int64_t tokens, int rounds = 3) {
  nn::Generator gen(model);
  double best = 0;
  for (int round = 0; round < rounds; ++round) {
    gen.reset();
    int32_t next = 0;
    const auto greedy = [](const std::vector<float>& logits) {
      return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    };
    for (int32_t t : prompt) next = greedy(gen.feed(t));
    const auto t0 = std::chrono::steady_clock::now();
    for (int64_t k = 0; k < tokens; ++k) next = greedy(gen.feed(next));
    best = std::max(best, tokens / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

}  // namespace tinygpt::bench
