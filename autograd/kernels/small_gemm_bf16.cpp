// The attention heads' small products on AVX512_BF16 (small_gemm.h's pairs form): B packed once
// per head as bfloat16 pairs along k, A rounded MR rows and up to kSmallDepth k at a time into
// pairs on the stack, then gemm's bf16 register tile (bf16_pairs.h) with alpha applied to the
// float sums.
#include <stdexcept>

#include "bf16_pairs.h"
#include "small_gemm.h"

namespace tinygpt {

#ifdef TINYGPT_BF16_KERNELS

namespace {

using namespace bf16;

// rows (<= MR) x depth of A from (i0, p0) as pairs at Ap (kSmallDepth / 2 * MR words), laid out
// along the direction A is stored in, as the GEMM's bands are: rows that run along k as a line of
// pairs each (by_row, Ap[r * step + p / 2]: rounding alone, no transpose, which is cheaper than a
// panel and gives the same bits), otherwise one panel (by_pair, Ap[(p / 2) * MR + r]).
TINYGPT_BF16_TARGET PairLayout pack_a_block(const SmallGemmArgs& g, int64_t i0, int64_t rows, int64_t p0, int64_t depth,
                                            uint32_t* Ap) {
  const float* a = g.a + i0 * g.a_row + p0 * g.a_col;
  if (g.a_col == 1) {  // rows run along k (Q Kᵀ, P V, dY Vᵀ, dS K)
    if (p0 == 0 && i0 + MR < g.m)  // the next rows' first block, requested meanwhile
      request_lines(a + MR * g.a_row, g.a_row, std::min<int64_t>(MR, g.m - i0 - MR), std::min(g.k, kSmallDepth));
    const int64_t step = row_step(k_pairs(depth));
    for (int64_t r = 0; r < rows; ++r) line_pairs(a + r * g.a_row, depth, Ap + r * step);
    return {PairOrder::by_row, step};
  }
  if (g.a_row == 1) {  // each k holds the rows side by side (dSᵀ Q, Pᵀ dY)
    for (int64_t p = 0; p < depth; p += 2)
      row_pairs(a + p * g.a_col, p + 1 < depth ? a + (p + 1) * g.a_col : nullptr, rows, Ap + (p / 2) * MR, MR);
  } else {  // any strides: gather each k's rows, then round them as above
    alignas(64) float even[16], odd[16];
    for (int64_t p = 0; p < depth; p += 2) {
      gather(a + p * g.a_col, g.a_row, rows, even);
      gather(p + 1 < depth ? a + (p + 1) * g.a_col : nullptr, g.a_row, rows, odd);
      row_pairs(even, p + 1 < depth ? odd : nullptr, rows, Ap + (p / 2) * MR, MR);
    }
  }
  return {PairOrder::by_pair, MR};
}

}  // namespace

SmallB packed_pairs(MatrixView B, int64_t k, int64_t n, float* out) {
  pack_b_pairs(B, 0, n, 0, k, reinterpret_cast<uint32_t*>(out));  // 4-byte words, as floats
  return {out, k_pairs(k) * NR, SmallForm::pairs};
}

TINYGPT_BF16_TARGET void small_gemm_pairs(const SmallGemmArgs& g) {
  if (g.b.form != SmallForm::pairs || g.a_panel)
    throw std::logic_error("small_gemm_pairs: B is not packed as pairs, or A is packed panels of floats");
  alignas(64) uint32_t Ap[kSmallDepth / 2 * MR];
  const uint32_t* Bp = reinterpret_cast<const uint32_t*>(g.b.data);
  for (int64_t i0 = 0; i0 < g.m; i0 += MR) {
    const int rows = static_cast<int>(std::min<int64_t>(MR, g.m - i0));
    for (int64_t p0 = 0; p0 < g.k; p0 += kSmallDepth) {
      const int64_t depth = std::min(kSmallDepth, g.k - p0), kp = k_pairs(depth);
      const PairLayout a = pack_a_block(g, i0, rows, p0, depth, Ap);
      const Start start{.accumulate = g.accumulate || p0 > 0};
      for (int64_t j0 = 0; j0 < g.n; j0 += NR) {
        const int cols = static_cast<int>(std::min<int64_t>(NR, g.n - j0));
        const uint32_t* b = Bp + (j0 / NR) * g.b.panel + (p0 / 2) * NR;
        pair_tile_for(a, kp, Ap, b, g.c + i0 * g.c_row + j0, g.c_row, start, rows, cols, g.alpha);
      }
    }
  }
}

#else  // no AVX-512 build: bf16_native() is false, and the rounded form serves every bf16 product

SmallB packed_pairs(MatrixView, int64_t, int64_t, float*) {
  throw std::logic_error("packed_pairs: this build has no AVX512_BF16 kernels");
}
void small_gemm_pairs(const SmallGemmArgs&) {
  throw std::logic_error("small_gemm_pairs: this build has no AVX512_BF16 kernels");
}

#endif

}  // namespace tinygpt
