// bf16 mixed-precision GEMM on AVX512_BF16: vdpbf16ps multiplies 16 pairs of bfloat16 values and
// adds each pair's two products to a float accumulator, twice the multiply-adds of vfmadd231ps.
//   for each depth block (at most KC deep):
//     pack B straight into bfloat16 pairs along k: Bp[k / 2][c] = {B(k, c), B(k + 1, c)}
//     for each row band of C, in parallel: round its A into pairs {A(r, k), A(r, k + 1)}, laid out
//       along the direction A is stored in (PairLayout), so that packing is rounding, not transposing
//       for each B panel (L1), for each MR rows of the band (L2): an MR x NR block of C in 24
//       registers, one vdpbf16ps per register and pair of k.
// Where each thread has rows enough and B's pairs are small (kOwnBMost), each thread packs its own
// copy of them instead and runs its bands against it, all in one parallel loop.
// A deep product whose B is narrow (pairs of every depth block within kDeepBMost: GPT's MLP output
// layer, 4096x1536x384) packs all of B first and runs each band through every block in turn, so
// that the band's rows of C stay in L2 instead of going out to memory and back once a block.
// A short, wide C (pairs_short: at most kShortPairsMost rows, more columns than rows) instead splits its
// columns over threads; each rounds all of A, and B a few panels at a time just before it uses them.
// Rounding is vcvtneps2bf16's (round to nearest even); an odd depth pairs its last k with 0. Every
// operand is read from memory once per depth block, so packing is where memory bandwidth shows:
// the packers request the rows they read next ahead of time. Asked for A's row sums (a Linear's
// bias gradient, with A = dYᵀ), the packers add them up from the float values they round, in
// RowSums' chunks of k, as each band owns its rows through every depth block.
#include "gemm.h"

#include <algorithm>

#include "bf16_pairs.h"
#include "blocking.h"
#include "pack.h"
#include "parallel.h"
#include "../tensor.h"

namespace tinygpt {

#ifdef TINYGPT_BF16_KERNELS

namespace {

using namespace bf16;

// Rows' sums in RowSums' order as the packers meet A's values, k in order: the chunk at hand in
// `partial`, added to `total` where a chunk ends (k, counted from A's first column, a multiple of
// `chunk`). Empty (total null): no sums wanted.
struct SumRows {
  float* total = nullptr;
  float* partial = nullptr;
  int64_t chunk = 0;
  explicit operator bool() const { return total; }
  SumRows from(int64_t i0) const { return total ? SumRows{total + i0, partial + i0, chunk} : SumRows{}; }
  // Rows [0, m)'s chunk at hand added to their totals; a new chunk starts.
  void add_chunk(int64_t m) const {
    for (int64_t i = 0; i < m; ++i) total[i] += partial[i], partial[i] = 0.0f;
  }
  // Rows [0, m) once their values before k = end are added in: the chunk that ends there, if one does.
  void close_chunk(int64_t end, int64_t m) const {
    if (end % chunk == 0) add_chunk(m);
  }
};

// M rows' sums of A [M, K] (SumRows), then stored into RowSums or added to them.
class RowSumScratch {
 public:
  RowSumScratch(int64_t M, int64_t K) : total_(M, 0.0f), partial_(M, 0.0f), K_(K), chunk_(row_sum_chunk(K)) {}
  SumRows rows() { return {total_.data(), partial_.data(), chunk_}; }
  void store(RowSums out) {
    if (K_ % chunk_ != 0) rows().add_chunk(static_cast<int64_t>(total_.size()));  // the short last chunk
    for (size_t i = 0; i < total_.size(); ++i) out.out[i] = out.accumulate ? out.out[i] + total_[i] : total_[i];
  }

