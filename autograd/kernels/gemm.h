#pragma once
// Matrix multiply C = A · B (+ C), the hot loop of every Linear layer.
#include <cstdint>

namespace tinygpt {

// A matrix read in place: element (i, j) is data[i * row_stride + j * col_stride]. A transposed
// operand is just the same data with the strides swapped, so no operand is ever copied to transpose.
struct MatrixView {
  const float* data;
  int64_t row_stride;
  int64_t col_stride;
  MatrixView transposed() const { return {data, col_stride, row_stride}; }
};

// C[M, N] (row-major, leading dimension ldc) = A[M, K] · B[K, N], or += when accumulate.
// With a bias (N values, only when not accumulating) C = A · B + bias on every row: a Linear
// layer's output in one pass, the bias added as the first block of the product is stored.
// Cache-blocked and register-tiled (kernels/gemm.cpp); threads split C into tiles, and every C
// element sums over k in the same order whatever the tiling, so the bits never depend on threads.
// Runs its own parallel loop: call it from one thread, not from inside a parallel_for.
void gemm(int64_t M, int64_t N, int64_t K, MatrixView A, MatrixView B, float* C, int64_t ldc, bool accumulate,
          const float* bias = nullptr);

// The same product as three plain loops (kernels/gemm_reference.cpp): the yardstick for tests.
void gemm_reference(int64_t M, int64_t N, int64_t K, MatrixView A, MatrixView B, float* C, int64_t ldc,
                    bool accumulate, const float* bias = nullptr);

}  // namespace tinygpt
