#pragma once
// The evaluation rule (docs/checkpoint-format.md): the text's N tokens are cut into windows w = 0, 1, ... with inputs
// tokens[wT, wT + T) and targets shifted by one (the last window possibly shorter); the loss is
// the sum of cross-entropy over all targets divided by their number.
#include <cstdint>

#include "tinygpt/data/token_array.h"
#include "tinygpt/data/tokenizer.h"
#include "tinygpt/nn/gpt.h"

namespace tinygpt::train {

struct EvalResult {
  double loss = 0, perplexity = 0;  // nats per token
  int64_t tokens = 0;               // targets scored
  // With the tokenizer: the UTF-8 bytes that the targets spell (every token but the first), and
  // bits per byte = loss * tokens / (bytes * ln 2), which compares models with different tokenizers.
  int64_t bytes = 0;
  double bits_per_byte = 0;
};

// Full windows go through the model `batch` at a time.
EvalResult evaluate(nn::GPT& model, const data::TokenArray& tokens, int64_t batch = 16);
// The same, with bytes and bits_per_byte.
EvalResult evaluate(nn::GPT& model, const data::Tokenizer& tokenizer, const data::TokenArray& tokens,
                    int64_t batch = 16);

}  // namespace tinygpt::train
