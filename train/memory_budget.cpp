#include "memory_budget.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace tinygpt::train {

namespace {

double parameter_count(const nn::GPTConfig& c) {
  double n = 0;
  for (const auto& [name, shape] : nn::parameter_shapes(c)) {
    double elements = 1;
    for (int64_t d : shape) elements *= static_cast<double>(d);
    n += elements;
  }
  return n;
}

}  // namespace

MemoryPlan training_memory_plan(const nn::GPTConfig& c, const RunShape& run) {
  constexpr double kRuntimeBytes = 32e6;  // the process: code, libraries, thread stacks, allocator
  const double P = parameter_count(c), T = static_cast<double>(c.block_size), C = static_cast<double>(c.n_embd);
  const bool tiled = attention_is_tiled(run.attention, c.block_size);
  const double per_block = 24 * T * C + (tiled ? 0.0 : static_cast<double>(c.n_head) * T * T);
  MemoryPlan plan{.weights = 4 * P, .gradients = 4 * P, .moments = 8 * P, .checkpoint = 12 * P};
  plan.per_sequence = 4 * (static_cast<double>(c.n_layer) * per_block + 2 * T * static_cast<double>(c.vocab_size));
  plan.batch = run.batch;
  // The generator's keys and values for every layer and position, and a row of logits.
  const double kv = static_cast<double>(c.kv_heads() * c.head_size());
  plan.sampling = run.samples ? 4 * (2 * static_cast<double>(c.n_layer) * T * kv + static_cast<double>(c.vocab_size)) : 0;
  plan.data = run.data_bytes, plan.runtime = kRuntimeBytes;
  return plan;
}

double training_bytes(const nn::GPTConfig& c, int64_t batch, AttentionMemory attention) {
  return training_memory_plan(c, {.batch = batch, .attention = attention}).total();
}

int64_t largest_batch(const MemoryPlan& plan, double machine_bytes) {
  const double fixed = plan.total() - plan.activations();
  if (plan.per_sequence <= 0 || machine_bytes <= fixed) return 0;
  return static_cast<int64_t>(std::min((machine_bytes - fixed) / plan.per_sequence, 9e18));
}

std::string describe(const MemoryPlan& p, double machine_bytes) {
  auto mb = [](double bytes) { return fmt::format("{:.1f} MB", bytes / 1e6); };
  std::string text = fmt::format(
      "about {} at peak: weights {}, gradients {}, AdamW moments {}, checkpoint {}, activations {} ({} sequences)",
      mb(p.total()), mb(p.weights), mb(p.gradients), mb(p.moments), mb(p.checkpoint), mb(p.activations()), p.batch);
  if (p.sampling > 0) text += ", sampling cache " + mb(p.sampling);
  if (p.task > 0) text += ", eval task " + mb(p.task);
  text += fmt::format(", data {}, the process {}", mb(p.data), mb(p.runtime));
  return text + fmt::format("; micro-batches up to {} fit this machine's {:.1f} GB", largest_batch(p, machine_bytes),
                            machine_bytes / 1e9);
}

double corpus_bytes(const std::vector<std::string>& files) {
  double bytes = 0;
  for (const std::string& f : files) {
    std::error_code ec;  // a file that cannot be read is reported when it is read
    const auto size = std::filesystem::file_size(f, ec);
    if (!ec) bytes += 5.0 * static_cast<double>(size);
  }
  return bytes;
}

double inference_bytes(const nn::GPTConfig& c, int64_t batch) {
  const double B = static_cast<double>(batch), T = static_cast<double>(c.block_size),
               C = static_cast<double>(c.n_embd);
  const double widest = std::max(8 * B * T * C + B * static_cast<double>(c.n_head) * T * T,
                                 2 * B * T * static_cast<double>(c.vocab_size));  // a block, or the logits
  return 4.0 * (parameter_count(c) + widest);
}

void require_memory(double bytes, const std::string& what) {
  const double machine = static_cast<double>(machine_memory_bytes());
  if (bytes > machine)
    throw std::invalid_argument(fmt::format("{} needs about {:.1f} GB of memory, more than this machine's {:.1f} GB",
                                            what, bytes / 1e9, machine / 1e9));
}

}  // namespace tinygpt::train
