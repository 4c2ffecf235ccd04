#pragma once
// The ops' per-row arithmetic, for running a model outside the graph one position at a time
// (nn::Generator's key/value-cache decoding): the functions the ops themselves call, so a cached
// step computes what the op would, bit for bit, row by row. No gradients, no allocation.
#include <cstdint>

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

// y = gelu_tanh(x) elementwise over n values (gelu's forward, ops/elementwise.cpp).
void gelu_row(const float* x, int64_t n, float* y);

// y = softmax(x) over one row of n values, the maximum subtracted first (softmax's forward,
// ops/softmax.cpp). y may be x.
void softmax_row(const float* x, int64_t n, float* y);

// y[o] = bias[o] + sum_i W[o, i] x[i] for W [out, in] (a Linear's layout; bias may be null): a
// matrix-vector product reads each weight once and runs at memory speed, threads over rows of W.
void matvec(const float* w, const float* bias, const float* x, float* y, int64_t out, int64_t in);

}  // namespace tinygpt
