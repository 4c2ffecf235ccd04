#pragma once
// The ops' per-row arithmetic, for running a model outside the graph one position at a time
// (nn::Generator's key/value-cache decoding): the functions the ops themselves call, so a cached
// step computes what the op would, bit for bit, row by row. No gradients, no allocation.
#include <cstdint>

namespace tinygpt {

// y = (x - mean) * rstd * weight + bias over one row of C (layer_norm's forward, ops/layernorm.cpp).
void layer_norm_row(const float* x, int64_t C, const float* weight, const float* bias, float eps, float* y);

// y = gelu_tanh(x) elementwise over n values (gelu's forward, ops/elementwise.cpp).
void gelu_row(const float* x, int64_t n, float* y);

// y = softmax(x) over one row of n values, the maximum subtracted first (softmax's forward,
// ops/softmax.cpp). y may be x.
void softmax_row(const float* x, int64_t n, float* y);

// y[o] = bias[o] + sum_i W[o, i] x[i] for W [out, in] (a Linear's layout; bias may be null): a
// matrix-vector product reads each weight once and runs at memory speed, threads over rows of W.
void matvec(const float* w, const float* bias, const float* x, float* y, int64_t out, int64_t in);

}  // namespace tinygpt
