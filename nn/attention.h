#pragma once
// Multi-head attention as a module, for models of one's own (PyTorch's nn.MultiheadAttention with
// batch_first): queries from one sequence look at keys and values from another (or the same).
// Each head h takes its slice of q_proj(query), k_proj(key), v_proj(value), computes
// softmax(q kᵀ / sqrt(d_k)) v, and out_proj mixes the heads back together. causal: each query sees
// its own and earlier positions only (self-attention, the GPT's rule; the fast fused kernel).
// The GPT's own layer is CausalSelfAttention (gpt.h): one fused c_attn, RoPE and grouped heads.
#include <cstdint>
#include <optional>

#include "../autograd/ops.h"
#include "layers.h"
#include "module.h"

namespace tinygpt::nn {

struct MultiheadAttentionOptions {
  bool bias = true;     // on the four projections
  bool causal = false;  // a query never sees later keys (query and key of the same length)
};

class MultiheadAttention : public Module {
 public:
  // embed_dim must be a multiple of num_heads (each head gets embed_dim / num_heads).
  MultiheadAttention(int64_t embed_dim, int64_t num_heads, MultiheadAttentionOptions options = {},
                     std::optional<uint64_t> seed = std::nullopt);
  // query [B, Tq, E], key and value [B, Tk, E]; key_padding_mask [B, Tk], nonzero at keys to
  // ignore (not with causal). Returns y [B, Tq, E] and the weights [B, heads, Tq, Tk] (undefined
  // where the causal kernel keeps none).
  AttentionResult forward(const Tensor& query, const Tensor& key, const Tensor& value,
                          const Tensor& key_padding_mask = {});
  // Self-attention: forward(x, x, x).
  AttentionResult forward(const Tensor& x) { return forward(x, x, x); }
  int64_t num_heads() const { return num_heads_; }
  Linear q_proj, k_proj, v_proj, out_proj;

 private:
  int64_t num_heads_;
  bool causal_;
};

}  // namespace tinygpt::nn
