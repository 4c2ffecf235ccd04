#pragma once
// The ops whose output only matrix products read, stored for them: the GPT's blocks call these, and
// a model of one's own may (the ops of ops.h are the same with Readers::anyone).
//
// Products under bf16 round their operands anyway, so on the float kernels (bf16_native() false)
// an output for products is stored rounded to bfloat16 and marked, and its products read it as it
// is instead of rounding a copy, in the forward and again in the backward. Every result has the
// same bits either way; only another reader of the output would see the rounding.
#include <cstdint>

#include "ops.h"

namespace tinygpt {

// Who reads an op's output: anyone, or matrix products only (a Linear's input, attention's q, k and
// v, as in the GPT's blocks).
enum class Readers { anyone, products };

Tensor gelu(const Tensor& x, Readers readers);
Tensor swiglu(const Tensor& x, Readers readers);
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias, Readers readers);
Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, float eps, Readers readers);
Tensor rms_norm(const Tensor& x, const Tensor& weight, float eps, Readers readers);
AttentionResult causal_self_attention(const Tensor& qkv, int64_t n_head, int64_t n_kv_head, AttentionMemory memory,
                                      Readers readers);

}  // namespace tinygpt
