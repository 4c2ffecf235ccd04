#pragma once
// The AVX512_BF16 building blocks that the bf16 GEMM (gemm_bf16.cpp) and the attention heads' small
// products (small_gemm_bf16.cpp) share: operands rounded to bfloat16 (vcvtneps2bf16, round to
// nearest even) and laid out as pairs along k, and the register tile that multiplies such pairs
// with vdpbf16ps (16 pairs of bfloat16 products added into 16 float sums per instruction).
//   pairs: P[k / 2][c] = {X(k, c), X(k + 1, c)} as one 32-bit word, low half k; an odd depth pairs
//   its last k with 0.
// TINYGPT_BF16_KERNELS is defined where the build can emit these instructions (an x86-64 AVX-512
// build); the CPU may still lack them: call only where bf16_native().
#include <algorithm>
#include <cstdint>

#include "blocking.h"
#include "gemm.h"
#include "pack.h"
#include "simd.h"

#if defined(__AVX512F__) && defined(__x86_64__)
#define TINYGPT_BF16_KERNELS 1
#include <immintrin.h>
// GCC 12's AVX-512 intrinsics start from _mm512_undefined_epi32() and then warn that it may be
// used uninitialized (a false positive of the headers, not of this code).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define TINYGPT_BF16_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))

namespace tinygpt::bf16 {

using simd::MR;
using simd::NR;
static_assert(MR == 12 && NR == 32, "the bf16 kernels use the AVX-512 float panels: 12 rows, 32 columns");

inline int64_t k_pairs(int64_t kc) { return (kc + 1) / 2; }

// The first n of 16 lanes, n clamped to [0, 16].
inline __mmask16 lanes(int64_t n) { return simd::first_lanes(static_cast<int>(std::clamp<int64_t>(n, 0, 16))); }

// n <= 16 floats from p as 16 bfloat16, zeros past n; a null p: all zeros.
TINYGPT_BF16_TARGET inline __m256i bf16_of(const float* p, int64_t n) {
  if (!p || n <= 0) return _mm256_setzero_si256();
  return (__m256i)_mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(lanes(n), p));
}

// Two stored rows that hold k and k + 1 side by side (`valid` <= 16 values each; a null odd row:
// the zeros past an odd depth) as pairs {even[c], odd[c]} in out[0..width), width <= 16; zeros
// past valid. One vcvtne2ps2bf16 rounds both rows into one register, one vpermw interleaves them.
// sums (null: none): sums[c] += even[c], then += odd[c], the values as stored, for c < valid.
TINYGPT_BF16_TARGET inline void row_pairs(const float* even, const float* odd, int64_t valid, uint32_t* out,
                                          int width, float* sums = nullptr) {
  alignas(64) static constexpr uint16_t kInterleave[32] = {0, 16, 1, 17, 2,  18, 3,  19, 4,  20, 5,  21, 6,  22, 7,  23,
                                                           8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31};
  const __m512 e = _mm512_maskz_loadu_ps(lanes(valid), even);
  const __m512 o = odd ? _mm512_maskz_loadu_ps(lanes(valid), odd) : _mm512_setzero_ps();
  if (sums) {
    const __m512 sum = _mm512_add_ps(_mm512_maskz_loadu_ps(lanes(valid), sums), e);
    _mm512_mask_storeu_ps(sums, lanes(valid), odd ? _mm512_add_ps(sum, o) : sum);
  }
  const __m512i both = (__m512i)_mm512_cvtne2ps_pbh(o, e);  // 16 bfloat16 of even, then 16 of odd
  _mm512_mask_storeu_epi32(out, lanes(width), _mm512_permutexvar_epi16(_mm512_load_si512(kInterleave), both));
}

// How many rows ahead rows_to_pairs requests (of rows n floats long): about 4 KB ahead, 4 to 16
// rows. Short rows (an attention head's 64 values) take little time each, so the request must go
// further ahead to arrive in time.
inline int64_t rows_ahead(int64_t n) { return std::clamp<int64_t>(1024 / std::max<int64_t>(n, 1), 4, 16); }

