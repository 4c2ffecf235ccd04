#pragma once
// Packing for the register-tiled kernels (gemm, small_gemm): an operand copied into panels, k-major
// and zero-padded, so that every load of the inner loop is contiguous and stays in one cache set
// range whatever the operand's strides.
//   A: row panels of MR rows:
//      Ap[panel * a_panel_stride(kc) + k * MR + r] = A(i0 + panel * MR + r, p0 + k)
//   B: column panels of NR columns:
//      Bp[panel * kc * NR + k * NR + c] = B(p0 + k, j0 + panel * NR + c)
#include <cstdint>

#include "gemm.h"
#include "simd.h"

namespace tinygpt {

// Requests `count` lines of `floats` values each, `step` floats apart, into L1: the next operand
// a packer or kernel reads where a line is too short for the hardware prefetcher to follow.
inline void request_lines(const float* first, int64_t step, int64_t count, int64_t floats) {
  for (int64_t l = 0; l < count; ++l)
    for (int64_t c = 0; c < floats; c += 16) __builtin_prefetch(first + l * step + c);
}

// B panels packed together: pack_b reads each row of B in stretches this many panels wide.
constexpr int64_t kGroup = 4;

// Floats from one packed A panel to the next: kc x MR and one cache line. pack_a writes an A stored
// transposed one k at a time across all its panels; kc x MR apart (12 KB for kc = 512) those stores
// would all fall into one L1 set. The line after each panel also takes the spill of pack_a's
// vector stores at its last k.
inline int64_t a_panel_stride(int64_t kc) { return kc * simd::MR + 16; }
// Floats of a packed A of m rows, with room for narrow_kernel's vector reads, which run a little
// past the last panel.
inline int64_t packed_a_size(int64_t m, int64_t kc) {
  return (m + simd::MR - 1) / simd::MR * a_panel_stride(kc) + 16;
}
// Floats of a packed B of kc rows and n columns.
inline int64_t packed_b_size(int64_t kc, int64_t n) { return (n + simd::NR - 1) / simd::NR * kc * simd::NR; }

// m rows of A from i0 and kc of its columns from p0, in ceil(m / MR) panels (rows past m are 0).
// round: each value rounded to bfloat16 as it is copied (the portable bf16 path).
void pack_a(MatrixView A, int64_t i0, int64_t m, int64_t p0, int64_t kc, float* Ap, bool round = false);
// kc rows of B from p0 and n of its columns from j0, in ceil(n / NR) panels (columns past n are 0).
void pack_b(MatrixView B, int64_t j0, int64_t n, int64_t p0, int64_t kc, float* Bp, bool round = false);

}  // namespace tinygpt
