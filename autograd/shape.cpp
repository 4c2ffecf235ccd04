#include "shape.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <ostream>
#include <stdexcept>

namespace tinygpt {

std::ostream& operator<<(std::ostream& os, const Shape& shape) { return os << to_string(shape); }

int64_t numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(n, d, &n))
      throw std::invalid_argument(fmt::format("shape {}: {}", to_string(shape),
                                              d < 0 ? "a negative size" : "more elements than a 64-bit count holds"));
  return n;
}

Strides contiguous_strides(const Shape& shape) {
  Strides strides(shape.size());
  int64_t s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    s *= shape[i];
  }
  return strides;
}

std::string to_string(const Shape& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1)
      throw std::invalid_argument(fmt::format("{}: shapes {} and {} do not broadcast", op,
                                              to_string(a), to_string(b)));
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Strides broadcast_strides(const Shape& shape, const Strides& strides, const Shape& target) {
  Strides out(target.size(), 0);
  size_t lead = target.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i)
    out[lead + i] = shape[i] == 1 ? 0 : strides[i];
  return out;
}

int normalize_axis(int64_t axis, int64_t ndim, const char* op) {
  if (axis < -ndim || axis >= ndim)
    throw std::invalid_argument(fmt::format("{}: axis {} out of range for a {}-d tensor", op, axis, ndim));
  return static_cast<int>(axis < 0 ? axis + ndim : axis);
}

}  // namespace tinygpt