// Rows k and k + 1 of a matrix stored by rows (a null odd: the zeros past an odd depth), n values
// each, as pairs {even[c], odd[c]} at out[(c / NR) * panel + c % NR] for c < width (a multiple of
// 16; zeros past n). `ahead` > 0: the floats from one row to the next, to request the pair of rows
// rows_ahead(n) further on from memory meanwhile; a pack reads each row once, and the hardware
// prefetcher, which follows the row at hand, leaves the next rows to be fetched on demand.
// sums (null: none): the n columns' sums, to which both rows are added (row_pairs).
TINYGPT_BF16_TARGET inline void rows_to_pairs(const float* even, const float* odd, int64_t n, int64_t width,
                                              int64_t ahead, uint32_t* out, int64_t panel, float* sums = nullptr) {
  if (ahead > 0) request_lines(even + rows_ahead(n) * ahead, ahead, 2, n);
  for (int64_t c = 0; c < width; c += 16)
    row_pairs(even + c, odd ? odd + c : nullptr, std::min<int64_t>(16, n - c), out + (c / NR) * panel + c % NR, 16,
              sums ? sums + c : nullptr);
}

// kc floats of a line that runs along k as k_pairs(kc) pairs, out[p] = {line[2p], line[2p + 1]}
// (an odd kc pairs the last with 0): 32 floats rounded in their own order are, read as 32-bit
// words, 16 pairs, so no shuffle is needed.
TINYGPT_BF16_TARGET inline void line_pairs(const float* line, int64_t kc, uint32_t* out) {
  int64_t k = 0;
  for (; k + 32 <= kc; k += 32)
    _mm512_storeu_si512(out + k / 2,
                        (__m512i)_mm512_cvtne2ps_pbh(_mm512_loadu_ps(line + k + 16), _mm512_loadu_ps(line + k)));
  if (k < kc) {
    const int64_t n = kc - k;
    const __m512 lo = _mm512_maskz_loadu_ps(lanes(n), line + k), hi = _mm512_maskz_loadu_ps(lanes(n - 16), line + k + 16);
    _mm512_mask_storeu_epi32(out + k / 2, lanes((n + 1) / 2), (__m512i)_mm512_cvtne2ps_pbh(hi, lo));
  }
}

// 8 lines that run along k (kc contiguous floats each; a null line: zeros) as pairs across them:
// out[(k / 2) * width + l] = {line l [k], line l [k + 1]}. 16 k of each line round to 8 pairs, and
// an 8 x 8 transpose turns those into 8 rows of out. `next`: the 8 lines packed after these (a null
// one: none), requested from memory a chunk at a time meanwhile; lines a few hundred bytes to a few
// KB long, each read once, are streams too short for the hardware prefetcher.
TINYGPT_BF16_TARGET inline void lines_to_pairs(const float* const* lines, const float* const* next, int64_t kc,
                                               uint32_t* out, int64_t width) {
  for (int64_t k = 0; k < kc; k += 16) {
    const int64_t n = std::min<int64_t>(16, kc - k);
    for (int l = 0; l < 8; ++l)
      if (next[l]) __builtin_prefetch(next[l] + k);
    __m256 v[8];
    for (int l = 0; l < 8; ++l) v[l] = (__m256)bf16_of(lines[l] ? lines[l] + k : nullptr, n);
    simd::transpose8(v);
    // Stored through a full mask, which the measured steps ran faster than a plain store.
    for (int64_t j = 0; j < (n + 1) / 2; ++j) _mm256_mask_storeu_epi32(out + (k / 2 + j) * width, 0xFF, (__m256i)v[j]);
  }
}

// `count` values of a strided line (from `first`, `step` floats apart) gathered into `out`, to be
// rounded as a contiguous one; a null line gives zeros.
inline void gather(const float* first, int64_t step, int64_t count, float* out) {
  for (int64_t i = 0; i < count; ++i) out[i] = first ? first[i * step] : 0.0f;
}

