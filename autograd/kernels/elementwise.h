#pragma once
// Raw kernels shared by the elementwise and reduction ops: broadcast binary maps and axis sums.
#include <cmath>
#include <cstdint>
#include <vector>

#include "strided.h"
#include "../shape.h"
#include "../elementary.h"

namespace tinygpt {

// 1 / (1 + exp(-v)), with an exp of a non-positive number only: no overflow for large |v|.
inline float stable_sigmoid(float v) {
  const float e = full_range_exp(-std::abs(v));
  return v >= 0.0f ? 1.0f / (1.0f + e) : e / (1.0f + e);
}

// Merges neighbouring axes that every stride set walks as one (so contiguous work becomes 1-d).
void coalesce(Shape& shape, memory::Vector<Strides*> stride_sets);

// out[row-major over shape] = f(a[...], b[...]) where a and b are read through (broadcast) strides.
template <class F>
void binary_map(Shape shape, const float* a, Strides sa, const float* b, Strides sb, float* out, const F& f) {
  Strides so = contiguous_strides(shape);
  coalesce(shape, {&sa, &sb, &so});
  const int64_t cols = shape.empty() ? 1 : shape.back();
  const int64_t ca = shape.empty() ? 0 : sa.back(), cb = shape.empty() ? 0 : sb.back();
  for_each_row(shape, so, [&](int64_t r, int64_t, int64_t c0, int64_t c1) {
    int64_t oa = 0, ob = 0, rest = r;
    for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d) {
      oa += (rest % shape[d]) * sa[d];
      ob += (rest % shape[d]) * sb[d];
      rest /= shape[d];
    }
    const float* pa = a + oa;
    const float* pb = b + ob;
    float* po = out + r * cols;
    if (ca == 1 && cb == 1)  // the common cases get loops the compiler vectorizes
      for (int64_t c = c0; c < c1; ++c) po[c] = f(pa[c], pb[c]);
    else if (ca == 1 && cb == 0)
      for (int64_t c = c0; c < c1; ++c) po[c] = f(pa[c], pb[0]);
    else if (ca == 0 && cb == 1)
      for (int64_t c = c0; c < c1; ++c) po[c] = f(pa[0], pb[c]);
    else
      for (int64_t c = c0; c < c1; ++c) po[c] = f(pa[c * ca], pb[c * cb]);
  });
}

// out (shape `to`) = or += sum of x (contiguous, shape `from`) over the axes where `to` is 1 or
// missing. `to` must broadcast to `from`. The order of every sum is fixed: same bits on any threads.
void sum_to(const float* x, const Shape& from, float* out, const Shape& to, bool accumulate);

}  // namespace tinygpt
