#pragma once
// Seeded random numbers whose whole state can be saved and restored (exact resume), and that give
// the same numbers on every platform (std:: distributions are implementation-defined).
#include <array>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <utility>

#include "elementary.h"

namespace tinygpt {

// The seed a model, a run and a sampler start from when none is given (nanoGPT's).
inline constexpr uint64_t kDefaultSeed = 1337;

// FNV-1a over a sequence of units (a name's bytes, the bits of floats), folded in one at a time.
class Fnv1a {
 public:
  void add(uint64_t unit) { hash_ = (hash_ ^ unit) * 0x100000001b3ULL; }
  uint64_t value() const { return hash_; }

 private:
  uint64_t hash_ = 0xcbf29ce484222325ULL;
};

// SplitMix64 step: a good 64-bit mix, also used as a counter-based hash (dropout masks).
inline uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// xoshiro256** (Blackman & Vigna).
class Rng {
 public:
  using State = std::array<uint64_t, 4>;
  explicit Rng(uint64_t seed = 0) {
    uint64_t x = seed;
    for (auto& s : state_) s = splitmix64(x++);
  }
  uint64_t next_u64() {
    uint64_t result = rotl(state_[1] * 5, 7) * 9;
    uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
  // Uniform integer in [0, n), without modulo bias.
  uint64_t below(uint64_t n) {
    uint64_t limit = -n % n;  // 2^64 mod n
    for (;;) {
      uint64_t r = next_u64();
      if (r >= limit) return r % n;
    }
  }
  // Two independent standard normals by Box-Muller.
  std::pair<double, double> normal_pair() {
    const double radius = std::sqrt(-2.0 * log_double(1.0 - uniform()));  // 1 - u is in (0, 1]
    const CosSin turn = cos_sin_double(6.283185307179586 * uniform());
    return {radius * turn.cos, radius * turn.sin};
  }
  double normal() { return normal_pair().first; }
  const State& state() const { return state_; }
  // The all-zero state is the one xoshiro256** never leaves (it would yield only zeros, and below()
  // would loop forever): refused.
  void set_state(const State& s) {
    if (s == State{}) throw std::invalid_argument("Rng: the all-zero state is not a xoshiro256** state");
    state_ = s;
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  State state_{};
};

}  // namespace tinygpt
