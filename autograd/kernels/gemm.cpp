// Blocked GEMM in the style of GotoBLAS/BLIS (gemm_tiled):
//   for each depth block (at most KC deep): pack B[block, :] into column panels NR wide, shared (L3)
//     for each row band of C (at most MC rows; with few bands, each tile of it), in parallel:
//       pack A[band rows, block] into row panels (L2)
//       (a row-major A one block deep is read in place instead)
//       for each B panel (stays in L1), for each A panel (streams from L2):
//         micro-kernel: an MR x NR block of C held in registers, one rank-1 update per k.
// A short C (gemm_short: at most 192 rows) instead splits its columns over threads; each packs all
// of A per depth block and B a few panels at a time, just before it uses them.
#include "gemm.h"
#include "blocking.h"
#include "pack.h"
#include "simd.h"

#include <algorithm>
#include <stdexcept>

#include "parallel.h"
#include "../tensor.h"

namespace tinygpt {

namespace {

using namespace simd;

constexpr int64_t MC = 20 * MR; // most rows of a tile: its packed A (MC x KC) stays in L2
constexpr int64_t NC = 16 * NR; // most columns of a tile

// Where a micro-kernel reads A: a packed panel, or in place along rows or down columns.
enum class AIn { packed, rows, columns };

// Whether A stored transposed (a dW's dYᵀ) can be read in place, down its columns (AIn::columns):
// its M rows split into kernels of MR, 2 MR / 3 and MR / 3 rows with none left over, and one k
// is not a multiple of 4 KB from the next, which would put every k's values in the same L1 set
// (docs/performance.md, "Kernel choices": columns_in_place).
bool columns_in_place(MatrixView A, int64_t M) {
  const bool whole_kernels = M % MR == 0 || M % MR == MR / 3 || M % MR == 2 * MR / 3;
  return A.row_stride == 1 && whole_kernels && (A.col_stride * sizeof(float)) % 4096 != 0;
}

// Which operands the portable bf16 path rounds as it packs them (those not bfloat16-exact already),
// and whether C is stored rounded (StoreC).
struct Rounding {
  bool a = false, b = false, c = false;
};

// Whether A may be read unpacked for a C N columns wide: narrow_kernel (a last panel of 4 columns
// or fewer) reads packed panels only.
bool a_unpacked_fits(int64_t N) { return N % NR == 0 || N % NR > 4; }

// C[0..m, 0..n) = start + Ap (kc x MR, k-major) · Bp (kc x NR, k-major); m <= ROWS <= MR,
// n <= NV * kLanes. NV = 2, ROWS = MR is the main kernel; NV = 1 serves a last panel at most one
// vector wide, and ROWS < MR a last row panel (128 rows are 21 panels of 6 and one of 2), each at
// a fraction of the cost. NV = 4 spans two B panels, the second one b_panel floats after the first:
// a last panel of MR / 3 rows then still has the eight independent sums that keep both FMA units
// busy. Every C element sums over k in the same order, so the bits never change.
// A_IN: where the kernel reads A (AIn). rows: m rows of a row-major A, a_row floats apart (rows
// past m read row m - 1 again; their sums are never stored). columns: A stored transposed, its
// ROWS values for one k side by side as in a packed panel, a_col floats from one k to the next;
// m must be ROWS (rows past m would be read past the matrix).
template <int NV, int ROWS = MR, AIn A_IN = AIn::packed>
void micro_kernel(int64_t kc, const float* __restrict Ap, const float* __restrict Bp, float* C, int64_t ldc,
                  Start start, int m, int n, int64_t b_panel = 0, int64_t a_row = 0, int64_t a_col = 0) {
  vfloat acc[ROWS][NV];
  [[maybe_unused]] const float* a_rows[ROWS];
#pragma GCC unroll 16
  for (int r = 0; r < ROWS; ++r) {
    for (int v = 0; v < NV; ++v) acc[r][v] = zero();
    if constexpr (A_IN == AIn::rows) a_rows[r] = Ap + std::min(r, m - 1) * a_row;
    __builtin_prefetch(C + r * ldc, 1);  // the C rows are needed once the k loop ends
    __builtin_prefetch(C + r * ldc + NV * kLanes - 1, 1);
  }
#pragma GCC unroll 4
  for (int64_t k = 0; k < kc; ++k, Bp += NR) {
    vfloat b[NV];
    for (int v = 0; v < NV; ++v) b[v] = load_aligned(Bp + (v / 2) * b_panel + (v % 2) * kLanes);
#pragma GCC unroll 16
    for (int r = 0; r < ROWS; ++r) {
      const vfloat a = A_IN == AIn::rows ? broadcast(a_rows[r] + k) : broadcast(Ap + r);
      for (int v = 0; v < NV; ++v) acc[r][v] = fma(a, b[v], acc[r][v]);
    }
    if constexpr (A_IN == AIn::packed) Ap += MR;
    if constexpr (A_IN == AIn::columns) Ap += a_col;
  }
  if (m == ROWS && n == NV * kLanes) {
    vfloat out[ROWS * NV];  // a copy: acc's address taken would keep it out of registers in the loop
#pragma GCC unroll 16
    for (int r = 0; r < ROWS; ++r)
      for (int v = 0; v < NV; ++v) {
        const float* c = C + r * ldc + v * kLanes;
        out[r * NV + v] = start.accumulate ? add(load(c), acc[r][v])
                          : start.bias     ? add(acc[r][v], load(start.bias + v * kLanes))
                                           : acc[r][v];
      }
    if (start.round) round_bf16_each<ROWS * NV>(out);
#pragma GCC unroll 16
    for (int r = 0; r < ROWS; ++r)
      for (int v = 0; v < NV; ++v) store(C + r * ldc + v * kLanes, out[r * NV + v]);
    return;
  }
  alignas(64) float tile[ROWS][NV * kLanes];  // an edge tile: spill, then copy the valid part
#pragma GCC unroll 16
  for (int r = 0; r < ROWS; ++r)
    for (int v = 0; v < NV; ++v) store(&tile[r][v * kLanes], acc[r][v]);
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < n; ++c) C[r * ldc + c] = start.value(C[r * ldc + c], tile[r][c], c);
}

// A last panel only a few columns wide: vectors run down the MR rows of the packed A panel
// (one FMA per column and k) instead of across mostly empty columns. Each C element still sums
// over k in the same order, so the bits are those of the main kernel.
void narrow_kernel(int64_t kc, const float* __restrict Ap, const float* __restrict Bp, float* C, int64_t ldc,
                   Start start, int m, int n) {
  constexpr int kRowVectors = (MR + kLanes - 1) / kLanes;
  vfloat acc[4][kRowVectors];
  for (int c = 0; c < n; ++c)
    for (int v = 0; v < kRowVectors; ++v) acc[c][v] = zero();
  for (int64_t k = 0; k < kc; ++k, Ap += MR, Bp += NR)
    for (int c = 0; c < n; ++c) {
      const vfloat b = broadcast(Bp + c);
      for (int v = 0; v < kRowVectors; ++v) acc[c][v] = fma(load(Ap + v * kLanes), b, acc[c][v]);  // reads past MR: unused lanes
    }
  alignas(64) float column[kRowVectors * kLanes];
  for (int c = 0; c < n; ++c) {
    for (int v = 0; v < kRowVectors; ++v) store(column + v * kLanes, acc[c][v]);
    for (int r = 0; r < m; ++r) C[r * ldc + c] = start.value(C[r * ldc + c], column[r], c);
  }
}

// C[m, n] at C (=|+=) one A row band (m rows) · the packed B panels from Bp on: the micro-kernel
// over MR x NR blocks, with the narrower kernels at the right and bottom edges. A last row panel of
// at most MR / 3 rows takes two B panels at once, while the first is still in L1. The band is
// packed, or read in place (A_IN, a_row and a_col as for micro_kernel); then no panel may be 4
// columns or narrower (narrow_kernel reads packed panels only), and read by columns, m % MR is
// 0, MR / 3 or 2 MR / 3 (columns_in_place), so that each kernel reads just the rows it has.
template <AIn A_IN = AIn::packed>
void multiply_band(int64_t kc, const float* Ap, const float* Bp, float* C, int64_t ldc, int64_t m, int64_t n,
                   Start start, int64_t a_row = 0, int64_t a_col = 0) {
  const bool short_last = m % MR != 0 && m % MR <= MR / 3;
  const int64_t last = m - m % MR;  // first row of a partial last panel
  for (int64_t j = 0; j < n; j += NR)
    for (int64_t i = 0; i < m; i += MR) {
      const int rows = static_cast<int>(std::min<int64_t>(MR, m - i));
      const int cols = static_cast<int>(std::min<int64_t>(NR, n - j));
      const float *a = A_IN == AIn::packed ? Ap + (i / MR) * a_panel_stride(kc) : Ap + i * a_row;
      const float* b = Bp + (j / NR) * kc * NR;
      float* c = C + i * ldc + j;
      const Start s = start.at_column(j);
      if (short_last && i == last && n - j >= NR) {
        const bool first_of_pair = (j / NR) % 2 == 0;
        if (first_of_pair && n - j >= 2 * NR)
          micro_kernel<4, MR / 3, A_IN>(kc, a, b, c, ldc, s, rows, 2 * NR, kc * NR, a_row, a_col);
        else if (first_of_pair) micro_kernel<2, MR / 3, A_IN>(kc, a, b, c, ldc, s, rows, cols, 0, a_row, a_col);
        continue;  // the second panel of a pair: done with the first
      }
      if (cols <= 4 && A_IN == AIn::packed) narrow_kernel(kc, a, b, c, ldc, s, rows, cols);
      else if (cols <= kLanes && (A_IN != AIn::columns || rows == MR))
        micro_kernel<1, MR, A_IN>(kc, a, b, c, ldc, s, rows, cols, 0, a_row, a_col);
      else if (rows <= MR / 3) micro_kernel<2, MR / 3, A_IN>(kc, a, b, c, ldc, s, rows, cols, 0, a_row, a_col);
      else if (rows <= 2 * MR / 3) micro_kernel<2, 2 * MR / 3, A_IN>(kc, a, b, c, ldc, s, rows, cols, 0, a_row, a_col);
      else micro_kernel<2, MR, A_IN>(kc, a, b, c, ldc, s, rows, cols, 0, a_row, a_col);
    }
}

// C with many rows: threads share tiles of C. B is packed once into memory, shared by all; each
// task packs its rows of A (once per row band) and runs the band's tiles against the packed B.
void gemm_tiled(int64_t M, int64_t N, MatrixView A, MatrixView B, float* C, int64_t ldc, bool accumulate,
                const float* bias, DepthBlocks blocks, Rounding round) {
  // Tiles: cache-sized, balanced, and at least two per thread where the shape allows.
  int64_t mc = even_piece(M, MC, MR), nc = even_piece(N, NC, NR);
  const int64_t threads = num_threads(), want = 2 * threads;
  auto tiles = [&](int64_t band_rows) { return ((M + band_rows - 1) / band_rows) * ((N + nc - 1) / nc); };
  while (tiles(mc) < want && (mc > 2 * MR || nc > NR)) {
    if (mc > 2 * MR) mc = even_piece(M, mc / 2, MR);
    else nc = even_piece(N, nc / 2, NR);
  }
  // A task is a whole row band where there are bands enough to share out, else a single tile: a
  // task of one tile would pack its band's A again for every tile (by_band).
  const bool by_band = (M + mc - 1) / mc >= want;
  auto units = [&](int64_t band_rows) { return by_band ? (M + band_rows - 1) / band_rows : tiles(band_rows); };
  // A few more row bands where that gives every thread the same number of units: 768 rows are 7
  // bands of 114 by size alone, which two threads share 4 : 3.
  for (int64_t bands = (M + mc - 1) / mc, extra = 1; units(mc) % threads != 0 && extra < threads; ++extra) {
    const int64_t narrower = even_piece(M, (M + bands + extra - 1) / (bands + extra), MR);
    if (narrower >= MR && units(narrower) % threads == 0) mc = narrower;
  }
  const int64_t m_tiles = (M + mc - 1) / mc, n_tiles = (N + nc - 1) / nc, n_panels = (N + NR - 1) / NR;
  // Band b's first row: the row panels dealt out evenly, so that no band is a short remainder
  // (1024 rows in bands of 108 would leave 52 for the last) and none is wider than mc.
  const int64_t row_panels = (M + MR - 1) / MR;
  auto band_start = [&](int64_t band) { return std::min(M, band * row_panels / m_tiles * MR); };
  // B is packed for as many depth blocks at once as fit kPackedBMost, so that a small product runs
  // two parallel loops in all (pack B, then the tiles, each through its whole depth) instead of two
  // per block. A larger B goes one block at a time: every row band rereads the packed blocks, and
  // all of them at once would fall out of the cache between bands.
  const int64_t kc_most = blocks.most;
  constexpr int64_t kPackedBMost = int64_t{1} << 18;  // floats: 1 MB, what stays cached between bands
  const int64_t block_floats = packed_b_size(kc_most, N);
  const int64_t blocks_together = std::clamp<int64_t>(kPackedBMost / block_floats, 1, blocks.count);
  // A row-major A one depth block deep is read in place, unpacked: each band is then whole rows,
  // contiguous streams the hardware prefetcher follows, cheaper than packing (a_in_place). Slabs
  // of deeper rows are packed, and so is a band with a narrow last panel. Where the portable bf16
  // path rounds A, such a band's rows are copied rounded into the task's scratch, rows as they
  // were: a straight copy, cheaper than packing panels.
  // A stored transposed (a dW's dYᵀ) is read in place too where columns_in_place allows: each k's
  // MR values are side by side, as in a packed panel, a row of dY apart.
  const bool by_rows = A.col_stride == 1 && blocks.count == 1 && a_unpacked_fits(N);
  const bool in_place = by_rows && !round.a, rows_rounded = by_rows && round.a;
  const bool by_columns = columns_in_place(A, M) && a_unpacked_fits(N) && !round.a;
  // Packed panels: B's shared by all tasks, A's one share per thread. Reused blocks (memory.h).
  Buffer packed_b(blocks_together * block_floats);
  const int64_t kAShare = in_place || by_columns ? 0 : packed_a_size(MC, kc_most);
  SlotScratch packed_a(kAShare);
  const int64_t groups = (n_panels + kGroup - 1) / kGroup;

  for (int64_t first = 0; first < blocks.count; first += blocks_together) {
    const int64_t last = std::min(blocks.count, first + blocks_together);
    auto packed_block = [&](int64_t block) { return packed_b.data() + (block - first) * block_floats; };
    parallel_for((last - first) * groups, grain_for(kGroup * kc_most * NR, 16384), [&](int64_t q0, int64_t q1) {
      for (int64_t q = q0; q < q1; ++q) {
        const int64_t block = first + q / groups, panel = (q % groups) * kGroup, kc = blocks.depth(block);
        const int64_t n = std::min(N, (panel + kGroup) * NR) - panel * NR;
        pack_b(B, panel * NR, n, block * kc_most, kc, packed_block(block) + panel * kc * NR, round.b);
      }
    });
    const int64_t unit_tiles = by_band ? n_tiles : 1;
    parallel_for_slots(m_tiles * n_tiles / unit_tiles, 1, [&](int slot, int64_t q0, int64_t q1) { fused([&] {
      float* Ap = packed_a[slot];
      const int64_t t0 = q0 * unit_tiles, t1 = q1 * unit_tiles;
      for (int64_t t = t0; t < t1;) {  // the tiles of one row band share each block's packed A
        const int64_t band = t / n_tiles, band_end = std::min(t1, (band + 1) * n_tiles);
        const int64_t i0 = band_start(band), m = band_start(band + 1) - i0;
        for (int64_t block = first; block < last; ++block) {
          const int64_t kc = blocks.depth(block);
          const float* a_block = A.data + i0 * A.row_stride + block * kc_most * A.col_stride;
          if (rows_rounded)  // one block deep: kc is K
            for (int64_t r = 0; r < m; ++r) round_bf16(a_block + r * A.row_stride, kc, Ap + r * kc);
          else if (!in_place && !by_columns) pack_a(A, i0, m, block * kc_most, kc, Ap, round.a);
          for (int64_t u = t; u < band_end; ++u) {
            const int64_t j0 = (u % n_tiles) * nc, n = std::min(nc, N - j0);
            const Start start = Start{accumulate || block > 0, round.c && blocks.last(block), bias}.at_column(j0);
            const float* b = packed_block(block) + (j0 / NR) * kc * NR;
            float* c = C + i0 * ldc + j0;
            if (in_place) multiply_band<AIn::rows>(kc, a_block, b, c, ldc, m, n, start, A.row_stride);
            else if (rows_rounded) multiply_band<AIn::rows>(kc, Ap, b, c, ldc, m, n, start, kc);
            else if (by_columns) multiply_band<AIn::columns>(kc, a_block, b, c, ldc, m, n, start, 1, A.col_stride);
            else multiply_band(kc, Ap, b, c, ldc, m, n, start);
          }
        }
        t = band_end;
      }
    }); });
  }
}

// Most rows of a short C (a dW whose rows are a few output features): A packed whole for a depth
// block (at most 192 x 512 floats) stays in L2.
constexpr int64_t kShortMost = 32 * MR;

// C with few rows: threads split the columns; each task packs all of A for a depth block, then
// packs B a few panels at a time just before using them. Against the tiled path: no second
// parallel loop, B's panels go to L2 instead of out to memory and back (a dW's B is its input X),
// and two threads get equal work where row bands of a short C would not (gemm_short).
void gemm_short(int64_t M, int64_t N, MatrixView A, MatrixView B, float* C, int64_t ldc, bool accumulate,
                const float* bias, DepthBlocks blocks, Rounding round) {
  const int64_t n_panels = (N + NR - 1) / NR;
  const int64_t slices = std::min<int64_t>(n_panels, num_threads()), slice_panels = (n_panels + slices - 1) / slices;
  // A stored transposed (a dW's dYᵀ) is read in place where columns_in_place allows.
  const bool by_columns = columns_in_place(A, M) && a_unpacked_fits(N) && !round.a;
  const int64_t a_share = by_columns ? 0 : packed_a_size(M, blocks.most);
  const int64_t b_share = packed_b_size(blocks.most, kGroup * NR);
  SlotScratch packed(a_share + b_share);
  parallel_for_slots(slices, 1, [&](int slot, int64_t s0, int64_t s1) { fused([&] {
    float* Ap = packed[slot];
    float* Bp = Ap + a_share;
    const int64_t j_begin = s0 * slice_panels * NR, j_end = std::min(N, s1 * slice_panels * NR);
    for (int64_t block = 0; block < blocks.count; ++block) {
      const int64_t kc = blocks.depth(block), p0 = block * blocks.most;
      if (!by_columns) pack_a(A, 0, M, p0, kc, Ap, round.a);
      for (int64_t j0 = j_begin; j0 < j_end; j0 += kGroup * NR) {
        const int64_t n = std::min(kGroup * NR, j_end - j0);
        pack_b(B, j0, n, p0, kc, Bp, round.b);
        const Start start = Start{accumulate || block > 0, round.c && blocks.last(block), bias}.at_column(j0);
        if (by_columns)
          multiply_band<AIn::columns>(kc, A.data + p0 * A.col_stride, Bp, C + j0, ldc, M, n, start, 1, A.col_stride);
        else multiply_band(kc, Ap, Bp, C + j0, ldc, M, n, start);
      }
    }
  }); });
}

}  // namespace

