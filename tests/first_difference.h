#pragma once
// For REQUIRE(first_difference(got, want) == ""): what a bitwise comparison of two large results
// reports on failure. Comparing the vectors themselves has Catch print every element of both:
// minutes of output for a 500 x 800 product.
#include <fmt/format.h>

#include <string>
#include <vector>

namespace tinygpt::testing {

// "" where got and want hold the same values, else their sizes or the first element that differs.
template <class T>
std::string first_difference(const std::vector<T>& got, const std::vector<T>& want) {
  if (got.size() != want.size()) return fmt::format("{} values, not {}", got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i]) return fmt::format("element {}: {} against {}", i, got[i], want[i]);
  return "";
}

}  // namespace tinygpt::testing
