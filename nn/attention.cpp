#include "attention.h"

#include <fmt/format.h>

#include <stdexcept>

namespace tinygpt::nn {

namespace {
int64_t checked_heads(int64_t embed_dim, int64_t num_heads) {
  if (embed_dim <= 0 || num_heads <= 0 || embed_dim % num_heads != 0)
    throw std::invalid_argument(fmt::format("MultiheadAttention: embed_dim {} is not a positive multiple of "
                                            "num_heads {}", embed_dim, num_heads));
  return num_heads;
}
}  // namespace

MultiheadAttention::MultiheadAttention(int64_t E, int64_t num_heads, MultiheadAttentionOptions o,
                                       std::optional<uint64_t> seed)
    : q_proj(E, E, o.bias), k_proj(E, E, o.bias), v_proj(E, E, o.bias), out_proj(E, E, o.bias),
      num_heads_(checked_heads(E, num_heads)), causal_(o.causal) {
  if (seed) keep_own_seed(*seed);
  register_module("q_proj", q_proj);
  register_module("k_proj", k_proj);
  register_module("v_proj", v_proj);
  register_module("out_proj", out_proj);
}

AttentionResult MultiheadAttention::forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                            const Tensor& key_padding_mask) {
  const int64_t E = q_proj.weight.size(1);
  if (query.dim() != 3 || key.dim() != 3 || value.dim() != 3 || query.size(2) != E || key.size(2) != E ||
      value.size(2) != E || key.size(1) != value.size(1) || query.size(0) != key.size(0) ||
      key.size(0) != value.size(0))
    throw std::invalid_argument(fmt::format("MultiheadAttention: query {}, key {}, value {}: want [B, Tq, {}], "
                                            "[B, Tk, {}], [B, Tk, {}]", to_string(query.shape()),
                                            to_string(key.shape()), to_string(value.shape()), E, E, E));
  if (causal_ && (query.size(1) != key.size(1) || key_padding_mask.defined()))
    throw std::invalid_argument("MultiheadAttention: causal attention needs queries and keys of one length and no "
                                "padding mask");
  const int64_t B = query.size(0), hs = E / num_heads_;
  // [B, T, E] -> [B, heads, T, hs]: each head's slice of the projection.
  auto heads = [&](const Tensor& x) { return x.view({B, x.size(1), num_heads_, hs}).transpose(1, 2); };
  const Tensor q = heads(q_proj.forward(query)), k = heads(k_proj.forward(key)), v = heads(v_proj.forward(value));
  AttentionResult r = causal_ ? causal_attention(q, k, v) : attention(q, k, v, key_padding_mask);
  const Tensor merged = r.y.transpose(1, 2).reshape({B, query.size(1), E});  // heads side by side again
  return {out_proj.forward(merged), r.weights};
}

}  // namespace tinygpt::nn
