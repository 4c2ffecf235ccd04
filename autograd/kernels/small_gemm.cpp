#include "autograd/kernels/small_gemm.h"

#include <algorithm>

#include "autograd/kernels/pack.h"
#include "autograd/kernels/simd.h"

namespace tinygpt {

namespace {
// Tiles of up to MR rows (simd.h: 6 with AVX2, 12 with AVX-512) x 2 vectors: 2 MR accumulators in
// registers, as in gemm's micro-kernel, so that the FMAs, not the loads, set the pace.
constexpr int kTileRows = simd::MR, kTileCols = simd::NR;

// ROWS rows x 2 full vectors of C, one rank-1 update per p.
template <int ROWS>
void full_width_tile(const SmallGemmArgs& g, int64_t i0, int64_t j0) {
  using namespace simd;
  vfloat acc[ROWS][2];
#pragma GCC unroll 12
  for (int r = 0; r < ROWS; ++r) acc[r][0] = acc[r][1] = zero();
  const float* a = g.a + i0 * g.a_row;
  const float* panel = g.b.data + (j0 / kTileCols) * g.b.panel;
  for (int64_t p = 0; p < g.k; ++p) {
    const float* b = panel + p * g.b.row;
    const vfloat b0 = load(b), b1 = load(b + kLanes);
#pragma GCC unroll 12
    for (int r = 0; r < ROWS; ++r) {
      const vfloat ar = broadcast(a + r * g.a_row + p * g.a_col);
      acc[r][0] = fma(ar, b0, acc[r][0]);
      acc[r][1] = fma(ar, b1, acc[r][1]);
    }
  }
  const vfloat alpha = broadcast(&g.alpha);
#pragma GCC unroll 12
  for (int r = 0; r < ROWS; ++r) {
    float* out = g.c + (i0 + r) * g.c_row + j0;
    for (int v = 0; v < 2; ++v) {
      const vfloat x = acc[r][v] * alpha;
      store(out + v * kLanes, g.accumulate ? add(load(out + v * kLanes), x) : x);
    }
  }
}

// The tile for `rows` (1 .. ROWS) rows: the compiler gets each row count as a constant.
template <int ROWS>
void rows_tile(int64_t rows, const SmallGemmArgs& g, int64_t i0, int64_t j0) {
  if constexpr (ROWS > 1)
    if (rows < ROWS) return rows_tile<ROWS - 1>(rows, g, i0, j0);
  full_width_tile<ROWS>(g, i0, j0);
}

// A tile narrower than two vectors: plain loops, the same order of summation.
void edge_tile(const SmallGemmArgs& g, int64_t i0, int64_t j0, int64_t rows, int64_t cols) {
  const float* panel = g.b.data + (j0 / kTileCols) * g.b.panel;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      float acc = 0.0f;
      for (int64_t p = 0; p < g.k; ++p) acc += g.a[(i0 + r) * g.a_row + p * g.a_col] * panel[p * g.b.row + c];
      float& out = g.c[(i0 + r) * g.c_row + j0 + c];
      out = g.accumulate ? out + g.alpha * acc : g.alpha * acc;
    }
}
}  // namespace

SmallB row_major(const float* b, int64_t ld) { return {b, ld, kTileCols}; }

SmallB packed(MatrixView B, int64_t k, int64_t n, float* out) {
  pack_b(B, 0, n, 0, k, out);
  return {out, kTileCols, k * kTileCols};
}

int64_t packed_size(int64_t k, int64_t n) { return k * ((n + kTileCols - 1) / kTileCols * kTileCols); }

void small_gemm(const SmallGemmArgs& g) {
  for (int64_t i0 = 0; i0 < g.m; i0 += kTileRows)
    for (int64_t j0 = 0; j0 < g.n; j0 += kTileCols) {
      const int64_t rows = std::min<int64_t>(kTileRows, g.m - i0), cols = std::min<int64_t>(kTileCols, g.n - j0);
      if (cols == kTileCols) rows_tile<kTileRows>(rows, g, i0, j0);
      else edge_tile(g, i0, j0, rows, cols);
    }
}

}  // namespace tinygpt
