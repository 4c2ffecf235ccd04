// Per-thread scratch: each slot's share is its own, cache-line aligned, and kept a prefetch
// distance away from every other share.
#include <catch2/catch.hpp>

#include <cstdint>

#include "tinygpt/autograd/kernels/parallel.h"

using namespace tinygpt;

TEST_CASE("SlotScratch gives each slot an aligned share, 64 KB or more from the next") {
  const int slots = 3;
  for (int64_t floats : {1, 100, 9296, 16384}) {
    SlotScratch scratch(floats, slots);
    for (int s = 0; s < slots; ++s) {
      REQUIRE(reinterpret_cast<std::uintptr_t>(scratch[s]) % 64 == 0);
      for (int64_t i = 0; i < floats; ++i) scratch[s][i] = static_cast<float>(s);  // writable (ASan checks)
    }
    for (int s = 0; s + 1 < slots; ++s) {
      const auto end = reinterpret_cast<std::uintptr_t>(scratch[s] + floats);
      REQUIRE(reinterpret_cast<std::uintptr_t>(scratch[s + 1]) - end >= 64 * 1024);
    }
    for (int s = 0; s < slots; ++s) REQUIRE(scratch[s][floats - 1] == static_cast<float>(s));
  }
}

TEST_CASE("SlotScratch of no floats hands out no memory") {
  SlotScratch scratch(0, 4);
  REQUIRE(scratch[0] == nullptr);
  REQUIRE(scratch[3] == nullptr);
}
