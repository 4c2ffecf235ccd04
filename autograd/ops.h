#pragma once
// Every differentiable operation. Each op's forward and backward live side by side in ops/<family>.cpp.
#include <cstdint>
#include <span>
#include <vector>

#include "tinygpt/autograd/tensor.h"

namespace tinygpt {

// Elementwise with NumPy broadcasting (ops/elementwise.cpp).
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor add_scalar(const Tensor& x, float s);
Tensor mul_scalar(const Tensor& x, float s);
Tensor rsub_scalar(const Tensor& x, float s);  // s - x
Tensor neg(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor relu(const Tensor& x);
Tensor gelu(const Tensor& x);  // tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
Tensor sigmoid(const Tensor& x);        // 1 / (1 + exp(-x))
Tensor silu(const Tensor& x);           // x * sigmoid(x) (also called swish)
Tensor pow(const Tensor& x, float p);   // x^p elementwise
Tensor abs(const Tensor& x);
Tensor leaky_relu(const Tensor& x, float slope = 0.01f);  // x, or slope * x below 0
Tensor sin(const Tensor& x);
Tensor cos(const Tensor& x);
Tensor log1p(const Tensor& x);                  // log(1 + x), exact near 0
Tensor softplus(const Tensor& x);               // log(1 + exp(x)), without overflow
Tensor clamp(const Tensor& x, float lo, float hi);  // min(max(x, lo), hi); gradient 1 inside [lo, hi], else 0

inline Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
inline Tensor operator-(const Tensor& x) { return neg(x); }
inline Tensor operator+(const Tensor& x, float s) { return add_scalar(x, s); }
inline Tensor operator+(float s, const Tensor& x) { return add_scalar(x, s); }
inline Tensor operator-(const Tensor& x, float s) { return add_scalar(x, -s); }
inline Tensor operator-(float s, const Tensor& x) { return rsub_scalar(x, s); }
inline Tensor operator*(const Tensor& x, float s) { return mul_scalar(x, s); }
inline Tensor operator*(float s, const Tensor& x) { return mul_scalar(x, s); }
inline Tensor operator/(const Tensor& x, float s) { return mul_scalar(x, 1.0f / s); }

// Reductions (ops/reduce.cpp). Empty `axes` means all axes.
Tensor sum(const Tensor& x, Axes axes = {}, bool keepdim = false);
Tensor mean(const Tensor& x, Axes axes = {}, bool keepdim = false);
// Sums a broadcast result back down to `shape` (the backward of broadcasting).
Tensor sum_to_shape(const Tensor& x, const Shape& shape);

// Largest (smallest) values along `axis` (ops/select.cpp); the gradient flows to the position of
// each, the first one on ties; NaN counts as largest (and smallest), as in PyTorch.
Tensor max(const Tensor& x, int64_t axis, bool keepdim = false);
Tensor min(const Tensor& x, int64_t axis, bool keepdim = false);
// Those positions along `axis`, row-major over the other axes (no gradient).
std::vector<int64_t> argmax(const Tensor& x, int64_t axis);
std::vector<int64_t> argmin(const Tensor& x, int64_t axis);
// a where condition != 0, else b; the three broadcast together (ops/select.cpp).
Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b);
// x with `value` where mask != 0 (mask broadcasts to x's shape); no gradient flows there.
Tensor masked_fill(const Tensor& x, const Tensor& mask, float value);

// Losses, means over every element (ops/losses.cpp); shapes must match.
Tensor mse_loss(const Tensor& prediction, const Tensor& target);  // mean((prediction - target)^2)
// mean(max(x, 0) - x t + log(1 + exp(-|x|))): binary cross-entropy of sigmoid(x) against t in
// [0, 1], computed from the logits x without forming sigmoid(x).
Tensor binary_cross_entropy_with_logits(const Tensor& logits, const Tensor& target);

// Shape (views in ops/views.cpp, concat in ops/concat.cpp).
// Pieces of `size` along axis (views); concat(split(x, n, a), a) is x.
std::vector<Tensor> split(const Tensor& x, int64_t size, int64_t axis);
Tensor concat(const std::vector<Tensor>& xs, int64_t axis);

// [..., M, K] @ [..., K, N] -> [..., M, N], batch axes broadcast; a transposed operand is read
// in place, without a copy (ops/matmul.cpp).
Tensor matmul(const Tensor& a, const Tensor& b);

// A Linear layer in one op: y = x Wᵀ + b, x [..., in], weight [out, in] (PyTorch's layout), bias
// [out] or undefined. One gemm adds onto rows preset to the bias; backward is two gemms and a
// column sum, with no intermediate tensor (ops/matmul.cpp).
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias);

// Over the last axis (ops/softmax.cpp).
Tensor softmax(const Tensor& x);
Tensor log_softmax(const Tensor& x);

// Mean cross-entropy of logits [N, V] (or [..., V]) against integer targets (one per row);
// rows whose target is ignore_index are left out of the mean (ops/cross_entropy.cpp).
Tensor cross_entropy(const Tensor& logits, std::span<const int32_t> targets, int32_t ignore_index = -100);
// The same with int64 targets (argmax's type, libtorch's index type).
Tensor cross_entropy(const Tensor& logits, std::span<const int64_t> targets, int32_t ignore_index = -100);
inline Tensor cross_entropy(const Tensor& logits, const std::vector<int64_t>& targets, int32_t ignore_index = -100) {
  return cross_entropy(logits, std::span<const int64_t>(targets), ignore_index);
}
inline Tensor cross_entropy(const Tensor& logits, const std::vector<int32_t>& targets, int32_t ignore_index = -100) {
  return cross_entropy(logits, std::span<const int32_t>(targets), ignore_index);
}

