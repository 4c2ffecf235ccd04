#pragma once
// The benchmark programs' command lines, read by CLI11 as the tinygpt command's are: every number
// checked as tinygpt checks its flags (io::parse_number), before anything runs, so that a typo is
// refused instead of timed; --help lists the flags with their defaults.
#include <CLI/CLI.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "tinygpt/nn/gpt.h"
#include "tinygpt/train/options.h"

namespace tinygpt::bench {

// An integer flag bound to `field` (which keeps its value when the flag is absent).
inline CLI::Option* add_integer(CLI::App& app, const std::string& flag, int64_t& field, const io::Range& range,
                                const std::string& help) {
  return app.add_option(flag)
      ->description(help)
      ->default_str(std::to_string(field))
      ->type_name("INT")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast)
      ->each([&field, flag, range](const std::string& text) { field = io::parse_number<int64_t>(flag, text, range); });
}

// The model's flags (--layers, --heads, --embd, --block, --vocab-size) bound to `c`'s fields, in the
// ranges the tinygpt command allows (nn/gpt.h); c.validate() after parsing checks them together.
inline void add_model_flags(CLI::App& app, nn::GPTConfig& c) {
  add_integer(app, "--layers", c.n_layer, {1, double(nn::kMaxLayers)}, "transformer blocks");
  add_integer(app, "--heads", c.n_head, {1, double(nn::kMaxHeads)}, "attention heads");
  add_integer(app, "--embd", c.n_embd, {1, double(nn::kMaxEmbd)}, "embedding width");
  add_integer(app, "--block", c.block_size, {1, double(nn::kMaxBlock)}, "context length");
  add_integer(app, "--vocab-size", c.vocab_size, {1, double(nn::kMaxVocab)}, "vocabulary size");
}

// Reads argv into the flags' fields: --help prints them and exits 0; a flag that is unknown, lacks
// its value or holds a number out of range ends the program with one line and exit code 2.
inline void parse_flags(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    std::exit(app.exit(e));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", app.get_name().c_str(), e.what());
    std::exit(2);
  }
}

}  // namespace tinygpt::bench
