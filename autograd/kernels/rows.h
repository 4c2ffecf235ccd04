#pragma once
// Row-wise ops (softmax, LayerNorm, cross-entropy) treat a tensor as [rows, cols] over its last axis.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "autograd/parallel.h"

namespace tinygpt {

// row(r) for every r in [0, rows), split over threads; each row is one task's, whole.
template <class RowFn>
void for_rows(int64_t rows, int64_t cols, const RowFn& row) {
  parallel_for(rows, grain_for(4 * cols), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) row(r);
  });
}

// Reductions over a row in 8 running lanes (element j goes to lane j mod 8, lanes combined in
// order): the same bits on every run and thread count, at vector speed rather than one add latency
// per element (a plain float loop cannot be reordered without -ffast-math).
inline float row_sum(const float* x, int64_t n) {
  float lanes[8] = {};
  int64_t j = 0;
  for (; j + 8 <= n; j += 8)
    for (int l = 0; l < 8; ++l) lanes[l] += x[j + l];
  float s = 0.0f;
  for (; j < n; ++j) s += x[j];
  for (float lane : lanes) s += lane;
  return s;
}

inline float row_dot(const float* x, const float* y, int64_t n) {
  float lanes[8] = {};
  int64_t j = 0;
  for (; j + 8 <= n; j += 8)
    for (int l = 0; l < 8; ++l) lanes[l] += x[j + l] * y[j + l];
  float s = 0.0f;
  for (; j < n; ++j) s += x[j] * y[j];
  for (float lane : lanes) s += lane;
  return s;
}

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
  const float m = *std::max_element(x, x + n);
  float s = 0.0f;
  for (int64_t j = 0; j < n; ++j) s += std::exp(x[j] - m);
  return {m, std::log(s)};
}

}  // namespace tinygpt
