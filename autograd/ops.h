#pragma once
// Every differentiable operation. Each op's forward and backward live side by side in ops/<family>.cpp.
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "indices.h"
#include "precision.h"
#include "tensor.h"

namespace tinygpt {

// Creation (ops/create.cpp). start, start + step, ... up to end (excluded), as floats.
Tensor arange(double start, double end, double step = 1.0);
inline Tensor arange(double end) { return arange(0.0, end); }
Tensor eye(int64_t rows, int64_t cols = -1);  // ones on the diagonal; cols -1: square
// `steps` values from start to end inclusive, evenly spaced (as torch.linspace).
Tensor linspace(double start, double end, int64_t steps);
// New tensors of x's shape (none requires a gradient).
inline Tensor zeros_like(const Tensor& x) { return Tensor::zeros(x.shape()); }
inline Tensor ones_like(const Tensor& x) { return Tensor::ones(x.shape()); }
inline Tensor full_like(const Tensor& x, float value) { return Tensor::full(x.shape(), value); }
inline Tensor empty_like(const Tensor& x) { return Tensor::empty(x.shape()); }
inline Tensor randn_like(const Tensor& x, uint64_t seed) { return Tensor::randn(x.shape(), seed); }
inline Tensor rand_like(const Tensor& x, uint64_t seed) { return Tensor::uniform(x.shape(), seed, 0, 1); }
// From a seed, the same on every machine: 0 .. n-1 shuffled; integers in [low, high); for each
// row of probs ([C] or [N, C], weights >= 0), `samples` category numbers drawn in proportion.
std::vector<int64_t> randperm(int64_t n, uint64_t seed);
Indices randint(int64_t low, int64_t high, const Shape& shape, uint64_t seed);
Indices multinomial(const Tensor& probs, int64_t samples, uint64_t seed, bool replacement = false);

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
// GELU, tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
Tensor gelu(const Tensor& x);
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
Tensor erf(const Tensor& x);
Tensor atan(const Tensor& x);
Tensor log2(const Tensor& x);
Tensor log10(const Tensor& x);
Tensor rsqrt(const Tensor& x);        // 1 / sqrt(x)
Tensor reciprocal(const Tensor& x);   // 1 / x
// Steps: no slope anywhere (their gradient is 0, as PyTorch's). round: halves to even, as PyTorch.
Tensor sign(const Tensor& x);  // -1, 0 or 1 (NaN stays NaN)
Tensor floor(const Tensor& x);
Tensor ceil(const Tensor& x);
Tensor round(const Tensor& x);

// Elementwise larger / smaller of two broadcast tensors; on a tie each gets half the gradient, NaN
// wins (as PyTorch).
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
// Comparisons with broadcasting: 1.0 where it holds, else 0.0 (a float mask; no gradient). A mask
// feeds where, masked_fill, mul, or sum/mean for a count or an accuracy.
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
inline Tensor eq(const Tensor& a, float b) { return eq(a, Tensor::scalar(b)); }
inline Tensor ne(const Tensor& a, float b) { return ne(a, Tensor::scalar(b)); }
inline Tensor lt(const Tensor& a, float b) { return lt(a, Tensor::scalar(b)); }
inline Tensor le(const Tensor& a, float b) { return le(a, Tensor::scalar(b)); }
inline Tensor gt(const Tensor& a, float b) { return gt(a, Tensor::scalar(b)); }
inline Tensor ge(const Tensor& a, float b) { return ge(a, Tensor::scalar(b)); }
// Whether a and b (broadcast together) agree elementwise within atol + rtol |b|, as torch.allclose;
// NaN agrees with nothing unless equal_nan.
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false);
// Comparisons as operators give 0/1 floats, as eq/lt/...; == and != are left out: a Tensor
// compared for identity is same_as, elementwise is eq and ne.
inline Tensor operator<(const Tensor& a, const Tensor& b) { return lt(a, b); }
inline Tensor operator<=(const Tensor& a, const Tensor& b) { return le(a, b); }
inline Tensor operator>(const Tensor& a, const Tensor& b) { return gt(a, b); }
inline Tensor operator>=(const Tensor& a, const Tensor& b) { return ge(a, b); }
inline Tensor operator<(const Tensor& a, float b) { return lt(a, b); }
inline Tensor operator<=(const Tensor& a, float b) { return le(a, b); }
inline Tensor operator>(const Tensor& a, float b) { return gt(a, b); }
inline Tensor operator>=(const Tensor& a, float b) { return ge(a, b); }

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
inline Tensor operator/(float s, const Tensor& x) { return mul_scalar(reciprocal(x), s); }
// x op= y makes a new tensor and points x at it, as x = x op y: tinygpt has no in-place autograd
// op, so another handle or a view of the old x keeps the old values (libtorch would change them).
inline Tensor& operator+=(Tensor& x, const Tensor& y) { return x = add(x, y); }
inline Tensor& operator-=(Tensor& x, const Tensor& y) { return x = sub(x, y); }
inline Tensor& operator*=(Tensor& x, const Tensor& y) { return x = mul(x, y); }
inline Tensor& operator/=(Tensor& x, const Tensor& y) { return x = div(x, y); }
inline Tensor& operator+=(Tensor& x, float s) { return x = add_scalar(x, s); }
inline Tensor& operator-=(Tensor& x, float s) { return x = add_scalar(x, -s); }
inline Tensor& operator*=(Tensor& x, float s) { return x = mul_scalar(x, s); }
inline Tensor& operator/=(Tensor& x, float s) { return x = mul_scalar(x, 1.0f / s); }

