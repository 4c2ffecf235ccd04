// bf16 mixed-precision GEMM on AVX512_BF16: vdpbf16ps multiplies 16 pairs of bfloat16 values and
// adds each pair's two products to a float accumulator, twice the multiply-adds of vfmadd231ps.
//   for each depth block (at most KC deep):
//     pack B straight into bfloat16 pairs along k: Bp[k / 2][c] = {B(k, c), B(k + 1, c)}
//     for each row band of C, in parallel: pack its A in float (pack.h), then into pairs the same
//       way, Ap[k / 2][r] = {A(r, k), A(r, k + 1)}
//       for each B panel (L1), for each A panel (L2): an MR x NR block of C in 24 registers,
//       one vdpbf16ps per register and pair of k.
// Rounding is vcvtneps2bf16's (round to nearest even); an odd depth pairs its last k with 0. B's
// one pass matters where it is a large weight used by few rows (GPT-2's 256 tokens a step); A goes
// through float packing first: straight into pairs measured no faster.
#include "tinygpt/autograd/kernels/gemm.h"

#include <algorithm>

#include "tinygpt/autograd/kernels/bf16_pairs.h"
#include "tinygpt/autograd/kernels/blocking.h"
#include "tinygpt/autograd/kernels/pack.h"
#include "tinygpt/autograd/parallel.h"
#include "tinygpt/autograd/tensor.h"

namespace tinygpt {

#ifdef TINYGPT_BF16_KERNELS

namespace {

using namespace bf16;

constexpr int64_t kBandRows = 20 * MR;  // most rows of a band: its packed A (kBandRows x KC bfloat16) stays in L2

// One row band (m rows, packed) against every packed B panel: C[m, N] (=|+=) Ap · Bp.
void pair_band(int64_t kp, const uint32_t* Ap, const uint32_t* Bp, float* C, int64_t ldc, int64_t m, int64_t N,
                   Start start) {
  for (int64_t j = 0; j < N; j += NR)
    for (int64_t i = 0; i < m; i += MR) {
      const int rows = static_cast<int>(std::min<int64_t>(MR, m - i)), cols = static_cast<int>(std::min<int64_t>(NR, N - j));
      const uint32_t *a = Ap + (i / MR) * kp * MR, *b = Bp + (j / NR) * kp * NR;
      if (cols <= 16) pair_tile<1>(kp, a, b, C + i * ldc + j, ldc, start.at_column(j), rows, cols);
      else pair_tile<2>(kp, a, b, C + i * ldc + j, ldc, start.at_column(j), rows, cols);
    }
}

}  // namespace

bool bf16_native() {
  static const bool available = __builtin_cpu_supports("avx512bf16");
  return available;
}

void gemm_bf16_native(int64_t M, int64_t N, int64_t K, MatrixView A, MatrixView B, float* C, int64_t ldc,
                      bool accumulate, const float* bias) {
  if (M <= 0 || N <= 0 || K <= 0) return gemm(M, N, K, A, B, C, ldc, accumulate, bias);  // nothing to multiply
  const DepthBlocks blocks(K);
  const int64_t kp_most = k_pairs(blocks.most), n_panels = (N + NR - 1) / NR;
  // Row bands: at most kBandRows rows, as many as make equal shares for the threads where M allows.
  const int64_t threads = num_threads();
  int64_t bands = (M + kBandRows - 1) / kBandRows;
  if (bands % threads != 0 && (bands + threads - 1) / threads * threads * MR <= M)
    bands = (bands + threads - 1) / threads * threads;
  const int64_t row_panels = (M + MR - 1) / MR;
  auto band_start = [&](int64_t band) { return std::min(M, band * row_panels / bands * MR); };
  const int64_t most_rows = (row_panels + bands - 1) / bands * MR;

  // Per thread: a float panel (packing's output), and its band's bfloat16 panels. Shared: B's.
  const int64_t float_share = std::max(packed_a_size(most_rows, blocks.most), packed_b_size(blocks.most, NR));
  const int64_t a_pairs = (most_rows + MR - 1) / MR * kp_most * MR;
  const int64_t share = float_share + a_pairs;  // floats and uint32 are both 4 bytes
  Buffer scratch(max_slots() * share);
  Buffer packed_b(n_panels * kp_most * NR);
  uint32_t* Bp = reinterpret_cast<uint32_t*>(packed_b.data());

  for (int64_t block = 0; block < blocks.count; ++block) {
    const int64_t kc = blocks.depth(block), kp = k_pairs(kc), p0 = block * blocks.most;
    parallel_for(n_panels, grain_for(kc * NR, 16384), [&](int64_t q0, int64_t q1) {
      for (int64_t q = q0; q < q1; ++q) pack_b_pairs(B, q * NR, std::min<int64_t>(NR, N - q * NR), p0, kc, Bp + q * kp * NR);
    });
    parallel_for_slots(bands, 1, [&](int slot, int64_t b0, int64_t b1) {
      float* panel = scratch.data() + slot * share;
      uint32_t* Ap = reinterpret_cast<uint32_t*>(panel + float_share);
      for (int64_t band = b0; band < b1; ++band) {
        const int64_t i0 = band_start(band), m = band_start(band + 1) - i0;
        pack_a(A, i0, m, p0, kc, panel);
        for (int64_t p = 0; p < (m + MR - 1) / MR; ++p) panel_to_pairs(panel + p * a_panel_stride(kc), kc, MR, Ap + p * kp * MR);
        pair_band(kp, Ap, Bp, C + i0 * ldc, ldc, m, N, Start{accumulate || block > 0, bias});
      }
    });
  }
}

#else  // no AVX-512 build: the portable path serves every bf16 product

bool bf16_native() { return false; }

void gemm_bf16_native(int64_t M, int64_t N, int64_t K, MatrixView A, MatrixView B, float* C, int64_t ldc,
                      bool accumulate, const float* bias) {
  gemm_bf16_portable(M, N, K, A, B, C, ldc, accumulate, bias);
}

#endif

}  // namespace tinygpt
