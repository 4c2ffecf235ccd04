#pragma once
// How much memory a run needs, estimated from its shapes before anything is allocated, against
// how much the machine has: a run that cannot fit is refused up front with both figures.
#include <cstdint>
#include <string>
#include <vector>

#include "tinygpt/autograd/machine.h"
#include "tinygpt/autograd/ops.h"
#include "tinygpt/nn/gpt.h"

namespace tinygpt::train {

// Training: parameters, gradients and both AdamW moments, plus what the graph keeps for backward
// per micro-batch of `batch` sequences (per block about 16 B T C floats, and the B nh T T attention
// weights unless attention is tiled; around the blocks 3 B T C, and the logits with their gradient,
// 2 B T V).
double training_bytes(const nn::GPTConfig& config, int64_t batch, AttentionMemory attention);
// Reading text files into token arrays: at most one token per byte, 4 bytes per token, and a
// whole file at once when it cannot be cut into blocks.
double corpus_bytes(const std::vector<std::string>& files);
// Evaluation of `batch` windows without gradients: parameters and the largest activations alive.
double inference_bytes(const nn::GPTConfig& config, int64_t batch);

// Throws "<what> needs about 70.3 GB, more than this machine's 23.4 GB (...)" when bytes exceed
// the machine's memory.
void require_memory(double bytes, const std::string& what);

}  // namespace tinygpt::train