 private:
  memory::Vector<float> total_, partial_;
  int64_t K_, chunk_;
};

constexpr int64_t kBandRows = 20 * MR;  // most rows of a band: its packed A (kBandRows x KC bfloat16) stays in L2

// Words from one pair's rows to the next: m rounded up to whole MR-row tiles (the last tile reads
// MR rows), then to a cache line.
int64_t pair_step(int64_t m) { return ((m + MR - 1) / MR * MR + 15) / 16 * 16; }

// Words that m rows of kp pairs take, in either order.
int64_t band_words(int64_t m, int64_t kp) { return std::max(m * row_step(kp), kp * pair_step(m)); }

// How m rows of A, kp pairs deep, are laid out: along the direction A is stored in, so that
// packing is rounding alone. A row-major A (or any strides) by_row, each row's pairs a line of
// their own; A stored transposed (a dW's dYᵀ) by_pair, each pair's rows side by side.
PairLayout band_layout(MatrixView A, int64_t m, int64_t kp) {
  if (A.row_stride == 1 && A.col_stride != 1) return {PairOrder::by_pair, pair_step(m)};
  return {PairOrder::by_row, row_step(kp)};
}

// m rows of A from i0 and kc of its columns from p0 as pairs into Ap (band_words), laid out as
// band_layout says; `line` (kc floats) gathers a row whose values are not contiguous. sums (empty:
// none): the m rows' sums (already from i0), to which their kc values are added, k in order.
TINYGPT_BF16_TARGET PairLayout pack_band(MatrixView A, int64_t i0, int64_t m, int64_t p0, int64_t kc, uint32_t* Ap,
                                        float* line, SumRows sums) {
  const float* src = A.data + i0 * A.row_stride + p0 * A.col_stride;
  const PairLayout layout = band_layout(A, m, k_pairs(kc));
  const int64_t step = layout.step;
  if (layout.order == PairOrder::by_pair) {
    for (int64_t k = 0; k < kc; k += 2) {  // a chunk is a whole number of pairs (row_sum_chunk)
      const float* even = src + k * A.col_stride;
      rows_to_pairs(even, k + 1 < kc ? even + A.col_stride : nullptr, m, step,
                    k + rows_ahead(m) + 1 < kc ? A.col_stride : 0, Ap + (k / 2) * step, NR, sums.partial);
      if (sums) sums.close_chunk(p0 + std::min(k + 2, kc), m);
    }
    return layout;
  }
  for (int64_t r = 0; r < m; ++r) {
    const float* row = src + r * A.row_stride;
    if (A.col_stride == 1 && r + 3 < m)  // as rows_to_pairs: the row three on, from memory meanwhile
      request_lines(row + 3 * A.row_stride, A.row_stride, 1, kc);
    if (A.col_stride != 1) {
      gather(row, A.col_stride, kc, line);
      row = line;
    }
    line_pairs(row, kc, Ap + r * step);
    if (!sums) continue;
    const SumRows mine = sums.from(r);
    for (int64_t k = 0; k < kc;) {  // up to the end of k's chunk, or of the block
      const int64_t end = std::min(kc, ((p0 + k) / sums.chunk + 1) * sums.chunk - p0);
      for (; k < end; ++k) *mine.partial += row[k];
      mine.close_chunk(p0 + end, 1);
    }
  }
  return layout;
}

// A last panel only a few columns wide, against rows laid out by_row: C[0..m, 0..n) = start + A · Bp,
// n <= kNarrowMost. Each row's pairs against each column's, 16 pairs at a time, summed across the
// lanes at the end, where a tile would spend 16 lanes on each column.
constexpr int kNarrowMost = 4;  // columns: up to here the lanes across k beat a tile
TINYGPT_BF16_TARGET void narrow_rows(int64_t kp, const uint32_t* __restrict Ap, int64_t a_step,
                                     const uint32_t* __restrict Bp, float* C, int64_t ldc, Start start, int64_t m, int n) {
  alignas(64) uint32_t column[kNarrowMost][KC / 2];  // each column's pairs side by side
  for (int c = 0; c < n; ++c)
    for (int64_t p = 0; p < kp; ++p) column[c][p] = Bp[p * NR + c];
  for (int64_t r = 0; r < m; ++r) {
    __m512 acc[kNarrowMost];
    for (int c = 0; c < n; ++c) acc[c] = _mm512_setzero_ps();
    for (int64_t p = 0; p < kp; p += 16) {
      const __m512bh a = (__m512bh)_mm512_maskz_loadu_epi32(lanes(kp - p), Ap + r * a_step + p);
      for (int c = 0; c < n; ++c)
        acc[c] = _mm512_dpbf16_ps(acc[c], a, (__m512bh)_mm512_maskz_loadu_epi32(lanes(kp - p), column[c] + p));
    }
    for (int c = 0; c < n; ++c) C[r * ldc + c] = start.value(C[r * ldc + c], _mm512_reduce_add_ps(acc[c]), c);
  }
}

// One row band (m rows, packed as `a`) against every packed B panel: C[m, N] (=|+=) A · Bp; a last
// panel of a few columns goes to narrow_rows where the rows are laid out by_row.
void pair_band(int64_t kp, const uint32_t* Ap, PairLayout a, const uint32_t* Bp, float* C, int64_t ldc, int64_t m,
               int64_t N, Start start) {
  for (int64_t j = 0; j < N; j += NR) {
    if (N - j <= kNarrowMost && a.order == PairOrder::by_row) {
      narrow_rows(kp, Ap, a.step, Bp + (j / NR) * kp * NR, C + j, ldc, start.at_column(j), m, static_cast<int>(N - j));
      break;
    }
    for (int64_t i = 0; i < m; i += MR) {
      const int rows = static_cast<int>(std::min<int64_t>(MR, m - i)), cols = static_cast<int>(std::min<int64_t>(NR, N - j));
      const uint32_t* first = a.order == PairOrder::by_pair ? Ap + i : Ap + i * a.step;
      pair_tile_for(a, kp, first, Bp + (j / NR) * kp * NR, C + i * ldc + j, ldc, start.at_column(j), rows, cols);
    }
  }
}

// Most bytes of B's pairs, every depth block, that a deep product packs at once, read from L2 and
// L3 by every band.
constexpr int64_t kDeepBMost = int64_t{3} << 19;  // 1.5 MB: still served from L2 and L3

// Each thread packs its own copy of B's pairs (one depth block of them, at most kOwnBMost, or a deep
// product's every block) where each has kOwnRowsLeast rows of C or more: rounding all of B costs it
// less than a parallel loop of its own and reading pairs that another core wrote.
constexpr int64_t kOwnBMost = int64_t{1} << 20;  // 1 MB
constexpr int64_t kOwnRowsLeast = 8 * MR;
// Most bytes of all threads' copies together: many cores share B's pairs instead (the pool keeps
// each product's scratch while training runs).
constexpr int64_t kOwnCopiesMost = int64_t{1} << 24;  // 16 MB

// Most rows of a short C (GPT-2's 256 tokens a step): all of its A, one depth block deep, stays in L2.
constexpr int64_t kShortPairsMost = 32 * MR;
// Most words of a short C's A packed whole (all depth blocks), to be kept in L2 while the depth
// blocks run inside each group of B panels: C's columns then stay in L2 from block to block.
constexpr int64_t kWholeAMost = int64_t{1} << 17;  // 512 KB

// C with few rows: threads split the columns; each rounds all of A into pairs, then B a few
// panels at a time just before using them (in L2, where the tiled path writes all of B's pairs
// out to memory and reads them back for every band). Every thread rounding all of A pays where B
// outweighs A, a C wider than tall (pairs_short).
void pairs_short(int64_t M, int64_t N, MatrixView A, MatrixView B, float* C, int64_t ldc, bool accumulate,
                 const float* bias, DepthBlocks blocks, SumRows sums) {
  const int64_t n_panels = (N + NR - 1) / NR, kp_most = k_pairs(blocks.most);
  const int64_t slices = std::min<int64_t>(n_panels, num_threads()), slice_panels = (n_panels + slices - 1) / slices;
  const int64_t a_block = band_words(M, kp_most);
  const bool whole = blocks.count * a_block <= kWholeAMost;  // A packed once for every depth block
  const int64_t line_floats = (blocks.most + 15) / 16 * 16, b_words = kp_most * kGroup * NR;
  const int64_t share = line_floats + (whole ? blocks.count : 1) * a_block + b_words;
  SlotScratch scratch(share);
  parallel_for_slots(slices, 1, [&](int slot, int64_t s0, int64_t s1) {
    float* line = scratch[slot];
    uint32_t* Ap = reinterpret_cast<uint32_t*>(line + line_floats);
    uint32_t* Bp = Ap + (whole ? blocks.count : 1) * a_block;
    const int64_t j_begin = s0 * slice_panels * NR, j_end = std::min(N, s1 * slice_panels * NR);
    const SumRows row_sums = s0 == 0 ? sums : SumRows{};  // every slice rounds all of A: the first sums it
    // One group of B panels from j0 against A's pairs for one depth block.
    auto multiply = [&](int64_t block, int64_t j0, const uint32_t* a_pairs) {
      const int64_t kc = blocks.depth(block), kp = k_pairs(kc), n = std::min(kGroup * NR, j_end - j0);
      pack_b_pairs(B, j0, n, block * blocks.most, kc, Bp);
      const Start start{.accumulate = accumulate || block > 0, .bias = bias};
      pair_band(kp, a_pairs, band_layout(A, M, kp), Bp, C + j0, ldc, M, n, start.at_column(j0));
    };
    if (whole) {
      for (int64_t block = 0; block < blocks.count; ++block)
        pack_band(A, 0, M, block * blocks.most, blocks.depth(block), Ap + block * a_block, line, row_sums);
      for (int64_t j0 = j_begin; j0 < j_end; j0 += kGroup * NR)
        for (int64_t block = 0; block < blocks.count; ++block) multiply(block, j0, Ap + block * a_block);
      return;
    }
    for (int64_t block = 0; block < blocks.count; ++block) {
      pack_band(A, 0, M, block * blocks.most, blocks.depth(block), Ap, line, row_sums);
      for (int64_t j0 = j_begin; j0 < j_end; j0 += kGroup * NR) multiply(block, j0, Ap);
    }
  });
}

// The product of M, N, K > 0, and A's row sums added into `sums` (empty: none) as A is rounded.
void pair_product(int64_t M, int64_t N, int64_t K, MatrixView A, MatrixView B, float* C, int64_t ldc,
                  bool accumulate, const float* bias, SumRows sums) {
  const DepthBlocks blocks(K);
  const int64_t kp_most = k_pairs(blocks.most), n_panels = (N + NR - 1) / NR;
  if (M <= kShortPairsMost && N > M && n_panels >= num_threads())
    return pairs_short(M, N, A, B, C, ldc, accumulate, bias, blocks, sums);
  // Row bands: at most kBandRows rows, as many as make equal shares for the threads where M allows.
  const int64_t threads = num_threads();
  int64_t bands = (M + kBandRows - 1) / kBandRows;
  if (bands % threads != 0 && (bands + threads - 1) / threads * threads * MR <= M)
    bands = (bands + threads - 1) / threads * threads;
  const int64_t row_panels = (M + MR - 1) / MR;
  auto band_start = [&](int64_t band) { return std::min(M, band * row_panels / bands * MR); };
  const int64_t most_rows = (row_panels + bands - 1) / bands * MR;

  // Per thread: a line for gathering, then its band's pairs (cache-line aligned).
  const int64_t line_floats = (blocks.most + 15) / 16 * 16;
  const int64_t share = line_floats + band_words(most_rows, kp_most);  // floats and uint32 are both 4 bytes
  SlotScratch scratch(share);

  // B's pairs are packed a stage at a time: every depth block at once where the product runs deep,
  // else one block. Shared by the threads (packed in a parallel loop of its own), or where each
  // thread has rows enough and a copy is small, each thread's own copy.
  const int64_t b_block = n_panels * kp_most * NR;
  const bool deep = blocks.count > 1 && blocks.count * b_block * 4 <= kDeepBMost;
  const int64_t stage_blocks = deep ? blocks.count : 1, b_words = stage_blocks * b_block;
  const bool own_b = threads > 1 && M >= threads * kOwnRowsLeast && (deep || b_block * 4 <= kOwnBMost) &&
                     max_slots() * b_words * 4 <= kOwnCopiesMost;
  SlotScratch packed_b(b_words, own_b ? max_slots() : 1);
  uint32_t* Bp = reinterpret_cast<uint32_t*>(packed_b[0]);

  // The stage from depth block k0 as pairs at `out`, b_block words a block. Shared: each thread
  // packs one run of the panels, so that a row-major B is read row by row across the run.
  auto pack_stage = [&](int64_t k0, uint32_t* out, bool shared) {
    for (int64_t block = k0; block < k0 + stage_blocks; ++block) {
      const int64_t kc = blocks.depth(block), kp = k_pairs(kc), p0 = block * blocks.most;
      uint32_t* pairs = out + (block - k0) * b_block;
      if (!shared) {
        pack_b_pairs(B, 0, N, p0, kc, pairs);
        continue;
      }
      parallel_for(n_panels, (n_panels + threads - 1) / threads, [&](int64_t q0, int64_t q1) {
        pack_b_pairs(B, q0 * NR, std::min(N, q1 * NR) - q0 * NR, p0, kc, pairs + q0 * kp * NR);
      });
    }
  };
  // Bands [b0, b1) of C against the stage from block k0 (B's pairs at b_pairs): each band runs
  // every block of the stage in turn, so that a deep product's rows of C stay in L2 between blocks.
  auto run_stage = [&](int64_t k0, int64_t b0, int64_t b1, const uint32_t* b_pairs, float* line) {
    uint32_t* Ap = reinterpret_cast<uint32_t*>(line + line_floats);
    for (int64_t band = b0; band < b1; ++band)
      for (int64_t block = k0; block < k0 + stage_blocks; ++block) {
        const int64_t kc = blocks.depth(block), i0 = band_start(band), m = band_start(band + 1) - i0;
        const PairLayout a = pack_band(A, i0, m, block * blocks.most, kc, Ap, line, sums.from(i0));
        pair_band(k_pairs(kc), Ap, a, b_pairs + (block - k0) * b_block, C + i0 * ldc, ldc, m, N,
                  Start{.accumulate = accumulate || block > 0, .bias = bias});
      }
  };
  if (own_b) {  // one parallel loop: each thread a run of bands, against its own copy of B
    parallel_for_slots(bands, (bands + threads - 1) / threads, [&](int slot, int64_t b0, int64_t b1) {
      uint32_t* own = reinterpret_cast<uint32_t*>(packed_b[slot]);
      for (int64_t k0 = 0; k0 < blocks.count; k0 += stage_blocks) {
        pack_stage(k0, own, false);
        run_stage(k0, b0, b1, own, scratch[slot]);
      }
    });
    return;
  }
  for (int64_t k0 = 0; k0 < blocks.count; k0 += stage_blocks) {
    pack_stage(k0, Bp, true);
    parallel_for_slots(bands, 1, [&](int slot, int64_t b0, int64_t b1) {
      run_stage(k0, b0, b1, Bp, scratch[slot]);
    });
  }
}

}  // namespace

bool bf16_instructions() {
  static const bool available = __builtin_cpu_supports("avx512bf16");
  return available;
}

void gemm_bf16_native(int64_t M, int64_t N, int64_t K, MatrixView A, MatrixView B, float* C, int64_t ldc,
                      bool accumulate, const float* bias, RowSums sums) {
  if (M <= 0 || N <= 0 || K <= 0)  // nothing to multiply
    return gemm(M, N, K, A, B, C, ldc, accumulate, bias, Precision::fp32, sums);
  if (!sums.out) return pair_product(M, N, K, A, B, C, ldc, accumulate, bias, SumRows{});
  RowSumScratch scratch(M, K);
  pair_product(M, N, K, A, B, C, ldc, accumulate, bias, scratch.rows());
  scratch.store(sums);
}

#else  // no AVX-512 build: the portable path serves every bf16 product

bool bf16_instructions() { return false; }

void gemm_bf16_native(int64_t M, int64_t N, int64_t K, MatrixView A, MatrixView B, float* C, int64_t ldc,
                      bool accumulate, const float* bias, RowSums sums) {
  gemm(M, N, K, A, B, C, ldc, accumulate, bias, Precision::bf16, sums);  // the portable path
}

#endif

}  // namespace tinygpt
