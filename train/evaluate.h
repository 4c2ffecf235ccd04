#pragma once
// The evaluation rule (docs/checkpoint-format.md): the text's N tokens are cut into windows w = 0, 1, ... with inputs
// tokens[wT, wT + T) and targets shifted by one (the last window possibly shorter); the loss is
// the sum of cross-entropy over all targets divided by their number.
#include <cstdint>

#include "../data/token_array.h"
#include "../data/tokenizer.h"
#include "../nn/gpt.h"

namespace tinygpt::train {

// What bits per byte divides by: the UTF-8 bytes of the text read (text files), or, for tokens
// read without their text (shards), the bytes their targets spell (a tokenizer that normalizes or
// drops characters spells fewer than the text had).
enum class ByteCount { text, tokens };
const char* name(ByteCount of);  // "text", "tokens"

struct EvalResult {
  double loss = 0, perplexity = 0;  // nats per token
  int64_t tokens = 0;               // targets scored
  // bits per byte = loss * tokens / (bytes * ln 2), which compares models with different tokenizers.
  int64_t bytes = 0;
  ByteCount bytes_of = ByteCount::text;
  double bits_per_byte = 0;
};

// Full windows go through the model `batch` at a time (no bytes).
EvalResult evaluate(nn::GPT& model, const data::TokenArray& tokens, int64_t batch = 16);
// The result with its bits per byte over `bytes`.
EvalResult per_byte(EvalResult r, int64_t bytes, ByteCount of);
// The UTF-8 bytes that the tokens spell, every one (as a text's bytes are all counted).
int64_t spelled_bytes(const data::Tokenizer& tokenizer, const data::TokenArray& tokens);

}  // namespace tinygpt::train
