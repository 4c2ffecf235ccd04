#include "small_gemm.h"

#include <algorithm>
#include <stdexcept>

#include "pack.h"
#include "simd.h"
#include "../precision.h"

namespace tinygpt {

using namespace simd;

namespace {

// How a tile walks its rows of A: along them (a_col == 1: Q Kᵀ, P V, dY Vᵀ, dS K), down the columns
// (a_row == 1: dSᵀ Q, Pᵀ dY), or through any strides. The first two keep address arithmetic out of
// the loop over p, which with general strides issued 32 instructions for 12 FMAs: the front end,
// not the FMA units, set the pace.
enum class Walk { rows, columns, strided };

// acc[r] += A(r, p) * Bp[p] over p < k, in order of p; Bp: one packed panel of NR columns.
template <int ROWS, Walk W>
void update(vfloat (&acc)[ROWS][2], const float* a, int64_t a_row, int64_t a_col, const float* Bp, int64_t k) {
  [[maybe_unused]] const float* rows[ROWS];
  if constexpr (W == Walk::rows)
    for (int r = 0; r < ROWS; ++r) rows[r] = a + r * a_row;
  for (int64_t p = 0; p < k; ++p, Bp += NR) {
    const vfloat b0 = load(Bp), b1 = load(Bp + kLanes);
#pragma GCC unroll 12
    for (int r = 0; r < ROWS; ++r) {
      const vfloat ar = W == Walk::rows      ? broadcast(rows[r] + p)
                        : W == Walk::columns ? broadcast(a + p * a_col + r)
                                             : broadcast(a + r * a_row + p * a_col);
      acc[r][0] = fma(ar, b0, acc[r][0]);
      acc[r][1] = fma(ar, b1, acc[r][1]);
    }
  }
}

// ROWS rows x NR columns of C (the first `cols` stored), one rank-1 update per p: 2 ROWS
// accumulators in registers, as in gemm's micro-kernel, so that the FMAs, not the loads, set the
// pace. Every C element sums over p in the same order, whatever the tile.
template <int ROWS>
void tile(const SmallGemmArgs& g, int64_t i0, int64_t j0, int64_t cols) {
  vfloat acc[ROWS][2];
#pragma GCC unroll 12
  for (int r = 0; r < ROWS; ++r) acc[r][0] = acc[r][1] = zero();
  const float* a = g.a + i0 * g.a_row;
  const float* panel = g.b.data + (j0 / NR) * g.b.panel;
  if (g.a_panel)  // one panel of A's k after another, into the same sums: the order of p as below
    for (int64_t p0 = 0; p0 < g.k; p0 += NR)
      update<ROWS, Walk::rows>(acc, a + p0 / NR * g.a_panel, NR, 1, panel + p0 * NR, std::min<int64_t>(NR, g.k - p0));
  else if (g.a_col == 1) update<ROWS, Walk::rows>(acc, a, g.a_row, 1, panel, g.k);
  else if (g.a_row == 1) update<ROWS, Walk::columns>(acc, a, 1, g.a_col, panel, g.k);
  else update<ROWS, Walk::strided>(acc, a, g.a_row, g.a_col, panel, g.k);
  const vfloat alpha = broadcast(&g.alpha);
  int lanes[2];  // a last tile: fewer, none in its second vector
  for (int v = 0; v < 2; ++v) lanes[v] = static_cast<int>(std::clamp<int64_t>(cols - v * kLanes, 0, kLanes));
  vfloat out[ROWS * 2];  // a copy: acc's address taken would keep it out of registers in update
#pragma GCC unroll 12
  for (int r = 0; r < ROWS; ++r)
    for (int v = 0; v < 2; ++v) {
      out[r * 2 + v] = acc[r][v] * alpha;
      if (g.accumulate && lanes[v] > 0)
        out[r * 2 + v] = add(load_n(g.c + (i0 + r) * g.c_row + j0 + v * kLanes, lanes[v]), out[r * 2 + v]);
    }
  if (g.round_c) round_bf16_each<2 * ROWS>(out);
#pragma GCC unroll 12
  for (int r = 0; r < ROWS; ++r)
    for (int v = 0; v < 2; ++v)
      if (lanes[v] > 0) store_n(g.c + (i0 + r) * g.c_row + j0 + v * kLanes, out[r * 2 + v], lanes[v]);
}

// The tile for `rows` (1 .. ROWS) rows: the compiler gets each row count as a constant.
template <int ROWS>
void rows_tile(int64_t rows, const SmallGemmArgs& g, int64_t i0, int64_t j0, int64_t cols) {
  if constexpr (ROWS > 1)
    if (rows < ROWS) return rows_tile<ROWS - 1>(rows, g, i0, j0, cols);
  tile<ROWS>(g, i0, j0, cols);
}

void small_gemm_floats(const SmallGemmArgs& g) {
  fused([&] {
    for (int64_t i0 = 0; i0 < g.m; i0 += MR)
      for (int64_t j0 = 0; j0 < g.n; j0 += NR)
        rows_tile<MR>(std::min<int64_t>(MR, g.m - i0), g, i0, j0, std::min<int64_t>(NR, g.n - j0));
  });
}

// The portable bf16 form: MR rows of A and up to kSmallDepth of its k at a time, rounded into a
// block, times B's rounded panels by the float kernels. The block keeps A's own direction (rows
// along k, or columns along the rows), so that the rounding reads and writes contiguous runs and
// vectorizes.
void small_gemm_rounded(const SmallGemmArgs& g) {
  alignas(64) float block[kSmallDepth * MR];
  const bool along_rows = g.a_col == 1;  // A(i0 + r, p0 + p) at [r * ld + p]; else at [p * MR + r]
  for (int64_t i0 = 0; i0 < g.m; i0 += MR) {
    const int64_t rows = std::min<int64_t>(MR, g.m - i0);
    for (int64_t p0 = 0; p0 < g.k; p0 += kSmallDepth) {
      const int64_t depth = std::min(kSmallDepth, g.k - p0);
      const float* a = g.a + i0 * g.a_row + p0 * g.a_col;
      const int64_t ld = (depth + 15) / 16 * 16;  // rows packed close: far apart, they share L1 sets
      if (along_rows) {
        for (int64_t r = 0; r < rows; ++r) round_bf16(a + r * g.a_row, depth, block + r * ld);
      } else {
        for (int64_t p = 0; p < depth; ++p)
          for (int64_t r = 0; r < rows; ++r) block[p * MR + r] = round_to_bf16(a[p * g.a_col + r * g.a_row]);
      }
      small_gemm_floats({rows, g.n, depth, block, along_rows ? ld : 1, along_rows ? 1 : MR,
                         g.b.from_row(p0), g.c + i0 * g.c_row, g.c_row, g.alpha, g.accumulate || p0 > 0, false, 0,
                         g.round_c && p0 + depth == g.k});  // C's final values: the last block's
    }
  }
}

}  // namespace

SmallForm small_form(Precision precision) {
  if (precision == Precision::fp32) return SmallForm::floats;
  return bf16_native() ? SmallForm::pairs : SmallForm::rounded;
}

SmallA packed_rows(SmallB b, int64_t i0) {
  if (b.form == SmallForm::pairs) throw std::logic_error("packed_rows: pairs hold no rows of floats");
  return {b.data + i0 * NR, NR, 1, b.panel};
}

SmallB SmallB::from_row(int64_t p) const {
  return {data + (form == SmallForm::pairs ? p / 2 : p) * NR, panel, form};
}

SmallB packed(MatrixView B, int64_t k, int64_t n, float* out, SmallForm form) {
  if (form == SmallForm::pairs) return packed_pairs(B, k, n, out);
  pack_b(B, 0, n, 0, k, out, form == SmallForm::rounded && !B.bf16_exact);
  return {out, k * NR, form};
}

void small_gemm(const SmallGemmArgs& g) {
  if (g.k <= 0) return small_gemm_floats(g);  // C = 0 (or unchanged): nothing to round
  switch (g.b.form) {
    case SmallForm::floats: return small_gemm_floats(g);
    case SmallForm::rounded: return g.a_rounded || g.a_panel ? small_gemm_floats(g) : small_gemm_rounded(g);
    case SmallForm::pairs:
      if (g.round_c) throw std::logic_error("small_gemm: the pairs form does not store C rounded");
      return small_gemm_pairs(g);
  }
}

}  // namespace tinygpt
