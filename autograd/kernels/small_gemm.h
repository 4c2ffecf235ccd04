#pragma once
// C[m, n] (=|+=) alpha * A[m, k] · B[k, n] for the small products inside one attention head.
// Serial, so it can run inside a parallel loop over heads. A is read in place through any strides;
// B from pack_b's column panels: contiguous whatever B's own strides (a row stride of T = 256
// floats would map a tile's rows of B to a few L1 sets), and zero past column n, so that every tile
// computes whole vectors. Register tiles of up to MR rows x NR columns.
#include <cstdint>

#include "tinygpt/autograd/kernels/gemm.h"

namespace tinygpt {

// B packed: B(p, j) = data[(j / NR) * panel + p * NR + j % NR].
struct SmallB {
  const float* data;
  int64_t panel;
  SmallB from_row(int64_t p) const;  // B without its first p rows
};
// B[k, n] packed whole into out, which holds packed_b_size(k, n) floats (pack.h).
SmallB packed(MatrixView B, int64_t k, int64_t n, float* out);

struct SmallGemmArgs {
  int64_t m, n, k;
  const float* a;
  int64_t a_row, a_col;  // A(i, p) = a[i * a_row + p * a_col]
  SmallB b;
  float* c;
  int64_t c_row;         // C(i, j) = c[i * c_row + j]
  float alpha = 1.0f;
  bool accumulate = false;
};

void small_gemm(const SmallGemmArgs& g);

}  // namespace tinygpt
