#pragma once
// C[m, n] (=|+=) alpha * A[m, k] · B[k, n] for the small products inside one attention head.
// Serial, so it can run inside a parallel loop over heads; no packing: A is read through any
// strides, B row by row (unit column stride). Register tiles of up to MR rows x 2 vectors.
#include <cstdint>

namespace tinygpt {

struct SmallGemmArgs {
  int64_t m, n, k;
  const float* a;
  int64_t a_row, a_col;  // A(i, p) = a[i * a_row + p * a_col]
  const float* b;
  int64_t b_row;         // B(p, j) = b[p * b_row + j]
  float* c;
  int64_t c_row;         // C(i, j) = c[i * c_row + j]
  float alpha = 1.0f;
  bool accumulate = false;
};

void small_gemm(const SmallGemmArgs& g);

}  // namespace tinygpt
