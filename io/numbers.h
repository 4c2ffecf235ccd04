#pragma once
// Numbers from untrusted input (command-line flags, values stored in files): each with its stated
// range, exact integers (no silent saturation or truncation), finite floats, and one message style:
// "--batch must be at least 1 (got 0)".
#include <string>

namespace tinygpt::io {

// The values a number may take: from min to max, each end included unless it is open.
struct Range {
  double min = 0, max = 0;
  bool open_min = false, open_max = false;
};

// What is wrong with `value` for `range`, in the words of the flag messages ("must be at least 1
// (got 0)", "must be a finite number (got nan)"); empty when nothing is. Integers print as integers.
template <class T>
std::string range_problem(T value, const Range& range);
template <class T>
std::string describe(const Range& range);  // "[1, 1024]", "[0, 1)"

// `text` as a T within `range` for `flag`: exact integers (no silent saturation or
// truncation) and finite floats; throws std::invalid_argument in the messages' words ("--batch
// must be a whole number (got 'x')") otherwise. For int64_t, uint64_t and double.
template <class T>
T parse_number(const std::string& flag, const std::string& text, const Range& range);

}  // namespace tinygpt::io
