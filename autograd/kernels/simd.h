#pragma once
// The SIMD vocabulary of the hand-tiled kernels (gemm, small_gemm): one register of floats and the
// few operations they need. AVX-512 or AVX2+FMA intrinsics where the build targets them, GCC's
// portable vector extension elsewhere.
#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace tinygpt::simd {

// One SIMD register of floats: AVX-512, AVX2+FMA, or GCC's portable vector extension elsewhere.
#if defined(__AVX512F__)
constexpr int kLanes = 16, MR = 12;  // gemm: 24 accumulators of 32 registers
using vfloat = __m512;
inline vfloat zero() { return _mm512_setzero_ps(); }
inline vfloat broadcast(const float* p) { return _mm512_set1_ps(*p); }
inline vfloat load_aligned(const float* p) { return _mm512_load_ps(p); }
inline vfloat load(const float* p) { return _mm512_loadu_ps(p); }
inline void store(float* p, vfloat v) { _mm512_storeu_ps(p, v); }
inline vfloat fma(vfloat a, vfloat b, vfloat c) { return _mm512_fmadd_ps(a, b, c); }
#elif defined(__AVX2__) && defined(__FMA__)
constexpr int kLanes = 8, MR = 6;  // gemm: 12 accumulators of 16 registers
using vfloat = __m256;
inline vfloat zero() { return _mm256_setzero_ps(); }
inline vfloat broadcast(const float* p) { return _mm256_broadcast_ss(p); }
inline vfloat load_aligned(const float* p) { return _mm256_load_ps(p); }
inline vfloat load(const float* p) { return _mm256_loadu_ps(p); }
inline void store(float* p, vfloat v) { _mm256_storeu_ps(p, v); }
inline vfloat fma(vfloat a, vfloat b, vfloat c) { return _mm256_fmadd_ps(a, b, c); }
#else
constexpr int kLanes = 4, MR = 6;
typedef float vfloat __attribute__((vector_size(16)));
typedef float vfloat_unaligned __attribute__((vector_size(16), aligned(4)));
inline vfloat zero() { return vfloat{0, 0, 0, 0}; }
inline vfloat broadcast(const float* p) { return vfloat{*p, *p, *p, *p}; }
inline vfloat load_aligned(const float* p) { return *reinterpret_cast<const vfloat*>(p); }
inline vfloat load(const float* p) { return *reinterpret_cast<const vfloat_unaligned*>(p); }
inline void store(float* p, vfloat v) { *reinterpret_cast<vfloat_unaligned*>(p) = v; }
inline vfloat fma(vfloat a, vfloat b, vfloat c) { return a * b + c; }
#endif
inline vfloat add(vfloat a, vfloat b) { return a + b; }

}  // namespace tinygpt::simd
