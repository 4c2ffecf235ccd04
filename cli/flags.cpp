#include "flags.h"

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

CLI::Option* takes_paths(CLI::Option* option) {
  const std::string flag = option->get_name();
  return option->each([flag](const std::string& value) {
    if (value.rfind("--", 0) == 0)
      throw std::invalid_argument(fmt::format("{} takes files, and got the flag '{}' (a file whose name starts with "
                                              "-- is given as ./{})", flag, value, value));
  });
}

void add_weights_flag(CLI::App* cmd, nn::WeightFormat& format) {
  static constexpr const char* kChoices[] = {"fp32", "int8"};
  static const std::string help = fmt::format(
      "how the weight matrices are stored while the model runs: as trained, or in 8 bits by groups of {} weights of a "
      "row, each with a float scale (quicker sampling, a little less exact)", nn::kInt8Group);
  add_option_flag(cmd, "weights", format, help.c_str(), io::Range{}, train::Choices(kChoices));
}

void add_arch_flags(CLI::App* cmd, train::ArchOptions& o) {
  train::for_each_arch_option(o, [&](const char* name, auto& field, const char* help, const io::Range& range,
                                     train::Choices choices) { add_option_flag(cmd, name, field, help, range, choices); });
}

std::vector<std::string> given_arch_flags(const CLI::App* cmd) {
  std::vector<std::string> given;
  train::ArchOptions probe;
  train::for_each_arch_option(probe, [&](const char* name, auto&, const char*, const io::Range&, train::Choices) {
    if (cmd->count(std::string("--") + name) > 0) given.emplace_back(name);
  });
  return given;
}

}  // namespace tinygpt::cli