// Reductions (ops/reduce.cpp). Empty `axes` means all axes.
Tensor sum(const Tensor& x, Axes axes = {}, bool keepdim = false);
Tensor mean(const Tensor& x, Axes axes = {}, bool keepdim = false);
// Over `axes` (empty: all), written with the ops above (ops/statistics.cpp): the variance with
// `correction` subtracted from the count (1: Bessel's, PyTorch's default), its square root, the
// p-norm (sum |x|^p)^(1/p), and log(sum(exp(x))) computed without overflow.
Tensor var(const Tensor& x, Axes axes = {}, int64_t correction = 1, bool keepdim = false);
Tensor std(const Tensor& x, Axes axes = {}, int64_t correction = 1, bool keepdim = false);
Tensor norm(const Tensor& x, float p = 2.0f, Axes axes = {}, bool keepdim = false);
Tensor logsumexp(const Tensor& x, Axes axes = {}, bool keepdim = false);
// Σ a b / sqrt(max(Σ a² Σ b², eps²)) along axis, a and b broadcast together (torch 1.13's rule).
Tensor cosine_similarity(const Tensor& a, const Tensor& b, int64_t axis = 1, float eps = 1e-8f);
// Running sum along axis: out[i] = x[0] + ... + x[i].
Tensor cumsum(const Tensor& x, int64_t axis);
// Sums a broadcast result back down to `shape` (the backward of broadcasting).
Tensor sum_to_shape(const Tensor& x, const Shape& shape);

// Largest (smallest) values along `axis` (ops/select.cpp); the gradient flows to the position of
// each, the first one on ties; NaN counts as largest (and smallest), as in PyTorch.
// The values along axis, and (as libtorch's max(x, dim)) where they are: the result is the values
// tensor, with the positions beside it: `Tensor m = max(x, 1)`, or `auto [values, indices] =
// max(x, 1)`. The first position on ties; the gradient flows to it.
struct ValuesIndices : Tensor {
  Indices indices;
  template <size_t I>
  auto get() const {
    if constexpr (I == 0) return Tensor(*this);
    else return indices;
  }
};
ValuesIndices max(const Tensor& x, int64_t axis, bool keepdim = false);
ValuesIndices min(const Tensor& x, int64_t axis, bool keepdim = false);
// Over several axes (empty: all); the gradient is shared evenly among equal largest values, as
// torch.amax.
Tensor amax(const Tensor& x, Axes axes = {}, bool keepdim = false);
Tensor amin(const Tensor& x, Axes axes = {}, bool keepdim = false);
// The product along axis; its gradient is exact where elements are 0 (products of the others).
Tensor prod(const Tensor& x, int64_t axis, bool keepdim = false);
Tensor prod(const Tensor& x);  // of every element
// Those positions along `axis`, row-major over the other axes (no gradient).
std::vector<int64_t> argmax(const Tensor& x, int64_t axis);
std::vector<int64_t> argmin(const Tensor& x, int64_t axis);
// Indexing (ops/index.cpp); positions are checked, out of range is std::out_of_range naming it.
// The slices of x at `index` along axis, in that order (repeats allowed): [..., index.size(), ...].
Tensor index_select(const Tensor& x, int64_t axis, std::span<const int64_t> index);
inline Tensor index_select(const Tensor& x, int64_t axis, const std::vector<int64_t>& index) {
  return index_select(x, axis, std::span<const int64_t>(index));
}
// out[i][j][k] = x[index[i][j][k]][j][k] for axis 0 (likewise for any axis): out has index's shape,
// which matches x's number of axes and is no larger on the others.
Tensor gather(const Tensor& x, int64_t axis, const Indices& index);
// x with source[i][j][k] added at [index[i][j][k]][j][k] (axis 0; source has index's shape).
// Repeated positions add up, in row-major order of index.
Tensor scatter_add(const Tensor& x, int64_t axis, const Indices& index, const Tensor& source);
// The k largest (largest = false: smallest) along axis, sorted, and their positions; ties keep the
// lower position first, NaN ranks first. values' gradient flows to those positions.
struct TopK {
  Tensor values;
  Indices indices;
};
TopK topk(const Tensor& x, int64_t k, int64_t axis = -1, bool largest = true);
// The whole axis in order (ascending, or descending), stable: equal values keep their order.
TopK sort(const Tensor& x, int64_t axis = -1, bool descending = false);
Indices argsort(const Tensor& x, int64_t axis = -1, bool descending = false);

