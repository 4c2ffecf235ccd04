#pragma once
// Incremental decoding with a key/value cache: each new token costs one position, not a forward
// pass over the whole context. Plain loops over the model's weights (no graph, no gradients).
#include <cstdint>
#include <vector>

#include "tinygpt/nn/gpt.h"

namespace tinygpt::nn {

class Generator {
 public:
  explicit Generator(const GPT& model);
  // Appends `token` at the next position (at most block_size) and returns the logits [V] of the
  // token that follows it.
  const std::vector<float>& feed(int32_t token);
  int64_t length() const { return length_; }
  void reset() { length_ = 0; }

 private:
  void attend(int64_t layer);  // x += c_proj(attention of this position over the cache)
  void feed_forward(int64_t layer);

  const GPT& model_;
  int64_t length_ = 0;
  std::vector<std::vector<float>> keys_, values_;  // per layer: [block_size, C]
  std::vector<float> x_, normed_, qkv_, heads_, hidden_, out_, scores_, logits_;
};

}  // namespace tinygpt::nn
