#include "tinygpt/train/memory_budget.h"

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

double training_bytes(const nn::GPTConfig& c, int64_t batch, AttentionMemory attention) {
  const double B = static_cast<double>(batch), T = static_cast<double>(c.block_size),
               C = static_cast<double>(c.n_embd);
  const bool tiled = attention_is_tiled(attention, c.block_size);
  const double per_block = 16 * B * T * C + (tiled ? 0.0 : B * static_cast<double>(c.n_head) * T * T);
  const double activations = static_cast<double>(c.n_layer) * per_block + 3 * B * T * C +
                             2 * B * T * static_cast<double>(c.vocab_size);
  return 4.0 * (4.0 * parameter_count(c) + activations);
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
