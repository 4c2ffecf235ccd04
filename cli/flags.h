#pragma once
// Numbers on the command line: exact integers (no silent saturation or truncation), finite floats,
// each flag with its stated range, and one message style: "--batch must be at least 1 (got 0)".
#include <CLI/CLI.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "../nn/gpt.h"
#include "../train/options.h"

namespace tinygpt::cli {

// A numeric flag bound to `field` (which keeps its value when the flag is absent); the help text
// shows the default and the range.
template <class T>
CLI::Option* add_number(CLI::App* cmd, const std::string& flag, T& field, const io::Range& range,
                        const std::string& help);

// A flag that takes files or folders: a value that starts with "--" is refused (CLI11 takes the
// flag after a valueless `--data` as its file, so `--data --iters 3` would read files "--iters", "3").
CLI::Option* takes_paths(CLI::Option* option);

// The flag of one option of for_each_option / for_each_arch_option: a number with its range, text
// with its choices (the last one given wins), a switch (also --no-NAME when it is on by default).
template <class T>
void add_option_flag(CLI::App* cmd, const char* name, T& field, const char* help, const io::Range& range,
                     train::Choices choices) {
  const std::string flag = std::string("--") + name;
  if constexpr (std::is_same_v<T, bool>) {
    cmd->add_flag(field ? fmt::format("{},!--no-{}", flag, name) : flag, field, help);
  } else if constexpr (std::is_arithmetic_v<T>) {
    add_number(cmd, flag, field, range, help);
  } else if constexpr (std::is_enum_v<T>) {
    cmd->add_option(flag)
        ->description(help)
        ->default_str(choices[static_cast<size_t>(field)])
        ->type_name(fmt::format("{}", fmt::join(choices, "|")))
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast)
        ->each([&field, flag, choices](const std::string& text) {
          const std::optional<T> value = train::parse_choice<T>(text, choices);
          if (!value) throw std::invalid_argument(fmt::format("{} {}", flag, train::choice_problem(text, choices)));
          field = *value;
        });
  } else {
    CLI::Option* option = cmd->add_option(flag, field, help)->capture_default_str();
    if constexpr (std::is_same_v<T, std::string>) option->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    if constexpr (std::is_same_v<T, std::vector<std::string>>) takes_paths(option);
    if (!choices.empty()) option->type_name(fmt::format("{}", fmt::join(choices, "|")));
  }
}

// --weights fp32|int8, for the commands that run a model without training it (sample, eval): int8
// stores its weight matrices in 8 bits (nn::GPT::use_int8_weights).
void add_weights_flag(CLI::App* cmd, nn::WeightFormat& format);

// The architecture flags (--arch, --norm, ..., --tie), for commands that build a model.
void add_arch_flags(CLI::App* cmd, train::ArchOptions& o);
// The names (without --) of the architecture flags given on this command line.
std::vector<std::string> given_arch_flags(const CLI::App* cmd);

}  // namespace tinygpt::cli
