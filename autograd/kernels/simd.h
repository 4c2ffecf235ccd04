#pragma once
// The SIMD vocabulary of the hand-tiled kernels (gemm, small_gemm, matvec): one register of floats
// and the few operations they need. AVX-512 or AVX2+FMA intrinsics where the build targets them,
// GCC's portable vector extension elsewhere.
//
// Every build computes the same bits: fma is one rounding on every path (the portable one too:
// see fused below), each output element of a kernel is one chain of fmas in k order whatever the
// vector width, and no a * b + c outside fma is fused (-ffp-contract=off).
#include <cstdint>
#include <cstring>

#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace tinygpt::simd {

// One SIMD register of floats: AVX-512, AVX2+FMA, or GCC's portable vector extension elsewhere.
// load_first / store_first move the first n (0..kLanes) floats only (zeros past them on load,
// memory past them untouched): the end of a row that does not fill a vector.
#if defined(__AVX512F__)
constexpr int kLanes = 16, MR = 12;  // gemm: 24 accumulators of 32 registers
using vfloat = __m512;
inline vfloat zero() { return _mm512_setzero_ps(); }
inline vfloat broadcast(const float* p) { return _mm512_set1_ps(*p); }
inline vfloat load_aligned(const float* p) { return _mm512_load_ps(p); }
inline vfloat load(const float* p) { return _mm512_loadu_ps(p); }
inline void store(float* p, vfloat v) { _mm512_storeu_ps(p, v); }
inline vfloat fma(vfloat a, vfloat b, vfloat c) { return _mm512_fmadd_ps(a, b, c); }
inline __mmask16 first_lanes(int n) { return static_cast<__mmask16>((1u << n) - 1); }
inline vfloat load_first(const float* p, int n) { return _mm512_maskz_loadu_ps(first_lanes(n), p); }
inline void store_first(float* p, vfloat v, int n) { _mm512_mask_storeu_ps(p, first_lanes(n), v); }
#elif defined(__AVX2__) && defined(__FMA__)
constexpr int kLanes = 8, MR = 6;  // gemm: 12 accumulators of 16 registers
using vfloat = __m256;
inline vfloat zero() { return _mm256_setzero_ps(); }
inline vfloat broadcast(const float* p) { return _mm256_broadcast_ss(p); }
inline vfloat load_aligned(const float* p) { return _mm256_load_ps(p); }
inline vfloat load(const float* p) { return _mm256_loadu_ps(p); }
inline void store(float* p, vfloat v) { _mm256_storeu_ps(p, v); }
inline vfloat fma(vfloat a, vfloat b, vfloat c) { return _mm256_fmadd_ps(a, b, c); }
inline __m256i first_lanes(int n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
inline vfloat load_first(const float* p, int n) { return _mm256_maskload_ps(p, first_lanes(n)); }
inline void store_first(float* p, vfloat v, int n) { _mm256_maskstore_ps(p, first_lanes(n), v); }
#else
// AVX2's shape (8 lanes, MR 6) in GCC's vector extension: two SSE registers a vector where the
// build has no AVX, one AVX register inside fused's AVX2 copy of a kernel.
constexpr int kLanes = 8, MR = 6;
typedef float vfloat __attribute__((vector_size(32)));
inline vfloat zero() { return vfloat{}; }
inline vfloat broadcast(const float* p) { return vfloat{*p, *p, *p, *p, *p, *p, *p, *p}; }
inline vfloat load(const float* p) {
  vfloat v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline vfloat load_aligned(const float* p) { return load(p); }
inline void store(float* p, vfloat v) { std::memcpy(p, &v, sizeof v); }
// One rounding per lane: a vfmadd where the code is compiled for FMA (fused's copy), else glibc's
// fmaf, exact on any CPU (its own FMA instruction where the CPU has one, software where not).
inline vfloat fma(vfloat a, vfloat b, vfloat c) {
  vfloat r;
  for (int l = 0; l < kLanes; ++l) r[l] = __builtin_fmaf(a[l], b[l], c[l]);
  return r;
}
inline vfloat load_first(const float* p, int n) {
  vfloat v = zero();
  for (int l = 0; l < n; ++l) v[l] = p[l];
  return v;
}
inline void store_first(float* p, vfloat v, int n) {
  for (int l = 0; l < n; ++l) p[l] = v[l];
}
#endif

// fused(body): runs body, a kernel's loop over fmas. A build for AVX2+FMA (or AVX-512) runs it as
// it is. A build without them (the portable one: TINYGPT_NATIVE=OFF, -march=x86-64 or x86-64-v2)
// carries a second copy of body compiled for AVX2+FMA, every callee inlined into it, and runs that
// copy on CPUs that have both (a handful of instructions tested once), so that its fmas are
// vfmadds, not calls. Both copies compute the same bits.
#if defined(__x86_64__) && !(defined(__AVX2__) && defined(__FMA__))
#define TINYGPT_FMA_AT_RUN_TIME 1
bool cpu_has_avx2_fma();  // machine.cpp
template <class Body>
__attribute__((target("avx2,fma"), flatten)) void run_avx2_fma(const Body& body) {
  body();
}
template <class Body>
void fused(const Body& body) {
  if (cpu_has_avx2_fma()) run_avx2_fma(body);
  else body();
}
#else
template <class Body>
void fused(const Body& body) {
  body();
}
#endif
inline vfloat add(vfloat a, vfloat b) { return a + b; }
inline vfloat mul(vfloat a, vfloat b) { return a * b; }

// kLanes signed bytes as floats (each exactly; int8 weights, inference.h). (GCC 12's AVX-512
// headers warn here as at round_bf16 below: the same false positive.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
inline vfloat load_int8(const int8_t* p) {
#if defined(__AVX512F__)
  return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
#elif defined(__AVX2__) && defined(__FMA__)
  return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
#else
  vfloat v;
  for (int l = 0; l < kLanes; ++l) v[l] = float(p[l]);
  return v;
#endif
}
#pragma GCC diagnostic pop

#if defined(__AVX2__)
// Eight rows of eight floats become eight columns: r[i][j] moves to r[j][i], in 256-bit registers
// whatever the vector width (AVX-512 machines have AVX2 too). Packing for gemm uses it where an
// operand's layout runs across the packed order (kernels/pack.cpp, scalar loop beside).
#define TINYGPT_HAS_TRANSPOSE8 1
inline void transpose8(__m256 (&r)[8]) {
  __m256 pairs[8], quads[8];
  for (int i = 0; i < 8; i += 2) {  // rows a, b -> a0 b0 a1 b1 | a4 b4 a5 b5  and  a2 b2 a3 b3 | a6 b6 a7 b7
    pairs[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    pairs[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4)  // rows a..d -> a0 b0 c0 d0 | a4 b4 c4 d4, and so on for 1..3
    for (int h = 0; h < 2; ++h) {
      quads[i + 2 * h] = _mm256_shuffle_ps(pairs[i + h], pairs[i + 2 + h], _MM_SHUFFLE(1, 0, 1, 0));
      quads[i + 2 * h + 1] = _mm256_shuffle_ps(pairs[i + h], pairs[i + 2 + h], _MM_SHUFFLE(3, 2, 3, 2));
    }
  for (int j = 0; j < 4; ++j) {  // halves of rows a..d and e..h joined: column j and column j + 4
    r[j] = _mm256_permute2f128_ps(quads[j], quads[4 + j], 0x20);
    r[j + 4] = _mm256_permute2f128_ps(quads[j], quads[4 + j], 0x31);
  }
}
#endif

// Each lane rounded to the nearest bfloat16 as precision.h's round_to_bf16 does, for any vector of
// floats (vfloat, or AVX2's __m256 beside AVX-512): vcvtneps2bf16 where the build has it, the same
// integer steps as round_to_bf16 elsewhere (in AVX2 intrinsics: 12 instructions for the 15 that
// GCC's vector extension makes of them, which emulates the unsigned compares).
#if defined(__AVX512BF16__) && defined(__AVX512VL__)
// (GCC 12's AVX-512 headers start from _mm512_undefined_epi32() and then warn that it may be used
// uninitialized: a false positive of the headers.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
inline __m512 round_bf16(__m512 x) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32((__m256i)_mm512_cvtneps_pbh(x)), 16));
}
inline __m256 round_bf16(__m256 x) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32((__m128i)_mm256_cvtneps_pbh(x)), 16));
}
#pragma GCC diagnostic pop
#elif defined(__AVX2__)
inline __m256 round_bf16(__m256 x) {
  const __m256i u = _mm256_castps_si256(x), magnitude = _mm256_and_si256(u, _mm256_set1_epi32(0x7FFFFFFF));
  const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));  // ties to even
  const __m256i rounded = _mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7FFF)), odd);
  // Signed compares: both sides are non-negative.
  const __m256i nan = _mm256_cmpgt_epi32(magnitude, _mm256_set1_epi32(0x7F800000));
  const __m256i tiny = _mm256_cmpgt_epi32(_mm256_set1_epi32(0x00800000), magnitude);  // zero or subnormal
  const __m256i chosen = _mm256_blendv_epi8(rounded, _mm256_or_si256(u, _mm256_set1_epi32(0x00400000)), nan);
  // The upper 16 bits, or the sign alone where tiny.
  const __m256i keep = _mm256_andnot_si256(_mm256_srli_epi32(tiny, 1), _mm256_set1_epi32(int(0xFFFF0000u)));
  return _mm256_castsi256_ps(_mm256_and_si256(chosen, keep));
}
#endif
template <class V>
inline V round_bf16(V x) {
  typedef unsigned Bits __attribute__((vector_size(sizeof(V))));
  const Bits u = reinterpret_cast<Bits>(x);
  const Bits rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u;
  const Bits quiet_nan = (u | 0x00400000u) & 0xFFFF0000u;
  const Bits finite = (u & 0x7F800000u) == 0 ? u & 0x80000000u : rounded;
  return reinterpret_cast<V>((u & 0x7FFFFFFFu) > 0x7F800000u ? quiet_nan : finite);
}
// body(j, lanes) for the vectors of a row of n floats: whole ones (lanes == kLanes, a constant once
// inlined), then a last partial one. load_n / store_n move `lanes` floats: plain moves for whole
// vectors, masked ones (dearer, most of all AVX2's stores) only for the last.
template <class Body>
inline void by_vectors(int64_t n, const Body& body) {
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) body(j, kLanes);
  if (j < n) body(j, static_cast<int>(n - j));
}
inline vfloat load_n(const float* p, int lanes) { return lanes == kLanes ? load(p) : load_first(p, lanes); }
inline void store_n(float* p, vfloat v, int lanes) {
  if (lanes == kLanes) store(p, v);
  else store_first(p, v, lanes);
}

