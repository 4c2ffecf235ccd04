#include "tinygpt/autograd/precision.h"

#include <fmt/format.h>

#include <stdexcept>

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

Precision matmul_precision() { return g_precision; }
PrecisionGuard::PrecisionGuard(Precision precision) : previous_(g_precision) { g_precision = precision; }
PrecisionGuard::~PrecisionGuard() { g_precision = previous_; }

}  // namespace tinygpt
