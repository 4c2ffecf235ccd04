// Packing: an operand copied into the panels that the register-tiled kernels stream (pack.h).
#include "pack.h"

#include <algorithm>
#include <cstring>

namespace tinygpt {

using namespace simd;

namespace {

// Packing reads a short stretch of each of many rows, which the hardware prefetcher is slow to
// follow: ask for the stretch this many rows ahead, far enough to arrive in time.
constexpr int64_t kPrefetchRows = 16;

// A value as it goes into a packed panel: as it is, or rounded to bfloat16 (the portable bf16 path).
inline float put(float x, bool round) { return round ? round_to_bf16(x) : x; }
template <class V>
inline V put(V v, bool round) { return round ? round_bf16(v) : v; }

// One k of a packed panel: dst[0..W) = src[0..valid), zeros after (a partial last panel).
template <int W>
void copy_padded(float* dst, const float* src, int64_t valid, bool round) {
  if (valid >= W && !round) {
    std::memcpy(dst, src, W * sizeof(float));
  } else if (valid >= W) {
    round_bf16(src, W, dst);
  } else {
    for (int c = 0; c < W; ++c) dst[c] = c < valid ? put(src[c], round) : 0.0f;
  }
}

}  // namespace

// The layout of pack.h; rows past m are zero.
void pack_a(MatrixView A, int64_t i0, int64_t m, int64_t p0, int64_t kc, float* Ap, bool round) {
  const int64_t panels = (m + MR - 1) / MR;
  const float* src = A.data + i0 * A.row_stride + p0 * A.col_stride;
  if (A.row_stride == 1) {  // A stored transposed: each k holds every panel's MR values side by side
    // Panels copied a vector at a time: full ones whose vector stays inside the m values of a row
    // (the MR..kLanes spill lands in the next k's place, written next, or in the panel's padding).
    const int64_t vector_panels = kLanes >= MR && m >= kLanes ? (m - kLanes) / MR + 1 : 0;
    for (int64_t k = 0; k < kc; ++k) {  // one stored row at a time: contiguous reads
      const float* s = src + k * A.col_stride;
      request_lines(s + kPrefetchRows * A.col_stride, 0, 1, m);
      int64_t panel = 0;
      for (float* dst = Ap + k * MR; panel < vector_panels; ++panel, dst += a_panel_stride(kc))
        store(dst, put(load(s + panel * MR), round));
      for (; panel < panels; ++panel)
        copy_padded<MR>(Ap + panel * a_panel_stride(kc) + k * MR, s + panel * MR, m - panel * MR, round);
    }
    return;
  }
  for (int64_t panel = 0; panel < panels; ++panel) {  // row-major A: walk MR rows side by side
    float* dst = Ap + panel * a_panel_stride(kc);
    const float* rows[MR];
    for (int r = 0; r < MR; ++r) {
      const int64_t i = std::min<int64_t>(panel * MR + r, m - 1);  // rows past m are zeroed below
      rows[r] = src + i * A.row_stride;
    }
    int64_t k = 0;
#ifdef TINYGPT_HAS_TRANSPOSE8
    if (A.col_stride == 1) {
      if constexpr (MR <= 8) {  // AVX2's 6 rows
        for (; k + 8 <= kc; k += 8) {  // 8 k's of the MR rows at once, turned into 8 rows of the panel
          __m256 v[8];
          for (int r = 0; r < 8; ++r) v[r] = r < MR ? _mm256_loadu_ps(rows[r] + k) : _mm256_setzero_ps();
          transpose8(v);
          for (int j = 0; j < 8; ++j) _mm256_storeu_ps(dst + (k + j) * MR, put(v[j], round));  // the next k overwrites the spill
        }
      } else if constexpr (MR == 12) {  // AVX-512's 12 rows: rows 0-7 and 8-11 as two 8x8 blocks
        for (; k + 8 <= kc; k += 8) {
          __m256 lo[8], hi[8];
          for (int r = 0; r < 8; ++r) lo[r] = _mm256_loadu_ps(rows[r] + k);
          for (int r = 0; r < 8; ++r) hi[r] = r < 4 ? _mm256_loadu_ps(rows[8 + r] + k) : _mm256_setzero_ps();
          transpose8(lo);
          transpose8(hi);
          for (int j = 0; j < 8; ++j) {
            _mm256_storeu_ps(dst + (k + j) * MR, put(lo[j], round));
            _mm_storeu_ps(dst + (k + j) * MR + 8, _mm256_castps256_ps128(put(hi[j], round)));
          }
        }
      }
    }
#endif
    for (; k < kc; ++k)
      for (int r = 0; r < MR; ++r) dst[k * MR + r] = put(rows[r][k * A.col_stride], round);
    for (int64_t r = m - panel * MR; r < MR; ++r)
      for (int64_t k = 0; k < kc; ++k) dst[k * MR + r] = 0.0f;
  }
}

// The layout of pack.h; columns past n are zero.
void pack_b(MatrixView B, int64_t j0, int64_t n, int64_t p0, int64_t kc, float* Bp, bool round) {
  const int64_t panels = (n + NR - 1) / NR;
  if (B.col_stride == 1) {  // row-major B: read each row's stretch in turn, a few panels at a time
    for (int64_t g = 0; g < panels; g += kGroup)
      for (int64_t k = 0; k < kc; ++k) {
        const float* s = B.data + (p0 + k) * B.row_stride + j0;
        request_lines(s + kPrefetchRows * B.row_stride + g * NR, 0, 1, (std::min(g + kGroup, panels) - g) * NR);
        const int64_t end = std::min(g + kGroup, panels);
        int64_t panel = g;
        if (round)  // two whole panels' rows at once: four vectors, rounded together
          for (; panel + 2 <= end && (panel + 2) * NR <= n; panel += 2) {
            vfloat v[4];
            for (int i = 0; i < 4; ++i) v[i] = load(s + panel * NR + i * kLanes);
            round_bf16_x4(v);
            for (int i = 0; i < 4; ++i) store(Bp + (panel + i / 2) * kc * NR + k * NR + (i % 2) * kLanes, v[i]);
          }
        for (; panel < end; ++panel)
          copy_padded<NR>(Bp + panel * kc * NR + k * NR, s + panel * NR, n - panel * NR, round);
      }
    return;
  }
  for (int64_t panel = 0; panel < panels; ++panel) {  // B stored transposed: walk each column
    float* dst = Bp + panel * kc * NR;
    const int64_t cols = std::min<int64_t>(NR, n - panel * NR);
    const float* src = B.data + p0 * B.row_stride + (j0 + panel * NR) * B.col_stride;
    int64_t k0 = 0;
#ifdef TINYGPT_HAS_TRANSPOSE8
    if (B.row_stride == 1 && cols == NR)
      for (; k0 + 8 <= kc; k0 += 8)  // 8 k's of 8 columns at once
        for (int h = 0; h < NR; h += 8) {
          __m256 v[8];
          for (int c = 0; c < 8; ++c) v[c] = _mm256_loadu_ps(src + (h + c) * B.col_stride + k0);
          transpose8(v);
          if (round) round_bf16_each<8>(v);
          for (int j = 0; j < 8; ++j) _mm256_storeu_ps(dst + (k0 + j) * NR + h, v[j]);
        }
#endif
    for (int64_t c = 0; c < NR; ++c) {
      const float* s = src + c * B.col_stride;
      if (c < cols)
        for (int64_t k = k0; k < kc; ++k) dst[k * NR + c] = put(s[k * B.row_stride], round);
      else
        for (int64_t k = k0; k < kc; ++k) dst[k * NR + c] = 0.0f;
    }
  }
}

}  // namespace tinygpt