// x with the elements above diagonal `diagonal` of its last two axes set to 0 (tril), or those
// below it (triu); 0 is the main diagonal, positive counts up and right. No gradient flows there.
Tensor tril(const Tensor& x, int64_t diagonal = 0);
Tensor triu(const Tensor& x, int64_t diagonal = 0);
// a where condition != 0, else b; the three broadcast together (ops/select.cpp).
Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b);
// x with `value` where mask != 0 (mask broadcasts to x's shape); no gradient flows there.
Tensor masked_fill(const Tensor& x, const Tensor& mask, float value);

// Losses (ops/losses.cpp). How per-element (or per-row) terms become the loss: their mean (the
// default), sum, none (the terms, unreduced), or batchmean (the sum over the first axis's size;
// kl_div only, the mathematically right KL divergence per sample).
enum class Reduction { mean, sum, none, batchmean };
// Over every element; shapes must match.
Tensor mse_loss(const Tensor& prediction, const Tensor& target,
                Reduction reduction = Reduction::mean);  // mean((prediction - target)^2)
Tensor l1_loss(const Tensor& prediction, const Tensor& target, Reduction reduction = Reduction::mean);
// 0.5 d² where |d| < delta, else delta (|d| - 0.5 delta); d = prediction - target (smooth L1).
Tensor huber_loss(const Tensor& prediction, const Tensor& target, float delta = 1.0f,
                  Reduction reduction = Reduction::mean);
// KL divergence of the distribution `target` (probabilities, or log-probabilities with log_target)
// from exp(input) (input: log-probabilities, e.g. from log_softmax): target (log target - input).
Tensor kl_div(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::mean,
              bool log_target = false);
// mean(max(x, 0) - x t + log(1 + exp(-|x|))): binary cross-entropy of sigmoid(x) against t in
// [0, 1], computed from the logits x without forming sigmoid(x).
Tensor binary_cross_entropy_with_logits(const Tensor& logits, const Tensor& target,
                                        Reduction reduction = Reduction::mean);

// Shape (views in ops/views.cpp, concat in ops/concat.cpp).
// Pieces of `size` along axis (views), the last one shorter where size does not divide the axis
// (as torch.split); concat(split(x, n, a), a) is x.
std::vector<Tensor> split(const Tensor& x, int64_t size, int64_t axis);
Tensor concat(const std::vector<Tensor>& xs, int64_t axis);
// n pieces as equal as torch.chunk makes them (ceil(size / n) each, fewer where that covers the axis).
std::vector<Tensor> chunk(const Tensor& x, int64_t n, int64_t axis = 0);
// Elements start .. start + length of axis (a view).
Tensor narrow(const Tensor& x, int64_t axis, int64_t start, int64_t length);
// Element `index` of axis (negative: from the end), the axis removed (a view).
Tensor select(const Tensor& x, int64_t axis, int64_t index);
// Every element of axis, each as select(x, axis, i).
std::vector<Tensor> unbind(const Tensor& x, int64_t axis = 0);
// Copies: the order along `axes` reversed; the tensor tiled `repeats` times along each axis (more
// repeats than axes add leading ones, as torch's repeat); `pads` added around the last axes with
// `value`: {left, right} for the last axis, then {left, right} for the one before, ... (F.pad).
Tensor flip(const Tensor& x, Axes axes);
Tensor repeat(const Tensor& x, const Shape& repeats);
Tensor pad(const Tensor& x, const std::vector<int64_t>& pads, float value = 0.0f);
// Tensors of one shape joined along a new axis: [n, ...] for axis 0.
Tensor stack(const std::vector<Tensor>& xs, int64_t axis = 0);

// Sums of products named by letters, as torch.einsum: "ij,jk->ik" (matmul), "bij,bjk->bik",
// "ij->ji", "i,i->", "i,j->ij", "bhqd,bhkd->bhqk"; without "->", the letters named once, in
// alphabetical order. Any number of operands; no ellipsis, no letter twice in one operand
// (ops/einsum.cpp: batched matmuls, so the gradient is theirs).
Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands);

