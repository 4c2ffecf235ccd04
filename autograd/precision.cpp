#include "precision.h"

#include <fmt/format.h>

#include <stdexcept>

#include "detail/bf16_operands.h"
#include "kernels/simd.h"

namespace tinygpt {

namespace {
thread_local Precision g_precision = Precision::fp32;  // per thread, like the no-grad flag
}

const char* to_string(Precision precision) { return precision == Precision::bf16 ? "bf16" : "fp32"; }

Precision parse_precision(std::string_view text) {
  if (text == "fp32") return Precision::fp32;
  if (text == "bf16") return Precision::bf16;
  throw std::invalid_argument(fmt::format("precision '{}' is not fp32 or bf16", text));
}

const char* name(Precision precision) { return precision == Precision::bf16 ? "bf16" : "fp32"; }

Precision matmul_precision() { return g_precision; }
PrecisionGuard::PrecisionGuard(Precision precision) : previous_(g_precision) { g_precision = precision; }
PrecisionGuard::~PrecisionGuard() { g_precision = previous_; }

namespace detail {

bool stores_rounded(Readers readers) {
  return readers == Readers::products && matmul_precision() == Precision::bf16 && !bf16_native();
}

void round_in_place(float* x, int64_t n) { simd::round_bf16(x, n, x); }

void mark_bf16_exact(const Tensor& t) { t.impl()->storage->bf16_exact_version = t.version(); }

bool bf16_exact(const Tensor& t) { return t.impl()->storage->bf16_exact_version == t.version(); }

}  // namespace detail

}  // namespace tinygpt
