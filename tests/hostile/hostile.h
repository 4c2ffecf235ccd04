#pragma once
// What every hostile test asks of a run of the tinygpt executable on a damaged input: it ends by
// itself, in time and memory, with exit 0 or one clear line of error; and the sampling that lets
// the sanitizer job run every k-th case.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "process.h"
#include "temp_files.h"

namespace tinygpt::testing {

inline constexpr long kMemoryLimitMb = 1024;  // a tiny model's run takes tens of MB
inline constexpr auto kTimeLimit = std::chrono::seconds(60);

// TINYGPT_HOSTILE_SAMPLE=k keeps every k-th case (default: all): the sanitizer job's executables
// start several times slower.
inline size_t sample_every() {
  const char* k = std::getenv("TINYGPT_HOSTILE_SAMPLE");
  return k && std::atoi(k) > 1 ? static_cast<size_t>(std::atoi(k)) : 1;
}

template <class T>
inline std::vector<T> sampled(const std::vector<T>& all) {
  std::vector<T> out;
  for (size_t i = 0; i < all.size(); i += sample_every()) out.push_back(all[i]);
  return out;
}

// Every file in a folder with its size and contents: what a run must leave as it found it.
inline std::map<std::string, std::string> snapshot(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    files[entry.path().filename().string()] = entry.is_regular_file() ? read_file(entry.path().string()) : "(not a file)";
  return files;
}

inline void require_no_crash(const Run& r) {
  REQUIRE_FALSE(r.timed_out);
  REQUIRE(r.signal == 0);
  REQUIRE((r.exit_code == 0 || r.exit_code == 1));
  REQUIRE(r.peak_rss_mb < kMemoryLimitMb);
}

inline void require_clear_error(const Run& r, const std::string& mention) {
  require_no_crash(r);
  REQUIRE(r.exit_code == 1);
  REQUIRE(r.output.rfind("tinygpt: error: ", 0) == 0);
  REQUIRE(std::count(r.output.begin(), r.output.end(), '\n') == 1);
  REQUIRE(r.output.find(mention) != std::string::npos);
}

inline std::string flip(std::string bytes, size_t at, uint8_t mask = 0x5A) {
  bytes[at] = static_cast<char>(static_cast<uint8_t>(bytes[at]) ^ mask);
  return bytes;
}

}  // namespace tinygpt::testing
