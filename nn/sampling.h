#pragma once
// Sampling text from a GPT, in one place: the key/value cache that decodes one position at a time
// (each new token costs one position, not a forward pass over the whole context), the choice of
// the next token from the logits (temperature, top-k, a uniform draw), and text generation with a
// seed (same seed, same text) that goes on past block_size.
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "../data/tokenizer.h"
#include "gpt.h"

namespace tinygpt::nn {

// Incremental decoding over the model's weights, one position at a time, through the modules' row
// forms (Block::forward_row and the rest: GPT::forward's arithmetic for one row, no graph).
class Generator {
 public:
  // Reads `model` as it lives: it must outlive the generator. Encoding again (below) runs the
  // model's own forward pass in eval mode without a graph, then gives it back its mode.
  explicit Generator(GPT& model);
  explicit Generator(GPT&& model) = delete;
  // Appends `token` at the next position and returns the logits [V] of the token that follows it.
  // Past block_size positions a RoPE model goes on, each position attending over the last
  // block_size (the oldest keys dropped, those kept as they were made). A learned-position model,
  // whose positions end at block_size, keeps its last block_size / 2 tokens (this one the last of
  // them), encodes them again from position 0 (the ones before this in one batched forward pass,
  // as GPT::forward computes them) and goes on from there.
  const std::vector<float>& feed(int32_t token);
  bool slides() const;  // whether the cache slides past block_size (RoPE), or is encoded again
  int64_t length() const { return length_; }  // positions in the cache
  void reset() { length_ = 0, tokens_.clear(); }

 private:
  void advance(int32_t token);  // one position through the blocks: x_ is its last residual stream
  void encode_again();          // tokens_ from position 0, in one forward pass: their keys and values
  GPT& model_;
  int64_t length_ = 0;
  std::vector<int32_t> tokens_;  // those in the cache of a learned-position model, to encode again
  std::vector<KVCache> caches_;  // per layer
  RowScratch scratch_;
  std::vector<float> x_, logits_;  // [C] the residual stream, [V]
};

// How the next token is chosen from a model's logits [V].
struct PickOptions {
  double temperature = 0.8;  // 0: the most likely token (the lowest id on ties)
  int64_t top_k = 0;         // among the k most likely (0: all)
  double top_p = 1.0;        // among the fewest most likely whose probabilities sum to top_p or more (1: all)
};

// Choosing the next token: softmax(logits / temperature) over the top_k most likely, then cut to
// the top_p nucleus (both ranked by logit, ties by id), and the draw `uniform` in [0, 1) from the
// caller's own seeded Rng, so the same draw gives the same token.
int32_t pick_token(std::span<const float> logits, const PickOptions& pick, double uniform);

// What a sample without a prompt starts from: the tokenizer's document token (GPT-2's
// <|endoftext|>, a SentencePiece model's BOS), else a newline's ids, else token 0.
std::vector<int32_t> start_of_text(const data::Tokenizer& tokenizer);

enum class EndOfText { stop, go_on };  // at a token that ends a text (Tokenizer::ends_text)

struct SampleOptions {
  std::string prompt;       // empty: start_of_text
  int64_t tokens = 200;     // how many to generate at most
  PickOptions pick;
  std::vector<std::string> stop;  // texts that end the sample where they appear (not part of it)
  EndOfText end_of_text = EndOfText::stop;
  uint64_t seed = kDefaultSeed;
};

enum class StopReason { length, end_of_text, stop_text };
const char* name(StopReason reason);  // "length", "end of text", "stop text"

struct SampleResult {
  std::string text;  // the generated text, without the prompt and without a stop text
  std::vector<int32_t> ids;  // the tokens picked, the one that ended the text included
  StopReason stopped = StopReason::length;
  int64_t prompt_tokens = 0, generated_tokens = 0;  // those fed as context; those picked
  double prompt_seconds = 0, generate_seconds = 0;  // encoding the prompt; the rest
};

// Throws std::invalid_argument naming the flag (--temperature, --top-k, --top-p, --stop) of a
// setting that cannot work: generate checks it first, a command line before it loads a model.
void check(const SampleOptions& options);

// Generates, calling on_text with each piece of valid UTF-8 text as soon as it is complete (a BPE
// token may end inside a character) and cannot be the start of a stop text. Past block_size the
// context goes on as Generator::feed keeps it.
SampleResult generate(nn::GPT& model, const data::Tokenizer& tokenizer, const SampleOptions& options,
                      const std::function<void(const std::string&)>& on_text = {});

}  // namespace tinygpt::nn