// Four vectors rounded at once. On AVX2, where the integer steps take 12 instructions, a block
// whose magnitudes all lie in [2^-126, 2^112) rounds in the float adder instead: x + c - c, with
// c = 1.5 * 2^(e + 16) for x's exponent e, leaves x at the nearest multiple of 2^(e - 7), ties to
// even (x + c lies in [2^(e + 16), 2^(e + 17)) for either sign, and c is an even multiple of that
// step), in 4 instructions and a shared check on the same exponents. Any other block (zeros,
// subnormals, huge values, infinities, NaN) takes the integer steps.
template <class V>
inline void round_bf16_x4(V* v) {  // v[0..4)
#if defined(__AVX2__) && !defined(__AVX512F__)
  if constexpr (sizeof(V) == 32) {
    __m256i exponent[4];
    for (int k = 0; k < 4; ++k)
      exponent[k] = _mm256_and_si256(_mm256_castps_si256(v[k]), _mm256_set1_epi32(0x7F800000));
    const __m256i least = _mm256_min_epi32(_mm256_min_epi32(exponent[0], exponent[1]),
                                           _mm256_min_epi32(exponent[2], exponent[3]));
    const __m256i most = _mm256_max_epi32(_mm256_max_epi32(exponent[0], exponent[1]),
                                          _mm256_max_epi32(exponent[2], exponent[3]));
    const __m256i outside = _mm256_or_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(0x00800000), least),
                                            _mm256_cmpgt_epi32(most, _mm256_set1_epi32(0x77000000)));
    if (_mm256_testz_si256(outside, outside)) {
      for (int k = 0; k < 4; ++k) {
        // c: x's exponent field plus 16 (16 << 23), significand 1.5 (0x00400000)
        const __m256 c = _mm256_castsi256_ps(_mm256_add_epi32(exponent[k], _mm256_set1_epi32(0x08400000)));
        v[k] = _mm256_sub_ps(_mm256_add_ps(v[k], c), c);
      }
      return;
    }
  }
