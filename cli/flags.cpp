#include "tinygpt/cli/flags.h"

#include <fmt/format.h>

#include <stdexcept>
#include <type_traits>

namespace tinygpt::cli {

template <class T>
CLI::Option* add_number(CLI::App* cmd, const std::string& flag, T& field, const io::Range& range,
                        const std::string& help) {
  return cmd->add_option(flag)
      ->description(fmt::format("{} (default {}; {})", help, field, io::describe<T>(range)))
      ->type_name(std::is_integral_v<T> ? "INT" : "NUMBER")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast)  // as in shells' habit: the last one given wins
      ->each([&field, flag, range](const std::string& text) { field = io::parse_number<T>(flag, text, range); });
}

template CLI::Option* add_number(CLI::App*, const std::string&, int64_t&, const io::Range&, const std::string&);
template CLI::Option* add_number(CLI::App*, const std::string&, uint64_t&, const io::Range&, const std::string&);
template CLI::Option* add_number(CLI::App*, const std::string&, double&, const io::Range&, const std::string&);

}  // namespace tinygpt::cli
