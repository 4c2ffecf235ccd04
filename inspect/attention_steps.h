#pragma once
// One attention head's computation, step by step, for one text: Q, K, V and the five operations
// of scaled dot-product attention on them (Q·Kᵀ, ÷√d_k, causal mask, softmax, ·V) as the model
// computes them (`tinygpt attention --steps`).
#include <cstdint>
#include <string>
#include <vector>

#include "../data/tokenizer.h"
#include "../nn/gpt.h"
#include "inspect.h"

namespace tinygpt::inspect {

// Row-major matrices of T query rows; [T, d_k] or [T, T].
struct AttentionSteps {
  std::vector<int32_t> ids;
  std::vector<TokenView> tokens;
  int64_t layer = 0, head = 0, d_k = 0;
  int64_t kv_head = 0, kv_heads = 1, heads = 1;  // the key/value head this query head reads, of kv_heads
  bool bias = true, rope = false;                // the model's c_attn has a bias; Q and K turned by RoPE
  std::vector<float> q, k, v;  // 1. the head's slices of c_attn(ln_1(x)), [T, d_k] each
  std::vector<float> scores;   // 2. Q Kᵀ, every cell (future ones too), [T, T]
  std::vector<float> scaled;   // 3. scores / sqrt(d_k), [T, T]
  std::vector<float> weights;  // 4. softmax over the keys j <= i of row i; 0 for j > i (the model's own bits)
  std::vector<float> output;   // 5. weights V, the head's slice of the attention output (the model's own bits)
  int64_t size() const { return static_cast<int64_t>(tokens.size()); }
};

// Runs the model on `text` (1..block_size tokens) up to `layer` and takes `head` apart. Q, K, V,
// the weights and the output are the values the model's own forward pass computes; scores and
// scaled, which the model computes fused inside its attention kernel (and only for keys a query
// sees), are recomputed here from Q and K with double accumulation.
AttentionSteps attention_steps(nn::GPT& model, const data::Tokenizer& tokenizer, const std::string& text,
                               int64_t layer, int64_t head);

// The steps of `head` (ids, tokens and layer left empty) from its layer's c_attn output qkv
// [1, T, 3C] and causal_self_attention's result on it, its weights kept: attention_steps and
// `tinygpt explain` both take the heads apart here.
AttentionSteps head_steps(const Tensor& qkv, const AttentionResult& result, int64_t n_head, int64_t n_kv_head,
                          int64_t head);

// The steps as text tables: Q, K, V and the output show their first `dims` columns.
std::string attention_steps_text(const AttentionSteps& steps, int64_t dims);
// One JSON object with every matrix at full width (see docs/look-inside.md).
std::string attention_steps_json(const AttentionSteps& steps);
// The steps side by side as labelled heatmaps, each with its colour scale and caption.
std::string attention_steps_svg(const AttentionSteps& steps);

}  // namespace tinygpt::inspect
