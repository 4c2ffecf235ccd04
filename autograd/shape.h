#pragma once
// Shapes and strides: the index arithmetic every op shares.
#include <cstdint>
#include <string>
#include <vector>

#include "tinygpt/autograd/memory.h"

namespace tinygpt {

// Held in reused memory (memory.h): every op makes a few, and a training step allocates nothing.
using Shape = memory::Vector<int64_t>;
using Strides = memory::Vector<int64_t>;
using Axes = memory::Vector<int64_t>;  // axis numbers (sum, mean, permute)

int64_t numel(const Shape& shape);  // throws on a negative size or a count past int64
Strides contiguous_strides(const Shape& shape);
std::string to_string(const Shape& shape);  // "[2, 3]"

// NumPy broadcasting of two shapes; throws naming `op` and both shapes when they do not broadcast.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);

// Strides that read a tensor of `shape`/`strides` as if it had the (broadcast) shape `target`:
// missing leading dims and size-1 dims that broadcast get stride 0.
Strides broadcast_strides(const Shape& shape, const Strides& strides, const Shape& target);

// Python-style axis (negative counts from the end) checked against `ndim`.
int normalize_axis(int64_t axis, int64_t ndim, const char* op);

}  // namespace tinygpt
