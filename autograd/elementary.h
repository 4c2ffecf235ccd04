#pragma once
// The elementary functions of the model's arithmetic, written here rather than taken from the C
// library: a libm's exp or log may differ in the last bit from one version to the next, and glibc
// picks other code on CPUs with FMA. These are + - * /, fma (one rounding: the same on every CPU)
// and bit steps, each in a written order (no other a * b + c is fused: -ffp-contract=off), so they
// give the same bits in every build and on every CPU.
// Float ones for the model's loops (they vectorize: a libm call keeps a loop scalar; a portable
// build's loop runs its fmas as instructions inside simd::fused, as calls elsewhere); double ones for
// what is computed once and rounded to float (RoPE's angles, weight initialisation, learning rate
// schedules). The float ones are always inlined: a call would keep the caller's loop scalar.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace tinygpt {

// Cody-Waite range reduction x = n ln2 + r with |r| <= ln2/2 and a degree-6 Taylor polynomial for
// e^r (truncation below 2e-8 relative): e^r, and n as an integer (from shifted's bits, whose
// mantissa holds 2^22 + n: integer steps, defined for any input). NaN in, NaN in p.
struct ExpParts {
  float p;
  int32_t n;
};
[[gnu::always_inline]] inline ExpParts exp_parts(float clamped) {
  const float shifted = std::fma(clamped, 1.44269504f, 12582912.0f);  // 1.5 * 2^23: rounds n to nearest in the mantissa
  const float n = shifted - 12582912.0f;
  const float r = std::fma(-n, 1.42860677e-6f, std::fma(-n, 0.693145752f, clamped));  // ln 2 split in two
  float p = 1.0f / 720.0f;
  p = std::fma(p, r, 1.0f / 120.0f);
  p = std::fma(p, r, 1.0f / 24.0f);
  p = std::fma(p, r, 1.0f / 6.0f);
  p = std::fma(p, r, 0.5f);
  p = std::fma(p, r, 1.0f);
  p = std::fma(p, r, 1.0f);
  return {p, std::bit_cast<int32_t>(shifted) - 0x4B400000};
}

// exp(x) for the model's loops, within 2 ulp of exp from -87.3 to 88.37, so that 2^n is one normal
// float: 0 below (a masked score's -inf gives exactly 0), saturating near 2.4e38 above (GELU and
// SwiGLU divide by 1 + e^x; softmax and cross-entropy take x - max <= 0). NaN in, NaN out.
[[gnu::always_inline]] inline float vector_exp(float x) {
  const ExpParts e = exp_parts(std::min(std::max(x, -87.3f), 88.37f));
  const float y = e.p * std::bit_cast<float>(static_cast<uint32_t>(e.n + 127) << 23);
  return x < -87.3f ? 0.0f : y;
}

// exp(x) over the whole float range, as the exp op needs: 2^n applied as two factors 2^(n/2),
// each a normal float, so that the result underflows gradually to 0 and overflows to inf.
[[gnu::always_inline]] inline float full_range_exp(float x) {
  const ExpParts e = exp_parts(std::min(std::max(x, -104.0f), 89.0f));  // past these exp is 0 or inf already
  const int32_t half = e.n >> 1;  // n in [-150, 128]
  const float first = std::bit_cast<float>(static_cast<uint32_t>(half + 127) << 23),
              second = std::bit_cast<float>(static_cast<uint32_t>(e.n - half + 127) << 23);
  return (e.p * first) * second;
}

// e^x - 1 without the cancellation near 0: a degree-11 Taylor polynomial for |x| < 0.7 (truncation
// below 1e-10 relative), full_range_exp(x) - 1 beyond (a few ulp there).
[[gnu::always_inline]] inline float vector_expm1(float x) {
  float p = 1.0f / 39916800.0f;  // 1/11!
  for (const float c : {1.0f / 3628800.0f, 1.0f / 362880.0f, 1.0f / 40320.0f, 1.0f / 5040.0f, 1.0f / 720.0f,
                        1.0f / 120.0f, 1.0f / 24.0f, 1.0f / 6.0f, 0.5f, 1.0f})
    p = std::fma(p, x, c);
  const float near = p * x;
  return std::abs(x) < 0.7f ? near : full_range_exp(x) - 1.0f;
}

