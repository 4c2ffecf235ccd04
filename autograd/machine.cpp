#include "tinygpt/autograd/machine.h"

#include <algorithm>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>

#include "tinygpt/autograd/kernels/simd.h"

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

const char* vector_path() {
#if defined(__AVX512F__)
  return "avx512";
#elif defined(__AVX2__) && defined(__FMA__)
  return "avx2";
#else
  return "generic";
#endif
}

double fma_peak_gflops() {
  using namespace simd;
  const float start = 1e-3f, scale = 0.9999f, shift = 1e-7f;
  vfloat acc[12];
  for (vfloat& a : acc) a = broadcast(&start);
  const vfloat a = broadcast(&scale), b = broadcast(&shift);
  constexpr long kRounds = 5'000'000;
  const auto t0 = std::chrono::steady_clock::now();
  for (long r = 0; r < kRounds; ++r)
#pragma GCC unroll 12
    for (vfloat& x : acc) x = fma(a, x, b);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  float lanes[kLanes], sink = 0;
  for (vfloat& x : acc) store(lanes, x), sink += lanes[0];
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