// n columns of B from j0 and kc of its rows from p0 as panels of NR columns of pairs, read straight
// from B where a column or a row is contiguous (gathered first elsewhere):
//   Bp[panel * k_pairs(kc) * NR + (k / 2) * NR + c] = {B(p0 + k, j0 + panel * NR + c), B(p0 + k + 1, ..)}
// (columns past n are 0). A row-major B is read a pair of rows at a time across all n columns,
// so that each row streams from memory once, left to right.
TINYGPT_BF16_TARGET inline void pack_b_pairs(MatrixView B, int64_t j0, int64_t n, int64_t p0, int64_t kc, uint32_t* Bp) {
  const int64_t kp = k_pairs(kc), padded = (n + NR - 1) / NR * NR;
  const float* src = B.data + p0 * B.row_stride + j0 * B.col_stride;
  if (B.col_stride == 1 && B.row_stride != 1) {
    for (int64_t p = 0; p < kc; p += 2) {
      const float* even = src + p * B.row_stride;
      rows_to_pairs(even, p + 1 < kc ? even + B.row_stride : nullptr, n, padded,
                    p + rows_ahead(n) + 1 < kc ? B.row_stride : 0, Bp + (p / 2) * NR, kp * NR);
    }
    return;
  }
  for (int64_t panel = 0; panel * NR < n; ++panel) {
    uint32_t* dst = Bp + panel * kp * NR;
    const int64_t cols = std::min<int64_t>(NR, n - panel * NR);
    const float* first = src + panel * NR * B.col_stride;
    if (B.row_stride == 1) {  // each column runs along k
      const float* lines[NR + 8];  // this panel's columns, then the next panel's first 8
      for (int c = 0; c < NR + 8; ++c) lines[c] = panel * NR + c < n ? first + c * B.col_stride : nullptr;
      for (int c = 0; c < NR; c += 8) lines_to_pairs(lines + c, lines + c + 8, kc, dst + c, NR);
      continue;
    }
    alignas(64) float even[NR], odd[NR];
    for (int64_t p = 0; p < kc; p += 2, dst += NR) {  // any strides: gather each pair of rows
      gather(first + p * B.row_stride, B.col_stride, cols, even);
      gather(p + 1 < kc ? first + (p + 1) * B.row_stride : nullptr, B.col_stride, cols, odd);
      for (int c = 0; c < NR; c += 16)
        row_pairs(even + c, p + 1 < kc ? odd + c : nullptr, std::min<int64_t>(16, cols - c), dst + c, 16);
    }
  }
}

// Where pair_tile finds row r's pair p of A: at Ap[p * a_step + r] (by_pair: a packed panel, MR
// rows a pair, or a band's rows side by side) or at Ap[r * a_step + p] (by_row: each row's pairs
// in a line of their own).
enum class PairOrder { by_pair, by_row };

// How MR or more rows of A sit in their pairs: the order, and the words from one row (by_row) or
// one pair (by_pair) to the next.
struct PairLayout {
  PairOrder order;
  int64_t step;
};

// Words from one row's pairs to the next, by_row: kp rounded up to whole cache lines.
inline int64_t row_step(int64_t kp) { return (kp + 15) / 16 * 16; }