// log(x): x = m 2^e with m in [sqrt(1/2), sqrt(2)), log(m) = f - f²/2 + f³ P(f) with f = m - 1 (a
// minimax polynomial, about 1 ulp), plus e ln 2 in two parts. Subnormals are scaled up first;
// log(0) = -inf, log(negative) = NaN, log(inf) = inf, NaN in, NaN out.
[[gnu::always_inline]] inline float vector_log(float x) {
  const bool tiny = x < std::numeric_limits<float>::min();  // zero, subnormal or negative
  const float scaled = tiny ? x * 8388608.0f : x;          // 2^23
  const int32_t bits = std::bit_cast<int32_t>(scaled);
  int32_t e = ((bits >> 23) & 0xff) - 126 - (tiny ? 23 : 0);
  float m = std::bit_cast<float>((bits & 0x007fffff) | 0x3f000000);  // in [0.5, 1)
  const bool low = m < 0.707106781f;
  e = low ? e - 1 : e;
  const float f = low ? (m + m) - 1.0f : m - 1.0f;
  const float z = f * f;
  float p = 7.0376836292e-2f;
  for (const float c : {-1.1514610310e-1f, 1.1676998740e-1f, -1.2420140846e-1f, 1.4249322787e-1f, -1.6668057665e-1f,
                        2.0000714765e-1f, -2.4999993993e-1f, 3.3333331174e-1f})
    p = std::fma(p, f, c);
  const float fe = static_cast<float>(e);
  float y = p * f * z;
  y = std::fma(fe, -2.12194440e-4f, y);  // ln 2 = 0.693359375 - 2.12194440e-4, the first part exact in float
  y = std::fma(-0.5f, z, y);
  const float result = std::fma(fe, 0.693359375f, f + y);
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const float special = x == 0.0f ? -kInf : x >= 0.0f ? x : std::numeric_limits<float>::quiet_NaN();
  return x > 0.0f && x < kInf ? result : special;
}

// log(1 + x) accurate near 0: u = 1 + x rounds, and log(u) x / (u - 1) corrects for the rounding.
[[gnu::always_inline]] inline float vector_log1p(float x) {
  const float u = 1.0f + x;
  if (u == 1.0f) return x;
  if (u == std::numeric_limits<float>::infinity()) return u;
  return vector_log(u) * (x / (u - 1.0f));
}

// tanh(u) to a few ulp: e / (e + 2) with e = e^{2|u|} - 1, the sign put back.
[[gnu::always_inline]] inline float vector_tanh(float u) {
  const float e = vector_expm1(2.0f * std::abs(u));
  const float t = e == std::numeric_limits<float>::infinity() ? 1.0f : e / (e + 2.0f);
  return std::copysign(t, u);
}

// GELU's 0.5 v (1 + tanh(u)) as v sigmoid(2u) = v / (1 + e^{-2u}) (the same function): one exp
// and one division per value, GELU being a large share of a small model's step. gelu_sigmoid(u) is
// sigmoid(2u): 0 for a very negative u, 1 for a large one.
[[gnu::always_inline]] inline float gelu_sigmoid(float u) { return 1.0f / (1.0f + vector_exp(-2.0f * u)); }

// ---- double precision, to a few ulp ----

// Horner's rule over c[0] + c[1] x + ... + c[N-1] x^(N-1), highest power first.
template <size_t N>
inline double polynomial(double x, const double (&c)[N]) {
  double p = c[N - 1];
  for (size_t i = N - 1; i-- > 0;) p = p * x + c[i];
  return p;
}

