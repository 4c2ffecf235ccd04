#pragma once
// `tinygpt bench`: full training steps (forward, backward, clipping, AdamW) on random tokens, with
// where the time goes and how close it comes to the machine's peak.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "../autograd/precision.h"
#include "../nn/gpt.h"
#include "../train/distributed.h"
#include "../train/options.h"

namespace tinygpt::cli {

// What run_benchmark accepts (threads: kThreadRange).
inline constexpr io::Range kBenchBatchRange{1, 65536}, kBenchStepsRange{1, 1e6}, kBenchWarmupRange{0, 1e6};

struct BenchOptions {
  nn::GPTConfig config;
  int64_t batch = 12, steps = 20, warmup = 3, threads = 0;
  AttentionMemory attention = AttentionMemory::automatic;
  // Of the matrix products (autograd/precision.h). Several: the same model's steps run in each in
  // turn, so that every precision is timed over the same minutes of a host whose speed drifts.
  std::vector<Precision> precisions = {Precision::fp32};
};

struct BenchResult {
  Precision precision = Precision::fp32;
  int64_t parameters = 0;
  double tokens_per_s = 0, ms_per_step = 0;     // medians over the timed steps
  double flops_per_token = 0, gflops = 0;       // nanoGPT's estimate: 6 N + 12 L T C per token
  double peak_gflops = 0, share_of_peak = 0;    // peak: our GEMM on a 1024^3 product, same threads and precision
  double peak_rss_mb = 0, formula_mb = 0;       // formula: parameters, gradients, 2 moments, activations
  int ranks = 1;
  std::map<std::string, double> phase_ms;       // forward, backward, optimizer, zero-grad (per step)
  std::map<std::string, double> family_ms;      // matmul, attention, ... (per step)
  std::vector<double> step_ms;                  // each timed step, in order
};

// One result per precision, in the options' order. Under mpirun every rank runs the steps on its
// own random tokens and the gradients are averaged after backward (phase "allreduce"); tokens/s
// counts all ranks' tokens.
std::vector<BenchResult> run_benchmark(const BenchOptions& options, const train::Communicator& comm = train::Communicator::single());

// How many times faster `other`'s steps ran than `base`'s: the median over their timed steps, the
// s-th of each side by side, of base's time over other's (steps run in turn are minutes apart at
// most, where separate runs' medians can fall in different phases of a shared host).
double step_speedup(const BenchResult& base, const BenchResult& other);

}  // namespace tinygpt::cli
