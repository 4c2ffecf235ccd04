// Blocked GEMM in the style of GotoBLAS/BLIS:
//   for each depth block pc (KC deep):   pack B[pc, :] into column panels NR wide   (shared)
//     for each C tile (MC x NC) in parallel: pack A[tile rows, pc] into row panels MR tall
//       for each B panel (stays in L1), for each A panel (streams from L2):
//         micro-kernel: an MR x NR block of C held in registers, one rank-1 update per k.
// The vector type is GCC's portable vector extension: AVX-512, AVX2 or SSE, whatever the build
// targets, from one source; a*b+c contracts to FMA where the target has it.
#include "autograd/kernels/gemm.h"

#include <algorithm>
#include <cstring>

#include "autograd/parallel.h"
#include "autograd/tensor.h"

namespace tinygpt {

namespace {

#if defined(__AVX512F__)
constexpr int kLanes = 16, MR = 12;
#elif defined(__AVX__)
constexpr int kLanes = 8, MR = 6;
#else
constexpr int kLanes = 4, MR = 6;
#endif
constexpr int NR = 2 * kLanes;  // two vectors of C per row of the micro-tile
constexpr int64_t KC = 256;     // depth of a block: an A panel (MR x KC) + B panel (KC x NR) fit L1
constexpr int64_t MC = 20 * MR; // rows of a tile: its packed A (MC x KC) stays in L2
constexpr int64_t NC = 16 * NR; // columns of a tile

typedef float vfloat __attribute__((vector_size(kLanes * sizeof(float))));
typedef float vfloat_unaligned __attribute__((vector_size(kLanes * sizeof(float)), aligned(4)));

inline vfloat load(const float* p) { return *reinterpret_cast<const vfloat_unaligned*>(p); }
inline void store(float* p, vfloat v) { *reinterpret_cast<vfloat_unaligned*>(p) = v; }

// C[0..m, 0..n) (=|+=) Ap (kc x MR, k-major) · Bp (kc x NR, k-major); m <= MR, n <= NR.
void micro_kernel(int64_t kc, const float* __restrict Ap, const float* __restrict Bp, float* C, int64_t ldc,
                  bool accumulate, int m, int n) {
  vfloat acc[MR][2] = {};
  for (int64_t k = 0; k < kc; ++k) {
    const vfloat b0 = *reinterpret_cast<const vfloat*>(Bp + k * NR);
    const vfloat b1 = *reinterpret_cast<const vfloat*>(Bp + k * NR + kLanes);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const vfloat a = vfloat{} + Ap[k * MR + r];
      acc[r][0] += a * b0;
      acc[r][1] += a * b1;
    }
  }
  if (m == MR && n == NR) {
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      float* c = C + r * ldc;
      store(c, accumulate ? load(c) + acc[r][0] : acc[r][0]);
      store(c + kLanes, accumulate ? load(c + kLanes) + acc[r][1] : acc[r][1]);
    }
    return;
  }
  alignas(64) float tile[MR][NR];  // an edge tile: spill, then copy the valid part
  for (int r = 0; r < MR; ++r) {
    std::memcpy(&tile[r][0], &acc[r][0], sizeof(vfloat));
    std::memcpy(&tile[r][kLanes], &acc[r][1], sizeof(vfloat));
  }
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < n; ++c) C[r * ldc + c] = accumulate ? C[r * ldc + c] + tile[r][c] : tile[r][c];
}

// Ap[panel][k][r] = A(i0 + panel*MR + r, p0 + k), zero beyond row m.
void pack_a(MatrixView A, int64_t i0, int64_t m, int64_t p0, int64_t kc, float* Ap) {
  for (int64_t panel = 0; panel * MR < m; ++panel) {
    float* dst = Ap + panel * kc * MR;
    const int64_t rows = std::min<int64_t>(MR, m - panel * MR);
    const float* src = A.data + (i0 + panel * MR) * A.row_stride + p0 * A.col_stride;
    if (A.row_stride == 1) {  // A stored transposed: MR neighbours per k are contiguous
      for (int64_t k = 0; k < kc; ++k) {
        const float* s = src + k * A.col_stride;
        for (int64_t r = 0; r < rows; ++r) dst[k * MR + r] = s[r];
        for (int64_t r = rows; r < MR; ++r) dst[k * MR + r] = 0.0f;
      }
    } else {
      for (int64_t r = 0; r < MR; ++r) {
        const float* s = src + r * A.row_stride;
        if (r < rows)
          for (int64_t k = 0; k < kc; ++k) dst[k * MR + r] = s[k * A.col_stride];
        else
          for (int64_t k = 0; k < kc; ++k) dst[k * MR + r] = 0.0f;
      }
    }
  }
}

