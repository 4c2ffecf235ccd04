#pragma once
// SPEC.md's evaluation rule: the text's N tokens are cut into windows w = 0, 1, ... with inputs
// tokens[wT, wT + T) and targets shifted by one (the last window possibly shorter); the loss is
// the sum of cross-entropy over all targets divided by their number.
#include <cstdint>

#include "tinygpt/data/token_array.h"
#include "tinygpt/nn/gpt.h"

namespace tinygpt::train {

struct EvalResult {
  double loss = 0, perplexity = 0;
  int64_t tokens = 0;  // targets scored
};

// Full windows go through the model `batch` at a time.
EvalResult evaluate(nn::GPT& model, const data::TokenArray& tokens, int64_t batch = 16);

}  // namespace tinygpt::train