#endif
  for (int k = 0; k < 4; ++k) v[k] = round_bf16(v[k]);
}

// N vectors rounded in place: four at a time (round_bf16_x4), then one by one.
template <int N, class V>
inline void round_bf16_each(V* v) {
  int k = 0;
  for (; k + 4 <= N; k += 4) round_bf16_x4(v + k);
  for (; k < N; ++k) v[k] = round_bf16(v[k]);
}

// by_vectors in blocks: block(j) for each run of four whole vectors (for round_bf16_x4), then
// body(j, lanes) for the vectors left.
template <class Block, class Body>
inline void by_blocks_of_4(int64_t n, const Block& block, const Body& body) {
  int64_t j = 0;
  for (; j + 4 * kLanes <= n; j += 4 * kLanes) block(j);
  for (; j + kLanes <= n; j += kLanes) body(j, kLanes);
  if (j < n) body(j, static_cast<int>(n - j));
}

// out[0..n) = x[0..n) rounded to bfloat16 (out may be x).
inline void round_bf16(const float* x, int64_t n, float* out) {
  by_blocks_of_4(
      n,
      [x, out](int64_t j) {
        vfloat v[4];
        for (int k = 0; k < 4; ++k) v[k] = load(x + j + k * kLanes);
        round_bf16_x4(v);
        for (int k = 0; k < 4; ++k) store(out + j + k * kLanes, v[k]);
      },
      [x, out](int64_t j, int lanes) { store_n(out + j, round_bf16(load_n(x + j, lanes)), lanes); });
}

// Columns of a register tile and of a packed B panel: two vectors.
constexpr int NR = 2 * kLanes;

}  // namespace tinygpt::simd
