#include "numbers.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <type_traits>

namespace tinygpt::io {

namespace {
template <class T>
std::string bound(double b) {
  if constexpr (std::is_integral_v<T>)
    return b >= static_cast<double>(std::numeric_limits<T>::max()) ? fmt::format("{}", std::numeric_limits<T>::max())
                                                                    : fmt::format("{}", static_cast<T>(b));
  return fmt::format("{}", b);
}
}  // namespace

template <class T>
std::string describe(const Range& r) {
  return fmt::format("{}{}, {}{}", r.open_min ? "(" : "[", bound<T>(r.min), bound<T>(r.max), r.open_max ? ")" : "]");
}

template <class T>
std::string range_problem(T value, const Range& r) {
  if constexpr (std::is_floating_point_v<T>) {
    if (!std::isfinite(value)) return fmt::format("must be a finite number (got {})", value);
  }
  auto bound = [](double b) { return io::bound<T>(b); };
  const auto v = static_cast<double>(value);
  if (r.open_min ? !(v > r.min) : !(v >= r.min))
    return fmt::format("must be {} {} (got {})", r.open_min ? "more than" : "at least", bound(r.min), value);
  if (r.open_max ? !(v < r.max) : !(v <= r.max))
    return fmt::format("must be {} {} (got {})", r.open_max ? "less than" : "at most", bound(r.max), value);
  return "";
}

template std::string describe<int64_t>(const Range&);
template std::string describe<uint64_t>(const Range&);
template std::string describe<double>(const Range&);
template std::string range_problem(int64_t, const Range&);
template std::string range_problem(uint64_t, const Range&);
template std::string range_problem(double, const Range&);

template <class T>
T parse_number(const std::string& flag, const std::string& text, const Range& range) {
  T value{};
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if constexpr (std::is_integral_v<T>) {
    const bool negative = !text.empty() && text[0] == '-';
    if (text.size() == size_t{negative} || text.find_first_not_of("0123456789", negative) != std::string::npos)
      throw std::invalid_argument(fmt::format("{} must be a whole number (got '{}')", flag, text));
    if (error != std::errc() || stop != end)  // too large for T, or negative for an unsigned T
      throw std::invalid_argument(
          fmt::format("{} must be a whole number in {} (got {})", flag, describe<T>(range), text));
  } else {
    if (error == std::errc::result_out_of_range)
      throw std::invalid_argument(fmt::format("{} must be a finite number (got {})", flag, text));
    if (error != std::errc() || stop != end)
      throw std::invalid_argument(fmt::format("{} must be a number (got '{}')", flag, text));
  }
  if (const std::string problem = range_problem(value, range); !problem.empty())
    throw std::invalid_argument(fmt::format("{} {}", flag, problem));
  return value;
}

template int64_t parse_number(const std::string&, const std::string&, const Range&);
template uint64_t parse_number(const std::string&, const std::string&, const Range&);
template double parse_number(const std::string&, const std::string&, const Range&);

}  // namespace tinygpt::io
