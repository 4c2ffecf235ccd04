#pragma once
// Text generation from a trained model: temperature, top-k, a seed (same seed, same text), and a
// key/value cache; when the context is full it slides to the last block_size tokens.
#include <cstdint>
#include <functional>
#include <string>

#include "tinygpt/data/tokenizer.h"
#include "tinygpt/nn/gpt.h"

namespace tinygpt::train {

struct SampleOptions {
  std::string prompt;       // empty: start from a newline (or token 0 if the vocabulary has none)
  int64_t tokens = 200;     // how many to generate
  double temperature = 0.8; // 0: always the most likely token
  int64_t top_k = 0;        // 0: all tokens
  uint64_t seed = 1337;
};

// Generates, calling on_text with each piece of valid UTF-8 text as soon as it is complete
// (a BPE token may end inside a character). Returns the generated text (without the prompt).
std::string generate(const nn::GPT& model, const data::Tokenizer& tokenizer, const SampleOptions& options,
                     const std::function<void(const std::string&)>& on_text = {});

}  // namespace tinygpt::train
