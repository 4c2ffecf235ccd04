// Printing a tensor as PyTorch does: nested brackets, one number format for every element, and
// with more than 1000 elements only the first and last three along each axis.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include "tensor.h"

namespace tinygpt {

namespace {

constexpr int64_t kSummarizeAbove = 1000, kEdgeItems = 3;

// Fixed with 4 decimals when every value sits comfortably there, else scientific.
std::string number(float v, bool scientific) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return scientific ? fmt::format("{:.4e}", v) : fmt::format("{:.4f}", v);
}

struct Printer {
  const std::vector<float>& values;
  const Shape& shape;
  bool summarize, scientific;
  size_t width;

  // Indices kept along an axis of length n: all, or the first and last kEdgeItems (-1 = "...").
  std::vector<int64_t> kept(int64_t n) const {
    std::vector<int64_t> out;
    if (!summarize || n <= 2 * kEdgeItems) {
      for (int64_t i = 0; i < n; ++i) out.push_back(i);
      return out;
    }
    for (int64_t i = 0; i < kEdgeItems; ++i) out.push_back(i);
    out.push_back(-1);
    for (int64_t i = n - kEdgeItems; i < n; ++i) out.push_back(i);
    return out;
  }

  void print(std::string& out, size_t axis, int64_t offset, size_t indent) const {
    int64_t inner = 1;
    for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
    out += '[';
    const std::vector<int64_t> items = kept(shape[axis]);
    for (size_t k = 0; k < items.size(); ++k) {
      if (k > 0) {
        out += ',';
        if (axis + 1 == shape.size()) out += ' ';
        else out += std::string(shape.size() - axis - 1, '\n') + std::string(indent + 1, ' ');
      }
      if (items[k] < 0) {
        out += "...";
        continue;
      }
      if (axis + 1 == shape.size()) {
        const std::string s = number(values[static_cast<size_t>(offset + items[k])], scientific);
        out += std::string(width - std::min(width, s.size()), ' ') + s;
      } else {
        print(out, axis + 1, offset + items[k] * inner, indent + 1);
      }
    }
    out += ']';
  }
};

}  // namespace

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (!t.defined()) return os << "tensor(undefined)";
  const std::vector<float> values = t.to_vector();
  float largest = 0, smallest = INFINITY;
  for (float v : values)
    if (std::isfinite(v) && v != 0) largest = std::max(largest, std::abs(v)), smallest = std::min(smallest, std::abs(v));
  const bool scientific = largest >= 1e8f || (smallest < 1e-4f && largest > 0);
  size_t width = 0;
  for (float v : values) width = std::max(width, number(v, scientific).size());
  std::string out = "tensor(";
  if (t.dim() == 0) {
    out += number(values.at(0), scientific);
  } else if (values.empty()) {
    out += "[]";
  } else {
    Printer{values, t.shape(), t.numel() > kSummarizeAbove, scientific, width}.print(out, 0, 0, 7);
  }
  if (t.dim() > 0) out += ", shape=" + to_string(t.shape());
  if (t.requires_grad()) out += ", requires_grad=true";
  return os << out << ')';
}

}  // namespace tinygpt
