#pragma once
// How much memory a run needs, estimated from its shapes before anything is allocated, against
// how much the machine has: a run that cannot fit is refused up front with both figures.
#include <cstdint>
#include <string>
#include <vector>

#include "../autograd/machine.h"
#include "../autograd/ops.h"
#include "../nn/gpt.h"

namespace tinygpt::train {

// What a training run holds at its peak, from its shapes, before anything is allocated. The
// constants are fitted to measured peak RSS (docs/watching-a-run.md): per parameter its weight,
// gradient, two AdamW moments and its share of the checkpoint, which is built in memory before it
// is written (weights and moments, 12 bytes); per sequence of a micro-batch what the graph keeps
// for backward, 24 T C floats a block (and the nh T T attention weights unless attention is
// tiled) and the logits with their gradient, 2 T V; the cache of --sample-every's samples; the
// token arrays; the process itself.
struct MemoryPlan {
  double weights = 0, gradients = 0, moments = 0, checkpoint = 0;  // bytes
  double per_sequence = 0;                                           // activations of one sequence
  int64_t batch = 0;
  double sampling = 0, data = 0, runtime = 0;
  double task = 0;  // --eval-task's examples and rows (multiple_choice.h), once they are read
  double activations() const { return per_sequence * static_cast<double>(batch); }
  double total() const {
    return weights + gradients + moments + checkpoint + activations() + sampling + data + runtime + task;
  }
};
struct RunShape {
  int64_t batch = 1;
  AttentionMemory attention = AttentionMemory::automatic;
  bool samples = false;   // --sample-every: a key/value cache
  double data_bytes = 0;  // the token arrays (corpus_bytes)
};
MemoryPlan training_memory_plan(const nn::GPTConfig& config, const RunShape& run);
double training_bytes(const nn::GPTConfig& config, int64_t batch, AttentionMemory attention);  // the plan's total
// The largest micro-batch whose plan fits in `machine_bytes` (0: not even one sequence).
int64_t largest_batch(const MemoryPlan& plan, double machine_bytes);
// "about 412.0 MB at peak: weights 3.2 MB, gradients 3.2 MB, AdamW moments 6.5 MB, checkpoint 9.7 MB,
// activations 310.5 MB (12 sequences), ...; micro-batches up to 880 fit this machine's 23.4 GB"
std::string describe(const MemoryPlan& plan, double machine_bytes);
// Reading text files into token arrays: at most one token per byte, 4 bytes per token, and a
// whole file at once when it cannot be cut into blocks.
double corpus_bytes(const std::vector<std::string>& files);
// Evaluation of `batch` windows without gradients: parameters and the largest activations alive.
double inference_bytes(const nn::GPTConfig& config, int64_t batch);

// Throws "<what> needs about 70.3 GB, more than this machine's 23.4 GB (...)" when bytes exceed
// the machine's memory.
void require_memory(double bytes, const std::string& what);

}  // namespace tinygpt::train