namespace {

void gemm_float(int64_t M, int64_t N, int64_t K, MatrixView A, MatrixView B, float* C, int64_t ldc, bool accumulate,
                const float* bias, bool bf16, StoreC store) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {  // C = bias or 0, or as it was
    if (accumulate && store == StoreC::as_is) return;
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        const float v = accumulate ? C[i * ldc + j] : bias ? bias[j] : 0.0f;
        C[i * ldc + j] = store == StoreC::rounded ? round_to_bf16(v) : v;
      }
    return;
  }
  const DepthBlocks blocks(K);
  const Rounding round{bf16 && !A.bf16_exact, bf16 && !B.bf16_exact, store == StoreC::rounded};
  if (M <= kShortMost && (N + NR - 1) / NR >= num_threads()) gemm_short(M, N, A, B, C, ldc, accumulate, bias, blocks, round);
  else gemm_tiled(M, N, A, B, C, ldc, accumulate, bias, blocks, round);
}

}  // namespace

void gemm(int64_t M, int64_t N, int64_t K, MatrixView A, MatrixView B, float* C, int64_t ldc, bool accumulate,
          const float* bias, Precision precision, RowSums sums, StoreC store) {
  if (precision == Precision::bf16 && bf16_native()) {
    if (store == StoreC::rounded) throw std::logic_error("gemm: the native bf16 kernels store C as it is");
    return gemm_bf16_native(M, N, K, A, B, C, ldc, accumulate, bias, sums);
  }
  gemm_float(M, N, K, A, B, C, ldc, accumulate, bias, precision == Precision::bf16, store);
  row_sums(M, K, A, sums);
}

void gemm_bf16_portable(int64_t M, int64_t N, int64_t K, MatrixView A, MatrixView B, float* C, int64_t ldc,
                        bool accumulate, const float* bias) {
  gemm_float(M, N, K, A, B, C, ldc, accumulate, bias, true, StoreC::as_is);
}

}  // namespace tinygpt
