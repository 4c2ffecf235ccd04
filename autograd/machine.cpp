#include "machine.h"

#include <algorithm>
#include <atomic>

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <string_view>
#include <cstdio>
#include <fstream>

#include "kernels/simd.h"

namespace tinygpt {

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
      const size_t start = line.find_first_not_of(" \t", line.find(':') + 1);
      return start == std::string::npos ? "unknown" : line.substr(start);
    }
  return "unknown";
}

namespace {
std::atomic<bool> g_avx2_fma_copies{true};  // a process setting, like the thread count
}  // namespace

void set_avx2_fma_copies(bool allowed) { g_avx2_fma_copies = allowed; }

#if defined(TINYGPT_FMA_AT_RUN_TIME)
bool simd::cpu_has_avx2_fma() {
  // TINYGPT_AVX2_FMA=off: the plain copies, as on a CPU without FMA (scripts/variants.sh).
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                          std::string_view(std::getenv("TINYGPT_AVX2_FMA") ? std::getenv("TINYGPT_AVX2_FMA") : "") != "off";
  return has && g_avx2_fma_copies.load(std::memory_order_relaxed);
}
#endif

const char* vector_path() {
#if defined(__AVX512F__)
  return "avx512";
#elif defined(__AVX2__) && defined(__FMA__)
  return "avx2";
#elif defined(TINYGPT_FMA_AT_RUN_TIME)
  return simd::cpu_has_avx2_fma() ? "generic, avx2+fma kernels" : "generic";
#else
  return "generic";
#endif
}

double fma_peak_gflops() {
  using namespace simd;
  const float start = 1e-3f, scale = 0.9999f, shift = 1e-7f;
  constexpr long kRounds = 1'000'000;
  constexpr int kTimings = 5;  // the fastest of several: a busy moment or a clock ramping up reads slow
  float sink = 0;
  double seconds = INFINITY;
  fused([&] {
    vfloat acc[12];
    for (vfloat& a : acc) a = broadcast(&start);
    const vfloat a = broadcast(&scale), b = broadcast(&shift);
    for (int t = 0; t < kTimings; ++t) {
      const auto t0 = std::chrono::steady_clock::now();
      for (long r = 0; r < kRounds; ++r)
#pragma GCC unroll 12
        for (vfloat& x : acc) x = fma(a, x, b);
      seconds = std::min(seconds, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    float lanes[kLanes];
    for (vfloat& x : acc) store(lanes, x), sink += lanes[0];
  });
  if (sink == 42.0f) std::puts("");  // the chains' results are used
  return 12.0 * kLanes * 2.0 * static_cast<double>(kRounds) / seconds / 1e9;
}

namespace {

// cgroup v2 (memory.max) or v1 (memory.limit_in_bytes) limit of this process; 0 when none.
int64_t cgroup_limit() {
  for (const char* path : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    std::ifstream in(path);
    int64_t bytes = 0;
    if (in >> bytes && bytes > 0) return bytes;  // "max" does not parse: no limit
  }
  return 0;
}

}  // namespace

int64_t machine_memory_bytes() {
  const int64_t physical = static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  const int64_t limit = cgroup_limit();
  return limit > 0 ? std::min(physical, limit) : physical;
}

}  // namespace tinygpt
