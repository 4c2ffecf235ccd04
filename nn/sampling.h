#pragma once
// Choosing the next token from a model's logits [V]: temperature and top-k. The caller draws
// `uniform` in [0, 1) (from its own seeded Rng), so the same draw gives the same token.
#include <cstdint>
#include <span>

namespace tinygpt::nn {

// temperature 0: the most likely token (the lowest id on ties). Else softmax(logits / temperature)
// over the top_k most likely (0: all), ties broken by id.
int32_t pick_token(std::span<const float> logits, double temperature, int64_t top_k, double uniform);

}  // namespace tinygpt::nn