// exp(x): x = n ln2 + r, |r| <= ln2/2, e^r by its Taylor series to r^13 (truncation below 1e-17
// relative), times 2^n (exact). 0 below -745, inf above 709.8, NaN in, NaN out.
inline double exp_double(double x) {
  if (!(x == x)) return x;
  if (x > 709.8) return std::numeric_limits<double>::infinity();
  if (x < -745.2) return 0.0;
  const double n = std::nearbyint(x * 1.4426950408889634);
  const double r = (x - n * 6.93147180369123816490e-01) - n * 1.90821492927058770002e-10;  // ln 2: 33 bits + rest
  static constexpr double c[] = {1.0, 1.0, 1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040,
                                 1.0 / 40320, 1.0 / 362880, 1.0 / 3628800, 1.0 / 39916800, 1.0 / 479001600,
                                 1.0 / 6227020800};
  return std::ldexp(polynomial(r, c), static_cast<int>(n));
}

// log(x): x = m 2^e with m in [sqrt(1/2), sqrt(2)), log(m) = 2 atanh(s), s = (m - 1) / (m + 1),
// |s| <= 0.172, by its series to s^25; plus e ln 2 in two parts. log(0) = -inf, NaN below 0.
inline double log_double(double x) {
  if (!(x > 0.0)) return x == 0.0 ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  if (x == std::numeric_limits<double>::infinity()) return x;
  int e = 0;
  double m = std::frexp(x, &e);  // exact: m in [0.5, 1)
  if (m < 0.70710678118654752) m = m + m, e -= 1;
  const double s = (m - 1.0) / (m + 1.0), z = s * s;
  static constexpr double c[] = {1.0,        1.0 / 3,  1.0 / 5,  1.0 / 7,  1.0 / 9,  1.0 / 11, 1.0 / 13,
                                 1.0 / 15,   1.0 / 17, 1.0 / 19, 1.0 / 21, 1.0 / 23, 1.0 / 25};
  const double fe = static_cast<double>(e);
  return fe * 6.93147180369123816490e-01 + (2.0 * s * polynomial(z, c) + fe * 1.90821492927058770002e-10);
}

// base^y for base > 0, as exp(y log(base)).
inline double pow_double(double base, double y) { return exp_double(y * log_double(base)); }

// cos(x) and sin(x): x = n pi/2 + r with pi/2 in three parts (exact steps while |n| < 2^20, so
// |x| up to about 1.6e6 reduces to full precision), the Taylor series of cos r and sin r to r^20
// and r^19 (|r| <= pi/4: truncation below 1e-19), and the quadrant n mod 4.
struct CosSin {
  double cos, sin;
};
inline CosSin cos_sin_double(double x) {
  const double n = std::nearbyint(x * 0.63661977236758134308);  // 2 / pi
  const double r = ((x - n * 1.57079632673412561417e+00) - n * 6.07710050630396597660e-11) - n * 2.02226624871116645580e-21;
  const double z = r * r;
  static constexpr double sc[] = {1.0,
                                  -1.0 / 6,
                                  1.0 / 120,
                                  -1.0 / 5040,
                                  1.0 / 362880,
                                  -1.0 / 39916800,
                                  1.0 / 6227020800,
                                  -1.0 / 1307674368000,
                                  1.0 / 355687428096000,
                                  -1.0 / 121645100408832000};
  static constexpr double cc[] = {1.0,
                                  -1.0 / 2,
                                  1.0 / 24,
                                  -1.0 / 720,
                                  1.0 / 40320,
                                  -1.0 / 3628800,
                                  1.0 / 479001600,
                                  -1.0 / 87178291200,
                                  1.0 / 20922789888000,
                                  -1.0 / 6402373705728000,
                                  1.0 / 2432902008176640000};
  const double s = r * polynomial(z, sc), c = polynomial(z, cc);
  switch (static_cast<int64_t>(n) & 3) {
    case 0: return {c, s};
    case 1: return {-s, c};
    case 2: return {-c, -s};
    default: return {s, -c};
  }
}

// base^n for a whole n >= 0 by repeated squaring: exact steps in a fixed order.
inline double whole_power(double base, int64_t n) {
  double result = 1.0;
  for (double b = base; n > 0; n >>= 1, b *= b)
    if (n & 1) result *= b;
  return result;
}

}  // namespace tinygpt
