#pragma once
// The arithmetic of matrix products. fp32: operands and sums in float. bf16 (mixed precision): each
// operand is rounded to bfloat16 (float's 8-bit exponent, 8-bit significand; round to nearest even)
// as it is packed for the kernel, and the products are summed in float. Everything else (weights,
// gradients, optimizer state, LayerNorm, softmax, GELU, the loss) stays float in both.
#include <bit>
#include <cstdint>
#include <string>
#include <string_view>

namespace tinygpt {

enum class Precision { fp32, bf16 };
const char* to_string(Precision precision);          // "fp32" or "bf16"
Precision parse_precision(std::string_view text);    // throws on anything else, naming it
const char* name(Precision precision);               // "fp32", "bf16"

// The precision of the products (matmul, linear, and the attention heads' Q·Kᵀ and weights·V)
// that this thread computes; fp32 unless a PrecisionGuard says otherwise. A product's backward
// uses the precision of its forward.
Precision matmul_precision();
class PrecisionGuard {
 public:
  explicit PrecisionGuard(Precision precision);
  ~PrecisionGuard();
  PrecisionGuard(const PrecisionGuard&) = delete;
  PrecisionGuard& operator=(const PrecisionGuard&) = delete;

 private:
  Precision previous_;
};

// x rounded to the nearest bfloat16 (ties to even), as a float whose low 16 bits are 0, the way
// AVX512_BF16's vcvtneps2bf16 rounds, so that every bf16 path multiplies the same operands: NaN
// stays NaN; values beyond bfloat16's largest finite round to infinity; subnormals become zero
// of their sign.
inline float round_to_bf16(float x) {
  const uint32_t u = std::bit_cast<uint32_t>(x);
  const uint32_t rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u;
  const uint32_t quiet_nan = (u | 0x00400000u) & 0xFFFF0000u;
  const uint32_t signed_zero = u & 0x80000000u;
  // Selects, not branches: loops of it vectorize.
  const uint32_t finite = (u & 0x7F800000u) == 0 ? signed_zero : rounded;
  return std::bit_cast<float>((u & 0x7FFFFFFFu) > 0x7F800000u ? quiet_nan : finite);
}

// Whether this CPU has AVX512_BF16 (vdpbf16ps) and the build can use it.
bool bf16_instructions();

// Whether bf16 products run on the native kernels (kernels/gemm_bf16.cpp) rather than on the float
// kernels with operands rounded to bfloat16 as they are packed. Both compute the same products, but
// the native instruction (vdpbf16ps) adds pairs of products in its own order, so its sums may
// differ in the last bits, and only CPUs with AVX512_BF16 have it: the rounded kernels, the
// default, give the same bits on every machine; the native ones are a choice (Bf16Kernels).
bool bf16_native();

// Which kernels bf16 products run on, for the whole process: rounded (the default: the same bits
// everywhere), native (vdpbf16ps: throws where the CPU lacks it), or measured: native where it
// runs clearly faster than the float kernels here (vdpbf16ps runs at twice the FMA rate on some CPUs
// and at half on others, so the flags cannot tell: on the first call each kind multiplies the same
// 384³ product, a few milliseconds, and native needs 1.15x; kernels/bf16_choice.cpp), so the result
// depends on the machine's timing. Set it before products run, not while they do, as the thread count.
enum class Bf16Kernels { rounded, native, measured };
const char* name(Bf16Kernels kernels);             // "rounded", "native" or "measured"
Bf16Kernels parse_bf16_kernels(std::string_view text);  // throws on anything else, naming it
// Throws for `native` where the CPU or the build lacks AVX512_BF16.
void set_bf16_kernels(Bf16Kernels kernels);
Bf16Kernels bf16_kernels();
// That measurement: the native kernels' rate over the float kernels' (0 without the instructions).
double bf16_native_speedup();
// One line on which kernels bf16 products use here and why ("native AVX512_BF16: 1.93x the float
// kernels' rate here", "float kernels on rounded operands: vdpbf16ps ran at 0.52x ...").
std::string bf16_kernels_note();

}  // namespace tinygpt
