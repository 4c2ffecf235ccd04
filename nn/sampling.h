#pragma once
// Sampling text from a GPT, in one place: the key/value cache that decodes one position at a time
// (each new token costs one position, not a forward pass over the whole context), the choice of
// the next token from the logits (temperature, top-k, a uniform draw), and text generation with a
// seed (same seed, same text) that slides the context past block_size.
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "tinygpt/data/tokenizer.h"
#include "tinygpt/nn/gpt.h"

namespace tinygpt::nn {

// Incremental decoding over the model's weights with the ops' own row functions (no graph, no
// gradients).
class Generator {
 public:
  explicit Generator(const GPT& model);  // reads `model` as it lives: it must outlive the generator
  explicit Generator(GPT&& model) = delete;
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
  std::vector<std::vector<float>> keys_, values_;  // per layer: [block_size, n_kv_head hs]
  std::vector<float> x_, normed_, qkv_, heads_, angles_, hidden_, out_, scores_, logits_;
};

// Choosing the next token from a model's logits [V]. The caller draws `uniform` in [0, 1) (from
// its own seeded Rng), so the same draw gives the same token.
// temperature 0: the most likely token (the lowest id on ties). Else softmax(logits / temperature)
// over the top_k most likely (0: all), ties broken by id.
int32_t pick_token(std::span<const float> logits, double temperature, int64_t top_k, double uniform);


// What a sample without a prompt starts from: the tokenizer's document token (GPT-2's
// <|endoftext|>, a SentencePiece model's BOS), else a newline's ids, else token 0.
std::vector<int32_t> start_of_text(const data::Tokenizer& tokenizer);

struct SampleOptions {
  std::string prompt;       // empty: start_of_text
  int64_t tokens = 200;     // how many to generate
  double temperature = 0.8; // 0: always the most likely token
  int64_t top_k = 0;        // 0: all tokens
  uint64_t seed = kDefaultSeed;
};

// Generates, calling on_text with each piece of valid UTF-8 text as soon as it is complete
// (a BPE token may end inside a character). Returns the generated text (without the prompt).
std::string generate(const nn::GPT& model, const data::Tokenizer& tokenizer, const SampleOptions& options,
                     const std::function<void(const std::string&)>& on_text = {});

}  // namespace tinygpt::nn
