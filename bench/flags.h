#pragma once
// The benchmark programs' command lines: `--name value` pairs, every name known and every number
// checked as the tinygpt command checks its flags (io::parse_number), before anything runs, so
// that a typo is refused instead of timed.
#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>

#include "tinygpt/nn/gpt.h"
#include "tinygpt/train/options.h"

namespace tinygpt::bench {

struct Integer {
  int64_t value;  // the default until a flag sets it
  io::Range range;
};

// Sets `integers` and `texts` (their defaults in place) from argv; throws, naming the flag, on an
// unknown name, a missing value or a number that is not whole or not in range.
inline void parse_flags(int argc, char** argv, std::map<std::string, Integer>& integers,
                        std::map<std::string, std::string>& texts) {
  for (int i = 1; i < argc; i += 2) {
    const std::string name = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument(fmt::format("{} needs a value", name));
    if (auto t = texts.find(name); t != texts.end()) {
      t->second = argv[i + 1];
      continue;
    }
    const auto n = integers.find(name);
    if (n == integers.end()) throw std::invalid_argument(fmt::format("unknown flag '{}'", name));
    n->second.value = io::parse_number<int64_t>(name, argv[i + 1], n->second.range);
  }
}

// The model's flags (--layers, --heads, --embd, --block, --vocab-size), `defaults` in place, in the
// ranges the tinygpt command allows (nn/gpt.h), added to `integers`.
inline void add_model_flags(std::map<std::string, Integer>& integers, const nn::GPTConfig& defaults) {
  integers["--layers"] = {defaults.n_layer, {1, double(nn::kMaxLayers)}};
  integers["--heads"] = {defaults.n_head, {1, double(nn::kMaxHeads)}};
  integers["--embd"] = {defaults.n_embd, {1, double(nn::kMaxEmbd)}};
  integers["--block"] = {defaults.block_size, {1, double(nn::kMaxBlock)}};
  integers["--vocab-size"] = {defaults.vocab_size, {1, double(nn::kMaxVocab)}};
}

// The config those flags give; throws where it is not a valid model (heads that do not divide embd).
inline nn::GPTConfig model_config(std::map<std::string, Integer>& integers) {
  const nn::GPTConfig c{.vocab_size = integers["--vocab-size"].value, .block_size = integers["--block"].value,
                        .n_layer = integers["--layers"].value, .n_head = integers["--heads"].value,
                        .n_embd = integers["--embd"].value};
  c.validate();
  return c;
}

}  // namespace tinygpt::bench
