#pragma once
// Packing for the register-tiled kernels (gemm, small_gemm): an operand copied into panels, k-major
// and zero-padded, so that every load of the inner loop is contiguous and stays in one cache set
// range whatever the operand's strides.
//   A: row panels of MR rows:       Ap[panel][k][r] = A(i0 + panel * MR + r, p0 + k)
//   B: column panels of NR columns: Bp[panel][k][c] = B(p0 + k, j0 + panel * NR + c)
#include <cstdint>

#include "autograd/kernels/gemm.h"
#include "autograd/kernels/simd.h"

namespace tinygpt {

// B panels packed together: pack_b reads each row of B in stretches this many panels wide.
constexpr int64_t kGroup = 4;

// m rows of A from i0 and kc of its columns from p0, in ceil(m / MR) panels (rows past m are 0).
void pack_a(MatrixView A, int64_t i0, int64_t m, int64_t p0, int64_t kc, float* Ap);
// kc rows of B from p0 and n of its columns from j0, in ceil(n / NR) panels (columns past n are 0).
void pack_b(MatrixView B, int64_t j0, int64_t n, int64_t p0, int64_t kc, float* Bp);

}  // namespace tinygpt
