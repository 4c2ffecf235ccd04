// matvec (inference.h): y = W x + b, the matrix-vector product of decoding one position at a time,
// over float weights or over int8 weights with a float scale per group.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>

#include "../inference.h"
#include "simd.h"
#include "parallel.h"

namespace tinygpt {

namespace {

// How far ahead of its reads the product asks for its weights: 16 rows (2 to 4 blocks of dot_rows).
// The int8 loop works longer on each byte than the fp32 one: the hardware prefetchers alone fall behind.
constexpr int64_t kPrefetchRows = 16;

// A row's dot product runs in 16 lanes whatever the vector width (one AVX-512 vector, two AVX2
// ones): term j goes to lane j mod 16, so every build sums the same terms in the same order.
constexpr int kDotLanes = 16;

// Rows of float weights: row r of a block, from column i.
struct FloatRows {
  const float* w;
  int64_t in;
  template <int R>
  void column(int64_t i) {
    for (int r = 0; r < R; ++r)
      for (int64_t line = 0; line < kDotLanes; line += 16) __builtin_prefetch(w + (r + kPrefetchRows) * in + i + line);
  }
  simd::vfloat load(int r, int64_t i) const { return simd::load(w + r * in + i); }
  float at(int r, int64_t j) const { return w[r * in + j]; }
  FloatRows from_row(int64_t o) const { return {w + o * in, in}; }
};

// Rows of int8 weights, each weight float(q) * scale as dequantize_int8 writes it. column(i) comes
// before the loads at column i, and takes the scales of its R (up to 8) rows when i starts a group (a group
// spans whole steps of dot_rows: the smallest, 32, is two).
struct Int8Rows {
  const int8_t* q;
  const float* scales;
  int64_t in, groups;
  int shift;  // log2 of the group size
  simd::vfloat scale[8] = {};
  template <int R>
  void column(int64_t i) {
    for (int r = 0; r < R; ++r) __builtin_prefetch(q + (r + kPrefetchRows) * in + i);
    if ((i & ((int64_t{1} << shift) - 1)) == 0)
      for (int r = 0; r < R; ++r) scale[r] = simd::broadcast(scales + r * groups + (i >> shift));
  }
  simd::vfloat load(int r, int64_t i) const { return simd::mul(simd::load_int8(q + r * in + i), scale[r]); }
  float at(int r, int64_t j) const { return float(q[r * in + j]) * scales[r * groups + (j >> shift)]; }
  Int8Rows from_row(int64_t o) const { return {q + o * in, scales + o * groups, in, groups, shift}; }
};

// The 16 lanes' sum as a fixed tree, the same for every vector width: lanes j and j + 8, then
// j and j + 4, j and j + 2, and the last two (depth 4, where a chain of adds would wait 16 times).
// The AVX2 build keeps it in registers (a row's sum is on the path of every row of a matvec).
inline float lane_sum(const simd::vfloat (&acc)[kDotLanes / simd::kLanes]) {
#if defined(__AVX2__) && !defined(__AVX512F__)
  const __m256 s8 = _mm256_add_ps(acc[0], acc[1]);                                           // j and j + 8
  const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));  // j and j + 4
  const __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));                                 // j and j + 2
  return _mm_cvtss_f32(_mm_add_ss(s2, _mm_movehdup_ps(s2)));                              // 0 and 1
#else
  float l[kDotLanes];
  for (int v = 0; v < kDotLanes / simd::kLanes; ++v) simd::store(l + v * simd::kLanes, acc[v]);
  for (int half = kDotLanes / 2; half >= 1; half /= 2)
    for (int j = 0; j < half; ++j) l[j] += l[j + half];
  return l[0];
#endif
}