// [..., M, K] @ [..., K, N] -> [..., M, N], batch axes broadcast; a transposed operand is read
// in place, without a copy (ops/matmul.cpp).
Tensor matmul(const Tensor& a, const Tensor& b);

// A Linear layer in one op: y = x Wᵀ + b, x [..., in], weight [out, in] (PyTorch's layout), bias
// [out] or undefined. One gemm adds onto rows preset to the bias; backward is two gemms and a
// column sum, with no intermediate tensor (ops/matmul.cpp).
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias);

// Over the last axis (ops/softmax.cpp), or over any axis (moved last, and back).
Tensor softmax(const Tensor& x);
Tensor log_softmax(const Tensor& x);
Tensor softmax(const Tensor& x, int64_t axis);
Tensor log_softmax(const Tensor& x, int64_t axis);

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

// Class losses with PyTorch's options: weight [C] per class (undefined: all 1), a target equal to
// ignore_index leaves its row out, label_smoothing ε puts (1 - ε) on the target and ε / C on every
// class; the mean divides by the summed weights of the targets kept. Targets out of range are
// std::out_of_range naming the row.
struct NllLossOptions {
  Tensor weight;
  int64_t ignore_index = -100;
  Reduction reduction = Reduction::mean;
};
struct CrossEntropyOptions {
  Tensor weight;
  int64_t ignore_index = -100;
  float label_smoothing = 0.0f;
  Reduction reduction = Reduction::mean;
};
// -log_probs[i, target_i] (weighted, reduced): log_probs [N, C] or [..., C] from log_softmax.
Tensor nll_loss(const Tensor& log_probs, std::span<const int64_t> targets, const NllLossOptions& options = {});
inline Tensor nll_loss(const Tensor& log_probs, const std::vector<int64_t>& targets,
                       const NllLossOptions& options = {}) {
  return nll_loss(log_probs, std::span<const int64_t>(targets), options);
}
// nll_loss(log_softmax(logits)) with the options; the defaults take the fused path above.
Tensor cross_entropy(const Tensor& logits, std::span<const int64_t> targets, const CrossEntropyOptions& options);
inline Tensor cross_entropy(const Tensor& logits, const std::vector<int64_t>& targets,
                            const CrossEntropyOptions& options) {
  return cross_entropy(logits, std::span<const int64_t>(targets), options);
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
Tensor embedding(const Tensor& weight, const Indices& ids);  // int64 ids (libtorch's index type)

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

// Convolution and pooling over images [N, C, H, W] (ops/conv.cpp), as torch.nn.functional's.
// Where a 2-d window goes: its step (stride), the zeros around the input (padding) and the spacing
// of its taps (dilation); [0] along the rows (H), [1] along the columns (W).
struct Window2d {
  std::array<int64_t, 2> stride{1, 1}, padding{0, 0}, dilation{1, 1};
};
struct Conv2dOptions {
  Window2d window;
  int64_t groups = 1;  // channels split into this many groups, each convolved with its own filters
};
// input [N, C, H, W], weight [O, C / groups, kh, kw], bias [O] or undefined -> [N, O, OH, OW],
// OH = (H + 2 padding - dilation (kh - 1) - 1) / stride + 1 (and OW alike).
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, const Conv2dOptions& options = {});
struct Conv1dOptions {
  int64_t stride = 1, padding = 0, dilation = 1, groups = 1;
};
// input [N, C, L], weight [O, C / groups, k], bias [O] or undefined -> [N, O, OL].
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, const Conv1dOptions& options = {});
struct Pool2dOptions {
  std::array<int64_t, 2> kernel{2, 2};
  std::array<int64_t, 2> stride{0, 0};  // 0: the kernel's size, as torch's default
  std::array<int64_t, 2> padding{0, 0};  // at most half the kernel
};
// The largest value of each window (its gradient to where it was; the first on ties), or the mean
// (the padding's zeros counted, as torch's count_include_pad).
Tensor max_pool2d(const Tensor& x, const Pool2dOptions& options = {});
Tensor avg_pool2d(const Tensor& x, const Pool2dOptions& options = {});

// Inverted dropout: zeroes each element with probability p and scales the rest by 1/(1-p).
// The mask is a pure function of (seed, element index): the same on every run and thread count.
Tensor dropout(const Tensor& x, float p, uint64_t seed, bool training = true);

}  // namespace tinygpt

// auto [values, indices] = max(x, axis): ValuesIndices as a pair.
template <>
struct std::tuple_size<tinygpt::ValuesIndices> : std::integral_constant<size_t, 2> {};
template <>
struct std::tuple_element<0, tinygpt::ValuesIndices> {
  using type = tinygpt::Tensor;
};
template <>
struct std::tuple_element<1, tinygpt::ValuesIndices> {
  using type = tinygpt::Indices;
};
