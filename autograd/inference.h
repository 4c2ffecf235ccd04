#pragma once
// The ops' per-row arithmetic, for running a model outside the graph one position at a time
// (nn::Generator's key/value-cache decoding): the functions the ops themselves call, so a cached
// step computes what the op would, bit for bit, row by row. No gradients, no allocation.
#include <cstdint>
#include <vector>

namespace tinygpt {

// y = (x - mean) * rstd * weight + bias over one row of C (layer_norm's forward, ops/layernorm.cpp);
// bias null: none.
void layer_norm_row(const float* x, int64_t C, const float* weight, const float* bias, float eps, float* y);

// y = x * rstd * weight, rstd = 1 / sqrt(mean(x²) + eps), over one row of C (rms_norm's forward).
void rms_norm_row(const float* x, int64_t C, const float* weight, float eps, float* y);

// The first `heads` heads of size hs of one position's row x turned in place by RoPE's angles at
// `pos` (rope's forward, ops/rope.cpp); angles: scratch of hs floats.
void rope_row(float* x, int64_t heads, int64_t hs, int64_t pos, float theta, float* angles);

// y[0..H) = silu(gate) * up for one row gate_up [2H] (swiglu's forward, ops/swiglu.cpp).
void swiglu_row(const float* gate_up, int64_t H, float* y);

// y = GELU(x) (tanh approximation) elementwise over n values (gelu's forward, ops/elementwise.cpp).
void gelu_row(const float* x, int64_t n, float* y);

// y = softmax(x) over one row of n values, the maximum subtracted first (softmax's forward,
// ops/softmax.cpp). y may be x.
void softmax_row(const float* x, int64_t n, float* y);

// y[o] = bias[o] + sum_i W[o, i] x[i] for W [out, in] (a Linear's layout; bias may be null): a
// matrix-vector product reads each weight once and runs at memory speed, threads over rows of W.
void matvec(const float* w, const float* bias, const float* x, float* y, int64_t out, int64_t in);

// A weight matrix W [out, in] in 8 bits: each row cut into groups of `group` consecutive weights
// (the last one of a row possibly shorter), each group stored as int8 q with one float scale,
// max|w| / 127 over the group (0 for a group of zeros), q = round(w / scale) in [-127, 127]. The
// weight it stands for is float(q) * scale, rounded once to float: dequantize writes exactly that.
struct Int8Matrix {
  int64_t out = 0, in = 0, group = 0;
  std::vector<int8_t> q;       // [out, in]
  std::vector<float> scales;   // [out, groups_per_row()]
  int64_t groups_per_row() const { return (in + group - 1) / group; }
  int64_t bytes() const { return static_cast<int64_t>(q.size() + 4 * scales.size()); }
};

// Group sizes must be a power of two from 32 (no vector of any path then straddles two groups) to 4096.
bool valid_int8_group(int64_t group);
// W [out, in] quantized by groups; threads over rows, the same bytes for any thread count.
Int8Matrix quantize_int8(const float* w, int64_t out, int64_t in, int64_t group);
void dequantize_int8(const Int8Matrix& w, float* out);  // [out, in]: float(q) * scale
// matvec over int8 weights: each weight made float(q) * scale in registers and summed as matvec
// sums, so the result equals matvec over dequantize_int8's floats bit for bit, reading a quarter
// of the bytes.
void matvec_int8(const Int8Matrix& w, const float* bias, const float* x, float* y);

}  // namespace tinygpt
