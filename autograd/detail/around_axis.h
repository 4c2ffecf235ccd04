#pragma once
// A contiguous tensor seen as [outer, n, inner] around one axis: the loops of every op that works
// along an axis (index_select, topk, cumsum) walk these three.
#include <cstdint>

#include "../shape.h"

namespace tinygpt::detail {

struct AroundAxis {
  int64_t outer = 1, n = 1, inner = 1;
};

inline AroundAxis around(const Shape& shape, int axis) {
  AroundAxis s;
  for (int d = 0; d < axis; ++d) s.outer *= shape[d];
  if (!shape.empty()) s.n = shape[axis];
  for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) s.inner *= shape[d];
  return s;
}

}  // namespace tinygpt::detail
