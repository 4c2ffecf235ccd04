// A's row sums beside a product (RowSums, gemm.h): a Linear's bias gradient, the column sums of dY.
// The order is fixed by K alone: k in chunks of row_sum_chunk(K), each chunk summed from 0 in k
// order, the chunks' sums then added in order from 0. Threads take whole chunks of dY's rows, so
// each reads long contiguous stretches, and the bits are the same for any thread count.
#include <algorithm>

#include "gemm.h"
#include "simd.h"
#include "parallel.h"
#include "../tensor.h"

namespace tinygpt {

namespace {

using namespace simd;

constexpr int64_t kChunksMost = 16;      // chunks' partial sums: 16 rows of sums, whatever K
constexpr int64_t kChunkLeast = 32;      // k per chunk at least: a short K stays one task, summed in order
constexpr int64_t kColumnBlock = 2048;   // columns a task sums at once: 8 KB of partial sums, in L1

int64_t round_up(int64_t n, int64_t unit) { return (n + unit - 1) / unit * unit; }

// One row's n values from src added to the sums at acc and, with ROUND, rounded into dst (four
// vectors at a time, round_bf16_x4), each value loaded once. (Rounding alone: simd::round_bf16.)
template <bool ROUND>
void row_pass(const float* src, int64_t n, float* dst, float* acc) {
  by_blocks_of_4(
      n,
      [src, dst, acc](int64_t j) {
        vfloat v[4];
        for (int k = 0; k < 4; ++k) {
          v[k] = load(src + j + k * kLanes);
          store(acc + j + k * kLanes, add(load(acc + j + k * kLanes), v[k]));
        }
        if constexpr (ROUND) {
          round_bf16_x4(v);
          for (int k = 0; k < 4; ++k) store(dst + j + k * kLanes, v[k]);
        }
      },
      [src, dst, acc](int64_t j, int lanes) {
        const vfloat v = load_n(src + j, lanes);
        if constexpr (ROUND) store_n(dst + j, round_bf16(v), lanes);
        store(acc + j, add(load(acc + j), v));  // acc: whole vectors
      });
}

}  // namespace

int64_t row_sum_chunk(int64_t K) {
  return std::max(kChunkLeast, round_up((K + kChunksMost - 1) / kChunksMost, 8));
}

void column_sums(const float* dy, int64_t rows, int64_t cols, RowSums sums, float* rounded) {
  if (!sums.out && !rounded) return;
  const int64_t chunk = row_sum_chunk(rows), chunks = (rows + chunk - 1) / chunk;
  const int64_t padded = round_up(cols, kLanes), blocks = (cols + kColumnBlock - 1) / kColumnBlock;
  Buffer partial(sums.out ? chunks * padded : 0);  // [chunks, padded]: each chunk's column sums
  parallel_for(chunks * blocks, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t c = t / blocks, j0 = (t % blocks) * kColumnBlock, n = std::min(kColumnBlock, cols - j0);
      float* acc = sums.out ? partial.data() + c * padded + j0 : nullptr;
      if (acc) std::fill(acc, acc + round_up(n, kLanes), 0.0f);
      for (int64_t r = c * chunk; r < std::min(rows, (c + 1) * chunk); ++r) {
        const float* src = dy + r * cols + j0;
        float* dst = rounded ? rounded + r * cols + j0 : nullptr;
        if (!acc) round_bf16(src, n, dst);
        else if (dst) row_pass<true>(src, n, dst, acc);
        else row_pass<false>(src, n, dst, acc);
      }
    }
  });
  if (!sums.out) return;
  parallel_for(cols, kColumnBlock, [&](int64_t j0, int64_t j1) {
    for (int64_t j = j0; j < j1; ++j) {
      float total = 0.0f;
      for (int64_t c = 0; c < chunks; ++c) total += partial[c * padded + j];
      sums.out[j] = sums.accumulate ? sums.out[j] + total : total;
    }
  });
}

void row_sums(int64_t M, int64_t K, MatrixView A, RowSums sums) {
  if (!sums.out) return;
  if (A.row_stride == 1 && A.col_stride == M) return column_sums(A.data, K, M, sums);  // dYᵀ
  const int64_t chunk = row_sum_chunk(K);
  parallel_for(M, grain_for(K), [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      float total = 0.0f;
      for (int64_t k0 = 0; k0 < K; k0 += chunk) {
        float partial = 0.0f;
        for (int64_t k = k0; k < std::min(K, k0 + chunk); ++k) partial += A.data[i * A.row_stride + k * A.col_stride];
        total += partial;
      }
      sums.out[i] = sums.accumulate ? sums.out[i] + total : total;
    }
  });
}

}  // namespace tinygpt
