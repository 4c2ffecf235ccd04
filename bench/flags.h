#pragma once
// The benchmark programs' command lines: `--name value` pairs, every name known and every number
// whole and in range, checked before anything runs, so that a typo is refused instead of timed.
#include <fmt/format.h>

#include <charconv>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>

namespace tinygpt::bench {

struct Integer {
  int64_t value, least, most;  // value: the default until a flag sets it
};

// Sets `integers` and `texts` (their defaults in place) from argv; throws, naming the flag, on an
// unknown name, a missing value or a number that is not whole or not in range.
inline void parse_flags(int argc, char** argv, std::map<std::string, Integer>& integers,
                        std::map<std::string, std::string>& texts) {
  for (int i = 1; i < argc; i += 2) {
    const std::string name = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument(fmt::format("{} needs a value", name));
    const std::string text = argv[i + 1];
    if (auto t = texts.find(name); t != texts.end()) {
      t->second = text;
      continue;
    }
    const auto n = integers.find(name);
    if (n == integers.end()) throw std::invalid_argument(fmt::format("unknown flag '{}'", name));
    Integer& flag = n->second;
    int64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || value < flag.least || value > flag.most)
      throw std::invalid_argument(
          fmt::format("{} wants a whole number from {} to {}, not '{}'", name, flag.least, flag.most, text));
    flag.value = value;
  }
}

}  // namespace tinygpt::bench
