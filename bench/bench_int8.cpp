// int8 weights against fp32 on a trained checkpoint: the eval loss of each group size (the
// evaluation rule, docs/checkpoint-format.md) and its greedy sampling speed with the key/value
// cache, 1 and 2 threads, the float model timed before and after each (same machine, same run).
//   bench_int8 --ckpt C --data TEXT [--groups 32,64,128,256] [--tokens 128]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <sstream>
#include <string>
#include <vector>

#include "tinygpt/autograd/machine.h"
#include "tinygpt/autograd/threads.h"
#include "tinygpt/nn/sampling.h"
#include "tinygpt/train/checkpoint.h"
#include "tinygpt/train/evaluate.h"
#include "tinygpt/train/run_data.h"
#include "flags.h"
#include "sampling_rate.h"

using namespace tinygpt;

int main(int argc, char** argv) try {
  int64_t tokens = 128;
  std::string ckpt, data_file, group_list = "32,64,128,256";
  CLI::App app("int8 weights against fp32: eval loss and sampling speed per group size", "bench_int8");
  app.add_option("--ckpt", ckpt, "a trained checkpoint")->required();
  app.add_option("--data", data_file, "the text to score")->required();
  app.add_option("--groups", group_list, "int8 group sizes, comma-separated")->capture_default_str();
  bench::add_integer(app, "--tokens", tokens, {1, 1 << 16}, "tokens sampled");
  bench::parse_flags(app, argc, argv);
  std::vector<int64_t> groups;
  std::stringstream list(group_list);
  for (std::string g; std::getline(list, g, ',');) groups.push_back(io::parse_number<int64_t>("--groups", g, io::Range{32, 4096}));
  const auto load = [&] { return train::read_checkpoint(ckpt, train::CheckpointPart::weights); };
  train::Checkpoint fp32 = load();
  const data::TokenArray text = train::tokens_to_score({data_file}, "val", *fp32.tokenizer, "the checkpoint");
  const double fp32_loss = train::evaluate(*fp32.model, text).loss;
  const nn::GPTConfig& c = fp32.config;
  fmt::print("machine: {}, vector path {}\nmodel: {} layers, {} heads, n_embd {}, block {}, vocab {}; {} tokens scored\n",
             cpu_model(), vector_path(), c.n_layer, c.n_head, c.n_embd, c.block_size, c.vocab_size, text.size() - 1);
  fmt::print("fp32: eval loss {:.6f}\n", fp32_loss);
  for (const int64_t group : groups) {
    train::Checkpoint int8 = load();
    const auto t0 = std::chrono::steady_clock::now();
    int8.model->use_int8_weights(group);
    const double quantize_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double loss = train::evaluate(*int8.model, text).loss;
    fmt::print("int8, groups of {}: eval loss {:.6f} ({:+.6f}; quantized in {:.3f} s)", group, loss, loss - fp32_loss, quantize_s);
    for (int threads : {1, 2}) {
      set_num_threads(threads);
      const double before = bench::sampling_rate(*fp32.model, {}, tokens), rate = bench::sampling_rate(*int8.model, {}, tokens),
                   after = bench::sampling_rate(*fp32.model, {}, tokens);
      fmt::print("; {} thread{}: {:.1f} tokens/s = {:.2f}x fp32", threads, threads == 1 ? "" : "s", rate,
                 rate / std::max(before, after));
    }
    set_num_threads(0);
    fmt::print("\n");
  }
} catch (const std::exception& e) {
  fmt::print(stderr, "bench_int8: {}\n", e.what());
  return 2;
}
