#pragma once
// Walking an N-d strided view row by row (all axes but the last, then a strided inner loop).
#include <algorithm>
#include <cstdint>

#include "parallel.h"
#include "../shape.h"

namespace tinygpt {

// Elements of a simple loop (a copy, an add) that make one task's worth of work.
constexpr int64_t kElementsPerTask = 16384;

// Calls row(r, offset, c0, c1) for every row r (row-major over shape[0..n-2]) with the storage
// offset of element [.., 0] in a view of `strides`, for a piece [c0, c1) of its columns. Rows and
// pieces of long rows are split over threads: a contiguous tensor that binary_map coalesces into
// one row of a million floats still runs on every thread.
template <class RowFn>
void for_each_row(const Shape& shape, const Strides& strides, const RowFn& row) {
  const int64_t ndim = static_cast<int64_t>(shape.size());
  const int64_t cols = ndim ? shape.back() : 1;
  const int64_t rows = cols ? numel(shape) / cols : 0;
  const int64_t pieces = std::max<int64_t>(1, (cols + kElementsPerTask - 1) / kElementsPerTask);
  const int64_t width = (cols + pieces - 1) / pieces;
  parallel_for(rows * pieces, grain_for(width), [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t r = t / pieces, c0 = (t % pieces) * width;
      int64_t offset = 0, rest = r;
      for (int64_t d = ndim - 2; d >= 0; --d) {
        offset += (rest % shape[d]) * strides[d];
        rest /= shape[d];
      }
      row(r, offset, c0, std::min(cols, c0 + width));
    }
  });
}

// dst[row-major] = src viewed through (shape, strides).
inline void strided_copy(const float* src, const Shape& shape, const Strides& strides, float* dst) {
  const int64_t cols = shape.empty() ? 1 : shape.back();
  const int64_t step = shape.empty() ? 0 : strides.back();
  for_each_row(shape, strides, [&](int64_t r, int64_t offset, int64_t c0, int64_t c1) {
    const float* s = src + offset;
    float* d = dst + r * cols;
    if (step == 1)
      for (int64_t c = c0; c < c1; ++c) d[c] = s[c];
    else
      for (int64_t c = c0; c < c1; ++c) d[c] = s[c * step];
  });
}

// dst viewed through (shape, strides) += src[row-major]. The view must not alias itself.
inline void strided_add(const float* src, const Shape& shape, const Strides& strides, float* dst) {
  const int64_t cols = shape.empty() ? 1 : shape.back();
  const int64_t step = shape.empty() ? 0 : strides.back();
  for_each_row(shape, strides, [&](int64_t r, int64_t offset, int64_t c0, int64_t c1) {
    const float* s = src + r * cols;
    float* d = dst + offset;
    if (step == 1)
      for (int64_t c = c0; c < c1; ++c) d[c] += s[c];
    else
      for (int64_t c = c0; c < c1; ++c) d[c * step] += s[c];
  });
}

// dst[0..n) += src[0..n), in parallel.
inline void add_into(float* dst, const float* src, int64_t n) {
  parallel_for(n, kElementsPerTask, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) dst[i] += src[i];
  });
}

// A gradient handed on whole, in parallel: dst[0..n) = src[0..n) where dst is fresh (unwritten),
// else dst += src.
inline void pass_into(float* dst, const float* src, int64_t n, bool fresh) {
  if (!fresh) return add_into(dst, src, n);
  parallel_for(n, kElementsPerTask, [&](int64_t i0, int64_t i1) { std::copy(src + i0, src + i1, dst + i0); });
}

}  // namespace tinygpt
