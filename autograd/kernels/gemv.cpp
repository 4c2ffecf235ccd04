// matvec (inference.h): y = W x + b, the matrix-vector product of decoding one position at a time.
#include <algorithm>

#include "tinygpt/autograd/inference.h"
#include "tinygpt/autograd/kernels/simd.h"
#include "tinygpt/autograd/kernels/parallel.h"

namespace tinygpt {

namespace {

// R rows of y = W x: the rows share each load of x, and each row keeps two accumulators so that
// the FMAs overlap. Every row is summed in the same order whatever R is (the bits of a row do not
// depend on how rows are split over threads).
template <int R>
void dot_rows(const float* w, const float* x, int64_t in, float* out) {
  using namespace simd;
  vfloat acc[R][2];
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = zero();
  int64_t i = 0;
  for (; i + 2 * kLanes <= in; i += 2 * kLanes) {
    const vfloat x0 = load(x + i), x1 = load(x + i + kLanes);
    for (int r = 0; r < R; ++r) {
      acc[r][0] = fma(load(w + r * in + i), x0, acc[r][0]);
      acc[r][1] = fma(load(w + r * in + i + kLanes), x1, acc[r][1]);
    }
  }
  if (i + kLanes <= in) {
    const vfloat x0 = load(x + i);
    for (int r = 0; r < R; ++r) acc[r][0] = fma(load(w + r * in + i), x0, acc[r][0]);
    i += kLanes;
  }
  for (int r = 0; r < R; ++r) {
    float lanes[kLanes];
    store(lanes, add(acc[r][0], acc[r][1]));
    float s = 0.0f;
    for (float lane : lanes) s += lane;
    for (int64_t j = i; j < in; ++j) s += w[r * in + j] * x[j];
    out[r] = s;
  }
}

}  // namespace

void matvec(const float* w, const float* b, const float* x, float* y, int64_t out, int64_t in) {
  constexpr int kRows = 4;
  parallel_for((out + kRows - 1) / kRows, grain_for(kRows * in), [&](int64_t g0, int64_t g1) {
    for (int64_t o = g0 * kRows; o < std::min(out, g1 * kRows); o += kRows) {
      if (o + kRows <= out) dot_rows<kRows>(w + o * in, x, in, y + o);
      else
        for (int64_t r = o; r < out; ++r) dot_rows<1>(w + r * in, x, in, y + r);
    }
  });
  if (b)
    for (int64_t o = 0; o < out; ++o) y[o] += b[o];
}

}  // namespace tinygpt
