// tinygpt bench: training-step throughput on random tokens, and where the time goes.
#include <fmt/format.h>

#include <memory>
#include <vector>

#include "tinygpt/autograd/machine.h"
#include "tinygpt/data/json.h"
#include "tinygpt/train/benchmark.h"
#include "tinygpt/train/cli/commands.h"
#include "tinygpt/train/cli/flags.h"

namespace tinygpt::cli {

void add_bench(CLI::App& app) {
  auto o = std::make_shared<train::BenchOptions>();
  auto json = std::make_shared<bool>(false);
  o->config = {.vocab_size = 65, .block_size = 64, .n_layer = 4, .n_head = 4, .n_embd = 128};
  CLI::App* cmd = app.add_subcommand("bench", "time full training steps (forward, backward, clip, AdamW) on random tokens");
  add_number(cmd, "--layers", o->config.n_layer, train::Range{1, double(nn::kMaxLayers)}, "transformer blocks");
  add_number(cmd, "--heads", o->config.n_head, train::Range{1, double(nn::kMaxHeads)}, "attention heads");
  add_number(cmd, "--embd", o->config.n_embd, train::Range{1, double(nn::kMaxEmbd)}, "embedding width");
  add_number(cmd, "--block", o->config.block_size, train::Range{1, double(nn::kMaxBlock)}, "context length");
  add_number(cmd, "--batch", o->batch, train::Range{1, 65536}, "sequences per step");
  add_number(cmd, "--vocab", o->config.vocab_size, train::Range{1, double(nn::kMaxVocab)}, "vocabulary size");
  add_number(cmd, "--steps", o->steps, train::Range{1, 1e6}, "timed steps (after 3 warm-up steps)");
  add_number(cmd, "--threads", o->threads, train::kThreadRange, "worker threads (0: all cores)");
  auto attention = std::make_shared<std::string>("auto");
  cmd->add_option("--attention", *attention,
                  "what attention keeps for backward: auto (tiled from block 512 on), weights, tiled")
      ->check(CLI::IsMember({"auto", "weights", "tiled"}))
      ->capture_default_str();
  auto precision = std::make_shared<std::string>("fp32");
  cmd->add_option("--precision", *precision, "matrix products in fp32, or bf16 (operands rounded to bfloat16, sums in float)")
      ->check(CLI::IsMember({"fp32", "bf16"}))
      ->capture_default_str();
  cmd->add_flag("--json", *json, "print one JSON object");
  cmd->callback([o, json, attention, precision] {
    o->precision = parse_precision(*precision);
    o->attention = *attention == "tiled"     ? AttentionMemory::tiled
                   : *attention == "weights" ? AttentionMemory::weights
                                             : AttentionMemory::automatic;
    const auto comm = train::Communicator::world();
    const train::BenchResult r = train::run_benchmark(*o, comm);
    if (!comm.is_root()) return;
    const std::string cpu = cpu_model();
    const double fma_peak = fma_peak_gflops();
    if (*json) {
      fmt::print("{{\"cpu\": {}, \"vector_path\": \"{}\", \"fma_peak_gflops_per_core\": {:.1f}, "
                 "\"tokens_per_s\": {:.1f}, \"ms_per_step\": {:.3f}, \"gflops\": {:.2f}, \"peak_gflops\": {:.2f}, "
                 "\"share_of_peak\": {:.4f}, \"peak_rss_mb\": {:.1f}, \"formula_mb\": {:.1f}, \"parameters\": {}, "
                 "\"ranks\": {}, \"allreduce_ms\": {:.3f}, \"precision\": \"{}\", \"bf16_kernels\": \"{}\"}}\n",
                 data::json::quote(cpu), vector_path(), fma_peak, r.tokens_per_s, r.ms_per_step, r.gflops, r.peak_gflops, r.share_of_peak, r.peak_rss_mb,
                 r.formula_mb, r.parameters, r.ranks, r.phase_ms.at("allreduce"), to_string(o->precision),
                 bf16_native() ? "native" : "portable");
      return;
    }
    const nn::GPTConfig& c = o->config;
    fmt::print("machine    {}, vector path {}, one core's FMA peak {:.1f} GFLOP/s\n", cpu, vector_path(), fma_peak);
    fmt::print("model      {} layers, {} heads, {} embd, block {}, vocab {}; batch {}; {} parameters; {} products{}\n",
               c.n_layer, c.n_head, c.n_embd, c.block_size, c.vocab_size, o->batch, r.parameters,
               to_string(o->precision),
               o->precision == Precision::bf16 ? bf16_native() ? " (native AVX512_BF16)" : " (portable)" : "");
    if (r.ranks > 1)
      fmt::print("ranks      {} (MPI), each batch {}; averaging the gradients: {:.1f}% of a step (waiting for the "
                 "slowest rank first: {:.1f}%)\n",
                 r.ranks, o->batch, 100 * r.phase_ms.at("allreduce") / r.ms_per_step,
                 100 * r.phase_ms.at("rank-wait") / r.ms_per_step);
    fmt::print("throughput {:.0f} tokens/s, {:.2f} ms/step (median of {} steps)\n", r.tokens_per_s, r.ms_per_step,
               o->steps);
    fmt::print("compute    {:.1f} GFLOP/s = {:.0f}% of the peak {:.1f} GFLOP/s (our {} GEMM, 1024^3)\n", r.gflops,
               100 * r.share_of_peak, r.peak_gflops, to_string(o->precision));
    fmt::print("memory     peak RSS {:.1f} MB; parameters + gradients + moments + activations by formula {:.1f} MB\n",
               r.peak_rss_mb, r.formula_mb);
    fmt::print("\n{:<14} {:>9}\n", "phase", "ms/step");
    std::vector<const char*> phases = {"forward", "backward", "optimizer", "zero-grad"};
    if (r.ranks > 1) phases.insert(phases.begin() + 2, {"rank-wait", "allreduce"});  // only MPI runs have them
    for (const char* p : phases) fmt::print("{:<14} {:>9.3f}\n", p, r.phase_ms.at(p));
    fmt::print("\n{:<14} {:>9} {:>7}\n", "op family", "ms/step", "share");
    double total = 0;
    for (auto& [f, ms] : r.family_ms) total += ms;
    for (auto& [f, ms] : r.family_ms) fmt::print("{:<14} {:>9.3f} {:>6.1f}%\n", f, ms, 100 * ms / total);
  });
}

}  // namespace tinygpt::cli
