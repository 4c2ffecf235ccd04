#pragma once
// Numbers on the command line: exact integers (no silent saturation or truncation), finite floats,
// each flag with its stated range, and one message style: "--batch must be at least 1 (got 0)".
#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

#include "tinygpt/train/options.h"

namespace tinygpt::cli {

// A numeric flag bound to `field` (which keeps its value when the flag is absent); the help text
// shows the default and the range.
template <class T>
CLI::Option* add_number(CLI::App* cmd, const std::string& flag, T& field, const io::Range& range,
                        const std::string& help);

}  // namespace tinygpt::cli