// C[0..m, 0..n) = start + alpha * A · Bp over kp pairs of k, m <= ROWS <= MR, n <= NV * 16; A: ROWS
// rows of pairs at Ap (ORDER, a_step), Bp: NR columns of pairs. A ROWS x NV*16 block of C in
// registers, one vdpbf16ps per register and pair. by_row reads rows past m as row m - 1 (their sums
// are dropped). ROWS < MR serves a last row panel (65 rows are 5 panels of 12 and one of 5) for
// a fraction of a whole panel's work.
template <int NV, PairOrder ORDER = PairOrder::by_pair, int ROWS = MR>
TINYGPT_BF16_TARGET void pair_tile(int64_t kp, const uint32_t* __restrict Ap, int64_t a_step,
                                   const uint32_t* __restrict Bp, float* C, int64_t ldc, Start start, int m, int n,
                                   float alpha = 1.0f) {
  __m512 acc[ROWS][NV];
  [[maybe_unused]] const uint32_t* a_rows[ROWS];
#pragma GCC unroll 12
  for (int r = 0; r < ROWS; ++r) {
    for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_setzero_ps();
    if constexpr (ORDER == PairOrder::by_row) a_rows[r] = Ap + std::min(r, m - 1) * a_step;
  }
#pragma GCC unroll 2
  for (int64_t p = 0; p < kp; ++p, Bp += NR) {
    __m512bh b[NV];
    for (int v = 0; v < NV; ++v) b[v] = (__m512bh)_mm512_loadu_si512(Bp + v * 16);  // a head's panels may not be 64-byte aligned
#pragma GCC unroll 12
    for (int r = 0; r < ROWS; ++r) {
      const uint32_t pair = ORDER == PairOrder::by_row ? a_rows[r][p] : Ap[r];
      const __m512bh a = (__m512bh)_mm512_set1_epi32(static_cast<int>(pair));
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_dpbf16_ps(acc[r][v], a, b[v]);
    }
    if constexpr (ORDER == PairOrder::by_pair) Ap += a_step;
  }
  if (alpha != 1.0f) {  // attention's scaled scores; a plain product skips the multiply
    const __m512 scale = _mm512_set1_ps(alpha);
#pragma GCC unroll 12
    for (int r = 0; r < ROWS; ++r)
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_mul_ps(acc[r][v], scale);
  }
  if (m == ROWS && n == NV * 16) {
#pragma GCC unroll 12
    for (int r = 0; r < ROWS; ++r)
      for (int v = 0; v < NV; ++v) {
        float* c = C + r * ldc + v * 16;
        if (start.accumulate) _mm512_storeu_ps(c, _mm512_add_ps(_mm512_loadu_ps(c), acc[r][v]));
        else if (start.bias) _mm512_storeu_ps(c, _mm512_add_ps(acc[r][v], _mm512_loadu_ps(start.bias + v * 16)));
        else _mm512_storeu_ps(c, acc[r][v]);
      }
    return;
  }
  alignas(64) float tile[ROWS][NV * 16];  // an edge tile: spill, then copy the valid part
#pragma GCC unroll 12
  for (int r = 0; r < ROWS; ++r)
    for (int v = 0; v < NV; ++v) _mm512_store_ps(&tile[r][v * 16], acc[r][v]);
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < n; ++c) C[r * ldc + c] = start.value(C[r * ldc + c], tile[r][c], c);
}

// pair_tile for m <= MR rows of A laid out as `a` (Ap: the first row's first pair) and n <= NR
// columns of C: the instantiation that covers them.
template <PairOrder ORDER, int ROWS>
TINYGPT_BF16_TARGET inline void pair_tile_rows(int64_t kp, const uint32_t* Ap, int64_t a_step, const uint32_t* Bp,
                                               float* C, int64_t ldc, Start start, int m, int n, float alpha) {
  if (n <= 16) return pair_tile<1, ORDER, ROWS>(kp, Ap, a_step, Bp, C, ldc, start, m, n, alpha);
  pair_tile<2, ORDER, ROWS>(kp, Ap, a_step, Bp, C, ldc, start, m, n, alpha);
}
template <PairOrder ORDER>
TINYGPT_BF16_TARGET inline void pair_tile_order(int64_t kp, const uint32_t* Ap, int64_t a_step, const uint32_t* Bp,
                                                float* C, int64_t ldc, Start start, int m, int n, float alpha) {
  if (m <= MR / 3) return pair_tile_rows<ORDER, MR / 3>(kp, Ap, a_step, Bp, C, ldc, start, m, n, alpha);
  if (m <= 2 * MR / 3) return pair_tile_rows<ORDER, 2 * MR / 3>(kp, Ap, a_step, Bp, C, ldc, start, m, n, alpha);
  pair_tile_rows<ORDER, MR>(kp, Ap, a_step, Bp, C, ldc, start, m, n, alpha);
}
TINYGPT_BF16_TARGET inline void pair_tile_for(PairLayout a, int64_t kp, const uint32_t* Ap, const uint32_t* Bp,
                                              float* C, int64_t ldc, Start start, int m, int n, float alpha = 1.0f) {
  if (a.order == PairOrder::by_row) return pair_tile_order<PairOrder::by_row>(kp, Ap, a.step, Bp, C, ldc, start, m, n, alpha);
  pair_tile_order<PairOrder::by_pair>(kp, Ap, a.step, Bp, C, ldc, start, m, n, alpha);
}

}  // namespace tinygpt::bf16

#endif  // TINYGPT_BF16_KERNELS
