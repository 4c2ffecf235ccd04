#pragma once
// Row-wise ops (softmax, LayerNorm, cross-entropy) treat a tensor as [rows, cols] over its last axis.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "../elementary.h"
#include "parallel.h"
#include "simd.h"

namespace tinygpt {

// row(r) for every r in [0, rows), split over threads; each row is one task's, whole. The rows run
// inside simd::fused: their elementary functions' fmas are instructions in every build.
template <class RowFn>
void for_rows(int64_t rows, int64_t cols, const RowFn& row) {
  parallel_for(rows, grain_for(4 * cols), [&](int64_t r0, int64_t r1) {
    simd::fused([&] {
      for (int64_t r = r0; r < r1; ++r) row(r);
    });
  });
}

// Row reductions at vector speed with fixed bits (sum_in_lanes, parallel.h).
inline float row_sum(const float* x, int64_t n) {
  return sum_in_lanes<float>(0, n, [x](int64_t j) { return x[j]; });
}

inline float row_dot(const float* x, const float* y, int64_t n) {
  return sum_in_lanes<float>(0, n, [x, y](int64_t j) { return x[j] * y[j]; });
}

// Eight float lanes (GCC's vector extension, any ISA); at<V>(p) reads one float or eight from p.
using Lanes8 = float __attribute__((vector_size(32)));
template <class V>
V at(const float* p) {
  if constexpr (std::is_same_v<V, float>) {
    return *p;
  } else {
    V v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
}

// G rows' sums at once, each in the 8 lanes of sum_in_lanes (term j to lane j mod 8, the tail and
// then the lanes added in order): out[g] = sum over j < n of term(g, j, float{}). term(g, j,
// Lanes8{}) gives terms j .. j+7 as one vector; G independent chains of vector adds keep the adder
// busy on short rows (LayerNorm's), where a plain loop waits on one chain's latency.
template <int G, class Term>
void row_sums(int64_t n, const Term& term, float* out) {
  Lanes8 lanes[G] = {};
  int64_t j = 0;
  for (; j + 8 <= n; j += 8)
    for (int g = 0; g < G; ++g) lanes[g] += term(g, j, Lanes8{});
  for (int g = 0; g < G; ++g) {
    float s = 0.0f;
    for (int64_t k = j; k < n; ++k) s += term(g, k, 0.0f);
    for (int l = 0; l < 8; ++l) s += lanes[g][l];
    out[g] = s;
  }
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
// The exps and the log are elementary.h's, the exps summed in lanes: a loss over GPT-2's 50257
// classes spends its time here.
struct RowLogSumExp {
  float max;
  float log_sum;
};
inline RowLogSumExp row_log_sum_exp(const float* x, int64_t n) {
  const float m = row_max(x, n);
  return {m, vector_log(sum_in_lanes<float>(0, n, [x, m](int64_t j) { return vector_exp(x[j] - m); }))};
}

}  // namespace tinygpt
