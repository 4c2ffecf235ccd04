#pragma once
// What the blocked GEMMs (kernels/gemm.cpp, kernels/gemm_bf16.cpp) share: how K is split into depth
// blocks, how work is split evenly, and where a tile of C starts from.
#include <algorithm>
#include <cstdint>

#include "../precision.h"

namespace tinygpt {

constexpr int64_t KC = 512;  // deepest block: deep enough that C's update costs little, shallow
                             // enough that the micro-kernel's panels stream from L2 at full speed

// Splits n into the fewest pieces of at most `most`, of equal size rounded up to a multiple of
// `unit`, so that threads get balanced work (the result's bits never depend on the split).
inline int64_t even_piece(int64_t n, int64_t most, int64_t unit) {
  const int64_t pieces = (n + most - 1) / most;
  const int64_t piece = (n + pieces - 1) / pieces;
  return (piece + unit - 1) / unit * unit;
}

// Where C starts from: its own values (accumulate), bias[0..n) on every row, or zero; and whether
// the values stored are rounded to bfloat16 (round: C's final values, the float kernels' last depth
// block). Two words, passed in registers: the flags share the first.
struct Start {
  bool accumulate = false;
  bool round = false;
  const float* bias = nullptr;  // null: none; read only when not accumulating
  Start at_column(int64_t j) const { return {accumulate, round, bias ? bias + j : nullptr}; }
  // C's new value at column c, given its old value and the product's.
  float value(float old, float product, int64_t c) const {
    const float v = accumulate ? old + product : bias ? product + bias[c] : product;
    return round ? round_to_bf16(v) : v;
  }
};

// Depth blocks of equal size, at most KC deep (768 is two of 384, not 512 + 256): every path
// splits K the same way, so every C element sums the same terms in the same order.
struct DepthBlocks {
  int64_t K, most, count;
  explicit DepthBlocks(int64_t K) : K(K), most(even_piece(K, KC, 8)), count((K + most - 1) / most) {}
  int64_t depth(int64_t block) const { return std::min(most, K - block * most); }
  bool last(int64_t block) const { return block + 1 == count; }
};

}  // namespace tinygpt
