#pragma once
// What a benchmark figure means depends on the machine: its CPU, the vector instructions the
// kernels were compiled for, and the floating-point peak one core reaches.
#include <cstdint>
#include <string>

namespace tinygpt {

std::string cpu_model();    // /proc/cpuinfo's "model name", or "unknown"
const char* vector_path();  // "avx512", "avx2" or "generic" (the kernels' build, simd.h)
// One core's peak GFLOP/s: 12 independent FMA chains in registers, no memory traffic (~0.05 s).
double fma_peak_gflops();
// Physical memory, or the cgroup's limit when that is lower (a container's share).
int64_t machine_memory_bytes();

}  // namespace tinygpt