// LayerNorm over the last axis with weight and bias [C], bias undefined for none (ops/layernorm.cpp).
Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, float eps = 1e-5f);

// RMSNorm over the last axis with weight [C]: x / sqrt(mean(x²) + eps) * weight (ops/rmsnorm.cpp).
Tensor rms_norm(const Tensor& x, const Tensor& weight, float eps = 1e-5f);

// Rotary position embedding (ops/rope.cpp), llama2.c's pairing: x [..., T, D] holds heads of
// head_size side by side (a fused qkv's queries, then keys, then values); in each of the first
// rotated_heads heads the pair (2i, 2i+1) of position pos = start + t turns by the angle
// pos * theta^(-2i / head_size). The other columns pass through unchanged.
Tensor rope(const Tensor& x, int64_t head_size, int64_t rotated_heads, float theta = 10000.0f, int64_t start = 0);
// The angles' cos and sin for positions 0 .. positions - 1, [positions, head_size]: pair i's at
// columns 2i and 2i + 1. A model computes them once and turns every layer's heads with them.
Tensor rope_angles(int64_t positions, int64_t head_size, float theta = 10000.0f);
Tensor rope(const Tensor& x, int64_t head_size, int64_t rotated_heads, const Tensor& angles, int64_t start = 0);

// SwiGLU (ops/swiglu.cpp): x [..., 2H] is a gate and an up projection side by side;
// y [..., H] = silu(gate) * up.
Tensor swiglu(const Tensor& x);

// Rows of weight [V, C] picked by ids: result [ids_shape..., C] (ops/embedding.cpp).
Tensor embedding(const Tensor& weight, std::span<const int32_t> ids, const Shape& ids_shape);

// Causal scaled-dot-product attention (ops/attention.cpp).
// query, key, value: [B, nh, T, hs] (any strides with a unit last stride are read in place).
// Returns y [B, nh, T, hs], stored as [B, T, nh, hs] so that y.transpose(1, 2) is contiguous, and
// weights [B, nh, T, T]: softmax(q k^T / sqrt(hs)) with the future (key > query) exactly 0.
struct AttentionResult {
  Tensor y;
  Tensor weights;  // no gradient; for looking inside the model; undefined when tiled
};
// What the backward pass keeps. `weights`: the [B, nh, T, T] weights (readable; fastest for short
// contexts). `tiled` (flash-attention style): nothing beyond q, k, v; backward recomputes the
// weights one block of query rows at a time, so the extra memory is a few rows of T per thread
// instead of T x T per head. `automatic`: tiled from T = kTiledAttentionFrom on.
enum class AttentionMemory { automatic, weights, tiled };
constexpr int64_t kTiledAttentionFrom = 512;
inline bool attention_is_tiled(AttentionMemory memory, int64_t T) {
  return memory == AttentionMemory::tiled || (memory == AttentionMemory::automatic && T >= kTiledAttentionFrom);
}
// Grouped-query attention: key and value may have fewer heads, [B, g, T, hs] with g dividing nh;
// query head h then reads key/value head h / (nh / g) (g = 1: multi-query attention).
AttentionResult causal_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                 AttentionMemory memory = AttentionMemory::automatic);
// The same from a Linear layer's fused output qkv [B, T, (n_head + 2 n_kv_head) hs]: the n_head
// query heads, then the n_kv_head key heads, then as many value heads, side by side. y comes back
// with its heads merged, [B, T, n_head hs]. The heads are read in place and their gradients written
// straight into qkv's, so the split, the head views and their gradient copies cost nothing.
AttentionResult causal_self_attention(const Tensor& qkv, int64_t n_head, int64_t n_kv_head,
                                      AttentionMemory memory = AttentionMemory::automatic);
// Every head its own key and value: qkv [B, T, 3C].
inline AttentionResult causal_self_attention(const Tensor& qkv, int64_t n_head,
                                             AttentionMemory memory = AttentionMemory::automatic) {
  return causal_self_attention(qkv, n_head, n_head, memory);
}

// Attention over every key, for encoders (ops/full_attention.cpp): weights = softmax(q kᵀ / sqrt(d_k))
// over the keys, y = weights v; query [B, nh, Tq, d_k], key [B, nh, Tk, d_k], value [B, nh, Tk, d_v].
// key_padding_mask, when given, is [B, Tk] with nonzero marking keys to ignore (padding): their
// weights are exactly 0, and a query must keep at least one key. Built from matmul, masked_fill
// and softmax, so it reads as the four steps and differentiates through them.
AttentionResult attention(const Tensor& query, const Tensor& key, const Tensor& value,
                          const Tensor& key_padding_mask = {});

// Inverted dropout: zeroes each element with probability p and scales the rest by 1/(1-p).
// The mask is a pure function of (seed, element index): the same on every run and thread count.
Tensor dropout(const Tensor& x, float p, uint64_t seed, bool training = true);

}  // namespace tinygpt
