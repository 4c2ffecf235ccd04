#include "tinygpt/train/cli/flags.h"

#include <fmt/format.h>

#include <charconv>
#include <stdexcept>
#include <type_traits>

namespace tinygpt::cli {

template <class T>
T parse_number(const std::string& flag, const std::string& text, const train::Range& range) {
  T value{};
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if constexpr (std::is_integral_v<T>) {
    const bool negative = !text.empty() && text[0] == '-';
    if (text.size() == size_t{negative} || text.find_first_not_of("0123456789", negative) != std::string::npos)
      throw std::invalid_argument(fmt::format("{} must be a whole number (got '{}')", flag, text));
    if (error != std::errc() || stop != end)  // too large for T, or negative for an unsigned T
      throw std::invalid_argument(
          fmt::format("{} must be a whole number in {} (got {})", flag, train::describe<T>(range), text));
  } else {
    if (error == std::errc::result_out_of_range)
      throw std::invalid_argument(fmt::format("{} must be a finite number (got {})", flag, text));
    if (error != std::errc() || stop != end)
      throw std::invalid_argument(fmt::format("{} must be a number (got '{}')", flag, text));
  }
  if (const std::string problem = train::range_problem(value, range); !problem.empty())
    throw std::invalid_argument(fmt::format("{} {}", flag, problem));
  return value;
}

template <class T>
CLI::Option* add_number(CLI::App* cmd, const std::string& flag, T& field, const train::Range& range,
                        const std::string& help) {
  return cmd->add_option(flag)
      ->description(fmt::format("{} (default {}; {})", help, field, train::describe<T>(range)))
      ->type_name(std::is_integral_v<T> ? "INT" : "NUMBER")
      ->each([&field, flag, range](const std::string& text) { field = parse_number<T>(flag, text, range); });
}

template int64_t parse_number(const std::string&, const std::string&, const train::Range&);
template uint64_t parse_number(const std::string&, const std::string&, const train::Range&);
template double parse_number(const std::string&, const std::string&, const train::Range&);
template CLI::Option* add_number(CLI::App*, const std::string&, int64_t&, const train::Range&, const std::string&);
template CLI::Option* add_number(CLI::App*, const std::string&, uint64_t&, const train::Range&, const std::string&);
template CLI::Option* add_number(CLI::App*, const std::string&, double&, const train::Range&, const std::string&);

}  // namespace tinygpt::cli
