#pragma once
// An int64 index tensor: positions, not values to differentiate. What gather, scatter_add, topk,
// randint and multinomial take and give (libtorch's kLong tensors). Row-major values and a shape;
// a std::vector<int64_t> converts to a 1-D one.
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "shape.h"

namespace tinygpt {

struct Indices {
  Shape shape;
  std::vector<int64_t> values;

  Indices() = default;
  Indices(std::vector<int64_t> v);  // NOLINT: a list of positions reads as a 1-D index tensor
  Indices(std::initializer_list<int64_t> v) : Indices(std::vector<int64_t>(v)) {}
  // Throws std::invalid_argument when the shape's element count is not values.size().
  Indices(Shape shape, std::vector<int64_t> values);

  int64_t dim() const { return static_cast<int64_t>(shape.size()); }
  int64_t numel() const { return static_cast<int64_t>(values.size()); }
  int64_t size(int64_t axis) const;
  int64_t at(std::initializer_list<int64_t> index) const;  // bounds-checked
  bool operator==(const Indices&) const = default;
};

}  // namespace tinygpt