// R rows of y = W x, the rows sharing each load of x. Row r: one fma chain per lane over the whole
// steps of kDotLanes columns, the lanes then added by lane_sum, and the columns past the last whole
// step fused on in order. The same bits whatever R (the split of rows over threads), the weights'
// storage or the vector width.
template <int R, class Rows>
void dot_rows(Rows w, const float* x, int64_t in, float* out) {
  using namespace simd;
  constexpr int V = kDotLanes / kLanes;
  vfloat acc[R][V];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) acc[r][v] = zero();
  int64_t i = 0;
  for (; i + kDotLanes <= in; i += kDotLanes) {
    vfloat xs[V];
    for (int v = 0; v < V; ++v) xs[v] = load(x + i + v * kLanes);
    w.template column<R>(i);
    for (int r = 0; r < R; ++r)
      for (int v = 0; v < V; ++v) acc[r][v] = fma(w.load(r, i + v * kLanes), xs[v], acc[r][v]);
  }
  for (int r = 0; r < R; ++r) {
    float s = lane_sum(acc[r]);
    for (int64_t j = i; j < in; ++j) s = std::fma(w.at(r, j), x[j], s);
    out[r] = s;
  }
}

template <class Rows>
void matvec_rows(const Rows& w, const float* b, const float* x, float* y, int64_t out, int64_t in) {
  // Rows a block: eight independent fma chains (two FMA units of four cycles' latency), their
  // accumulators and x within the 16 or 32 vector registers.
  constexpr int kRows = simd::kLanes >= 16 ? 8 : 4;
  parallel_for((out + kRows - 1) / kRows, grain_for(kRows * in), [&](int64_t g0, int64_t g1) {
    simd::fused([&] {
      for (int64_t o = g0 * kRows; o < std::min(out, g1 * kRows); o += kRows) {
        if (o + kRows <= out) dot_rows<kRows>(w.from_row(o), x, in, y + o);
        else
          for (int64_t r = o; r < out; ++r) dot_rows<1>(w.from_row(r), x, in, y + r);
      }
    });
  });
  if (b)
    for (int64_t o = 0; o < out; ++o) y[o] += b[o];
}

}  // namespace

void matvec(const float* w, const float* b, const float* x, float* y, int64_t out, int64_t in) {
  matvec_rows(FloatRows{w, in}, b, x, y, out, in);
}

bool valid_int8_group(int64_t group) { return group >= 32 && group <= 4096 && (group & (group - 1)) == 0; }

Int8Matrix quantize_int8(const float* w, int64_t out, int64_t in, int64_t group) {
  if (!valid_int8_group(group))
    throw std::invalid_argument(fmt::format("int8 weights: group size {} is not a power of two from 32 to 4096", group));
  Int8Matrix m{.out = out, .in = in, .group = group};
  m.q.resize(static_cast<size_t>(out * in));
  m.scales.resize(static_cast<size_t>(out * m.groups_per_row()));
  parallel_for(out, grain_for(in), [&](int64_t o0, int64_t o1) {
    for (int64_t o = o0; o < o1; ++o)
      for (int64_t g = 0; g < m.groups_per_row(); ++g) {
        const float* v = w + o * in + g * group;
        const int64_t n = std::min(group, in - g * group);
        float largest = 0;
        bool finite = true;
        for (int64_t j = 0; j < n; ++j) largest = std::max(largest, std::fabs(v[j])), finite &= std::isfinite(v[j]);
        if (!finite)
          throw std::invalid_argument(fmt::format("int8 weights: row {} of a [{}, {}] matrix holds a value that is not finite",
                                                  o, out, in));
        const float scale = largest / 127.0f;
        m.scales[o * m.groups_per_row() + g] = scale;
        int8_t* q = m.q.data() + o * in + g * group;
        for (int64_t j = 0; j < n; ++j)
          q[j] = scale == 0 ? 0 : static_cast<int8_t>(std::clamp(std::nearbyint(v[j] / scale), -127.0f, 127.0f));
      }
  });
  return m;
}

void dequantize_int8(const Int8Matrix& m, float* out) {
  const int shift = std::countr_zero(static_cast<uint64_t>(m.group));
  for (int64_t o = 0; o < m.out; ++o)
    for (int64_t j = 0; j < m.in; ++j)
      out[o * m.in + j] = float(m.q[o * m.in + j]) * m.scales[o * m.groups_per_row() + (j >> shift)];
}

void matvec_int8(const Int8Matrix& m, const float* b, const float* x, float* y) {
  const int shift = std::countr_zero(static_cast<uint64_t>(m.group));
  matvec_rows(Int8Rows{m.q.data(), m.scales.data(), m.in, m.groups_per_row(), shift}, b, x, y, m.out, m.in);
}

}  // namespace tinygpt
