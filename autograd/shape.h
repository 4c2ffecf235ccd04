#pragma once
// Shapes and strides: the index arithmetic every op shares.
#include <algorithm>
#include <cstdint>
#include <iosfwd>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "memory.h"

namespace tinygpt {

// A tensor's sizes (or strides), one per axis. Held in reused memory (memory.h): every op makes a
// few, and a training step allocates nothing. It is a std::vector<int64_t> with that allocator, and
// converts to and from a plain std::vector<int64_t> (or a span) so that user code need not know.
class Shape : public memory::Vector<int64_t> {
 public:
  using Base = memory::Vector<int64_t>;
  using Base::Base;
  Shape() = default;
  Shape(const Base& v) : Base(v) {}
  Shape(Base&& v) noexcept : Base(std::move(v)) {}
  Shape(const std::vector<int64_t>& v) : Base(v.begin(), v.end()) {}
  Shape(std::span<const int64_t> v) : Base(v.begin(), v.end()) {}
  operator std::vector<int64_t>() const { return {begin(), end()}; }
  std::vector<int64_t> to_vector() const { return {begin(), end()}; }
  friend bool operator==(const Shape& a, const Shape& b) {
    return static_cast<const Base&>(a) == static_cast<const Base&>(b);
  }
  friend bool operator==(const Shape& a, const std::vector<int64_t>& b) { return std::ranges::equal(a, b); }
};
using Strides = Shape;

// Axis numbers (sum, mean, permute; negative counts from the end): a list, or one axis alone, so
// that sum(x, 1), sum(x, {0, 2}) and sum(x, std_vector) all read as they do in PyTorch. Empty
// (sum(x) or sum(x, {})) means every axis where an op says so.
class Axes : public memory::Vector<int64_t> {
 public:
  using Base = memory::Vector<int64_t>;
  Axes() = default;
  Axes(std::initializer_list<int64_t> axes) : Base(axes) {}
  Axes(int64_t axis) : Base{axis} {}                // NOLINT: one axis reads as a list of one
  Axes(int axis) : Base{int64_t{axis}} {}           // NOLINT: so that sum(x, 1) is not ambiguous
  Axes(const std::vector<int64_t>& v) : Base(v.begin(), v.end()) {}
  Axes(std::span<const int64_t> v) : Base(v.begin(), v.end()) {}
  Axes(const Base& v) : Base(v) {}
};

int64_t numel(const Shape& shape);  // throws on a negative size or a count past int64
Strides contiguous_strides(const Shape& shape);
std::string to_string(const Shape& shape);  // "[2, 3]"
std::ostream& operator<<(std::ostream& os, const Shape& shape);  // as to_string

// NumPy broadcasting of two shapes; throws naming `op` and both shapes when they do not broadcast.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);

// Strides that read a tensor of `shape`/`strides` as if it had the (broadcast) shape `target`:
// missing leading dims and size-1 dims that broadcast get stride 0.
Strides broadcast_strides(const Shape& shape, const Strides& strides, const Shape& target);

// Python-style axis (negative counts from the end) checked against `ndim`.
int normalize_axis(int64_t axis, int64_t ndim, const char* op);

}  // namespace tinygpt
