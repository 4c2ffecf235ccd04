#pragma once
// What a benchmark figure means depends on the machine: its CPU, the vector instructions the
// kernels were compiled for, and the floating-point peak one core reaches.
#include <cstdint>
#include <string>

namespace tinygpt {

std::string cpu_model();    // /proc/cpuinfo's "model name", or "unknown"
// The kernels' build (simd.h): "avx512", "avx2", or the portable build's "generic", which runs
// AVX2+FMA copies of its kernels where the CPU has them: "generic, avx2+fma kernels".
const char* vector_path();
// The portable build's choice of kernel copies (simd.h, fused), a process setting like the thread
// count: its AVX2+FMA copies where the CPU has them (true, the default), or its plain copies
// everywhere (false; tests check both compute the same bits). No effect in other builds. The
// environment variable TINYGPT_AVX2_FMA=off starts a process with the plain copies.
void set_avx2_fma_copies(bool allowed);
// One core's peak GFLOP/s: 12 independent FMA chains in registers, no memory traffic; the
// fastest of 5 timings (~0.05 s in all).
double fma_peak_gflops();
// Physical memory, or the cgroup's limit when that is lower (a container's share).
int64_t machine_memory_bytes();

}  // namespace tinygpt
