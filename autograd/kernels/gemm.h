#pragma once
// Matrix multiply C = A · B (+ C), the hot loop of every Linear layer.
#include <cstdint>

#include "../precision.h"

namespace tinygpt {

// A matrix read in place: element (i, j) is data[i * row_stride + j * col_stride]. A transposed
// operand is just the same data with the strides swapped, so no operand is ever copied to transpose.
// bf16_exact: every value is a bfloat16 already, so the float kernels of a bf16 product read it as
// it is instead of rounding a copy.
struct MatrixView {
  const float* data;
  int64_t row_stride;
  int64_t col_stride;
  bool bf16_exact = false;
  MatrixView transposed() const { return {data, col_stride, row_stride, bf16_exact}; }
};

// How C's values are stored: as they are, or rounded to bfloat16 (an output read only by products,
// precision.h's Readers; the float kernels only).
enum class StoreC { as_is, rounded };

// A's row sums: out[i] (=|+=) the sum over k of A(i, k) as stored (not rounded), in float. For a
// Linear's dW = dYᵀ · X they are the bias gradient. out: null: none. The order, on every path and
// for any thread count: k in chunks of row_sum_chunk(K) (the last may be shorter), each chunk
// summed from 0 in k order, then the chunks' sums added in order from 0 (kernels/row_sums.cpp).
struct RowSums {
  float* out = nullptr;
  bool accumulate = false;
};
int64_t row_sum_chunk(int64_t K);

// C[M, N] (row-major, leading dimension ldc) = A[M, K] · B[K, N], or += when accumulate.
// With a bias (N values, only when not accumulating) C = A · B + bias on every row: a Linear
// layer's output in one pass, the bias added as the first block of the product is stored.
// Cache-blocked and register-tiled (kernels/gemm.cpp); threads split C into tiles, and every C
// element sums over k in the same order whatever the tiling, so the bits never depend on threads.
// Runs its own parallel loop: call it from one thread, not from inside a parallel_for.
// Precision::bf16 rounds A and B to bfloat16 and sums in float (precision.h): the native kernels
// where bf16_native(), else gemm_bf16_portable. With `sums`, also A's row sums: the native kernels
// add them up as they round A, the other paths in row_sums' pass of their own, with the same bits.
// StoreC::rounded: C's final values rounded to bfloat16 as they are stored (not on the native
// kernels, which throw).
void gemm(int64_t M, int64_t N, int64_t K, MatrixView A, MatrixView B, float* C, int64_t ldc, bool accumulate,
          const float* bias = nullptr, Precision precision = Precision::fp32, RowSums sums = {},
          StoreC store = StoreC::as_is);

// A[M, K]'s row sums (RowSums) in a pass over A: an A stored transposed and contiguous (dYᵀ) by
// column_sums, any other row by row.
void row_sums(int64_t M, int64_t K, MatrixView A, RowSums sums);

// dY [rows, cols]'s column sums, the row sums of A = dYᵀ (RowSums), threads sharing whole rows;
// with `rounded` (null: none), dY rounded to bfloat16 into it in the same pass.
void column_sums(const float* dy, int64_t rows, int64_t cols, RowSums sums, float* rounded = nullptr);

// The two bf16 paths, for tests and benchmarks. Portable: the float kernels above, each packed
// panel rounded to bfloat16 (products of two bfloat16 values are exact in float, so only the sums
// round). Native: AVX512_BF16's vdpbf16ps on bfloat16 pairs along k (kernels/gemm_bf16.cpp); call
// it only where bf16_native(). Each is bitwise the same for any thread count.
void gemm_bf16_portable(int64_t M, int64_t N, int64_t K, MatrixView A, MatrixView B, float* C, int64_t ldc,
                        bool accumulate, const float* bias = nullptr);
void gemm_bf16_native(int64_t M, int64_t N, int64_t K, MatrixView A, MatrixView B, float* C, int64_t ldc,
                      bool accumulate, const float* bias = nullptr, RowSums sums = {});

// The same product as three plain loops (kernels/gemm_reference.cpp): the yardstick for tests.
void gemm_reference(int64_t M, int64_t N, int64_t K, MatrixView A, MatrixView B, float* C, int64_t ldc,
                    bool accumulate, const float* bias = nullptr);

}  // namespace tinygpt
