#pragma once
// Row-wise ops (softmax, LayerNorm, cross-entropy) treat a tensor as [rows, cols] over its last axis.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "tinygpt/autograd/parallel.h"

namespace tinygpt {

// row(r) for every r in [0, rows), split over threads; each row is one task's, whole.
template <class RowFn>
void for_rows(int64_t rows, int64_t cols, const RowFn& row) {
  parallel_for(rows, grain_for(4 * cols), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) row(r);
  });
}

// Row reductions at vector speed with fixed bits (sum_in_lanes, parallel.h).
inline float row_sum(const float* x, int64_t n) {
  return sum_in_lanes<float>(0, n, [x](int64_t j) { return x[j]; });
}

inline float row_dot(const float* x, const float* y, int64_t n) {
  return sum_in_lanes<float>(0, n, [x, y](int64_t j) { return x[j] * y[j]; });
}

// The maximum in 8 lanes too (a max reduction does not vectorize without -ffinite-math-only).
inline float row_max(const float* x, int64_t n) {
  float lanes[8];
  std::fill(lanes, lanes + 8, -INFINITY);
  int64_t j = 0;
  for (; j + 8 <= n; j += 8)
    for (int l = 0; l < 8; ++l) lanes[l] = lanes[l] > x[j + l] ? lanes[l] : x[j + l];
  float m = -INFINITY;
  for (; j < n; ++j) m = m > x[j] ? m : x[j];
  for (float lane : lanes) m = m > lane ? m : lane;
  return m;
}

// A row's maximum m and log(sum_j exp(x_j - m)): log-softmax is then (x_j - m) - log_sum, which
// keeps full precision even for logits like -1e4 (x - logsumexp(x) would lose it to rounding).
struct RowLogSumExp {
  float max;
  float log_sum;
};
inline RowLogSumExp row_log_sum_exp(const float* x, int64_t n) {
  const float m = row_max(x, n);
  float s = 0.0f;
  for (int64_t j = 0; j < n; ++j) s += std::exp(x[j] - m);
  return {m, std::log(s)};
}

}  // namespace tinygpt
