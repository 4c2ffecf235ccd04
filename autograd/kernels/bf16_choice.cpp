// Which kernels bf16 products run on: the float kernels on rounded operands unless asked otherwise
// (native AVX512_BF16 ones, or whichever measures faster here).
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <stdexcept>
#include <vector>

#include "gemm.h"
#include "../precision.h"

namespace tinygpt {

namespace {

// Native kernels must beat the float ones by this much: a margin over timing noise, so that a
// machine does not choose differently from one process to the next.
constexpr double kBf16NativeMargin = 1.15;
// The measured product: the size of a small model's Linear layers, a few milliseconds in all.
constexpr int64_t kProbeSize = 384;
constexpr int kProbeRounds = 3;

double seconds_of(const std::function<void()>& product) {
  double best = 1e30;
  for (int round = 0; round < kProbeRounds; ++round) {
    const auto t0 = std::chrono::steady_clock::now();
    product();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

double measure_speedup() {
  if (!bf16_instructions()) return 0.0;
  const int64_t n = kProbeSize;
  std::vector<float> a(n * n), b(n * n), c(n * n);
  for (int64_t i = 0; i < n * n; ++i) a[i] = static_cast<float>(i % 7) - 3.0f, b[i] = static_cast<float>(i % 5) - 2.0f;
  const MatrixView A{a.data(), n, 1}, B{b.data(), n, 1};
  const double native = seconds_of([&] { gemm_bf16_native(n, n, n, A, B, c.data(), n, false); });
  const double rounded = seconds_of([&] { gemm_bf16_portable(n, n, n, A, B, c.data(), n, false); });
  return rounded / native;
}

std::atomic<Bf16Kernels> g_kernels{Bf16Kernels::rounded};  // a process setting, like the thread count

}  // namespace

const char* name(Bf16Kernels kernels) {
  switch (kernels) {
    case Bf16Kernels::native: return "native";
    case Bf16Kernels::measured: return "measured";
    default: return "rounded";
  }
}

Bf16Kernels parse_bf16_kernels(std::string_view text) {
  for (Bf16Kernels k : {Bf16Kernels::rounded, Bf16Kernels::native, Bf16Kernels::measured})
    if (text == name(k)) return k;
  throw std::invalid_argument(fmt::format("bf16 kernels '{}' are not rounded, native or measured", text));
}

void set_bf16_kernels(Bf16Kernels kernels) {
  if (kernels == Bf16Kernels::native && !bf16_instructions())
    throw std::invalid_argument("bf16 kernels: native needs AVX512_BF16, which this CPU or build lacks");
  g_kernels = kernels;
}

Bf16Kernels bf16_kernels() { return g_kernels; }

double bf16_native_speedup() {
  static const double speedup = measure_speedup();
  return speedup;
}

bool bf16_native() {
  switch (g_kernels.load(std::memory_order_relaxed)) {
    case Bf16Kernels::native: return true;
    case Bf16Kernels::rounded: return false;
    default: return bf16_instructions() && bf16_native_speedup() >= kBf16NativeMargin;
  }
}

std::string bf16_kernels_note() {
  const std::string here = bf16_instructions()
                               ? fmt::format("AVX512_BF16 measured at {:.2f}x their rate here", bf16_native_speedup())
                               : std::string("this CPU has no AVX512_BF16");
  switch (g_kernels.load(std::memory_order_relaxed)) {
    case Bf16Kernels::rounded:
      return "float kernels on rounded operands (the same bits on every machine)";
    case Bf16Kernels::native:
      return fmt::format("native AVX512_BF16, as asked: {:.2f}x the float kernels' rate here", bf16_native_speedup());
    default:
      if (bf16_native()) return fmt::format("native AVX512_BF16, measured: {:.2f}x the float kernels' rate here", bf16_native_speedup());
      return fmt::format("float kernels on rounded operands, measured: {}", here);
  }
}

}  // namespace tinygpt