// Bp[panel][k][c] = B(p0 + k, panel*NR + c), zero beyond column N.
void pack_b_panel(MatrixView B, int64_t N, int64_t p0, int64_t kc, int64_t panel, float* Bp) {
  float* dst = Bp + panel * kc * NR;
  const int64_t j0 = panel * NR, cols = std::min<int64_t>(NR, N - j0);
  const float* src = B.data + p0 * B.row_stride + j0 * B.col_stride;
  if (B.col_stride == 1) {  // row-major B: NR neighbours per k are contiguous
    for (int64_t k = 0; k < kc; ++k) {
      const float* s = src + k * B.row_stride;
      for (int64_t c = 0; c < cols; ++c) dst[k * NR + c] = s[c];
      for (int64_t c = cols; c < NR; ++c) dst[k * NR + c] = 0.0f;
    }
  } else {
    for (int64_t c = 0; c < NR; ++c) {
      const float* s = src + c * B.col_stride;
      if (c < cols)
        for (int64_t k = 0; k < kc; ++k) dst[k * NR + c] = s[k * B.row_stride];
      else
        for (int64_t k = 0; k < kc; ++k) dst[k * NR + c] = 0.0f;
    }
  }
}

// Scratch reused across calls: a steady-state training step allocates nothing here.
Buffer& scratch(Buffer& buffer, size_t size) {
  if (buffer.size() < size) buffer.resize(size);
  return buffer;
}

}  // namespace

void gemm(int64_t M, int64_t N, int64_t K, MatrixView A, MatrixView B, float* C, int64_t ldc, bool accumulate) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {
    if (!accumulate)
      for (int64_t i = 0; i < M; ++i) std::fill(C + i * ldc, C + i * ldc + N, 0.0f);
    return;
  }
  thread_local Buffer b_scratch;
  const int64_t n_panels = (N + NR - 1) / NR;
  float* Bp = scratch(b_scratch, n_panels * KC * NR).data();
  const int64_t m_tiles = (M + MC - 1) / MC, n_tiles = (N + NC - 1) / NC;

  for (int64_t p0 = 0; p0 < K; p0 += KC) {
    const int64_t kc = std::min(KC, K - p0);
    const bool acc = accumulate || p0 > 0;
    parallel_for(n_panels, grain_for(kc * NR, 16384),
                 [&](int64_t q0, int64_t q1) {
                   for (int64_t q = q0; q < q1; ++q) pack_b_panel(B, N, p0, kc, q, Bp);
                 });
    parallel_for(m_tiles * n_tiles, 1, [&](int64_t t0, int64_t t1) {
      thread_local Buffer a_scratch;  // each task packs and uses it without yielding the thread
      float* Ap = scratch(a_scratch, MC * KC).data();
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t i0 = (t / n_tiles) * MC, m = std::min(MC, M - i0);
        const int64_t j0 = (t % n_tiles) * NC, n = std::min(NC, N - j0);
        pack_a(A, i0, m, p0, kc, Ap);
        for (int64_t j = 0; j < n; j += NR) {
          const float* bp = Bp + ((j0 + j) / NR) * kc * NR;
          for (int64_t i = 0; i < m; i += MR)
            micro_kernel(kc, Ap + (i / MR) * kc * MR, bp, C + (i0 + i) * ldc + j0 + j, ldc, acc,
                         static_cast<int>(std::min<int64_t>(MR, m - i)), static_cast<int>(std::min<int64_t>(NR, n - j)));
        }
      }
    });
  }
}

}  // namespace tinygpt
