// tinygpt bench: training-step throughput on random tokens, and where the time goes.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "../autograd/machine.h"
#include "../data/json.h"
#include "benchmark.h"
#include "commands.h"
#include "flags.h"

namespace tinygpt::cli {

namespace {

// One precision's figures as JSON members (no braces).
std::string json_members(const cli::BenchResult& r) {
  return fmt::format("\"tokens_per_s\": {:.1f}, \"ms_per_step\": {:.3f}, \"gflops\": {:.2f}, \"peak_gflops\": {:.2f}, "
                     "\"share_of_peak\": {:.4f}, \"allreduce_ms\": {:.3f}, \"precision\": \"{}\"",
                     r.tokens_per_s, r.ms_per_step, r.gflops, r.peak_gflops, r.share_of_peak, r.phase_ms.at("allreduce"),
                     to_string(r.precision));
}

// One object: the machine, then one precision's figures in place, or several under "runs" with
// bf16's step-by-step speed-up over fp32.
void print_json(const std::vector<cli::BenchResult>& runs) {
  const cli::BenchResult& r = runs.front();
  std::string figures = json_members(r);
  if (runs.size() > 1) {
    figures = "\"runs\": [";
    for (size_t i = 0; i < runs.size(); ++i) figures += fmt::format("{}{{{}}}", i ? ", " : "", json_members(runs[i]));
    figures += fmt::format("], \"bf16_speedup\": {:.4f}", cli::step_speedup(runs[0], runs[1]));
  }
  fmt::print("{{\"cpu\": {}, \"vector_path\": \"{}\", \"fma_peak_gflops_per_core\": {:.1f}, {}, \"bf16_kernels\": \"{}\", "
             "\"bf16_native_speedup\": {:.3f}, \"peak_rss_mb\": {:.1f}, \"formula_mb\": {:.1f}, \"parameters\": {}, \"ranks\": {}}}\n",
             data::json::quote(cpu_model()), vector_path(), fma_peak_gflops(), figures,
             bf16_native() ? "native" : "rounded", bf16_native_speedup(), r.peak_rss_mb, r.formula_mb, r.parameters,
             r.ranks);
}

// A table of per-step figures, one column per precision (and each figure's share of its column).
void print_table(const char* title, const std::vector<std::string>& rows, const std::vector<cli::BenchResult>& runs,
                 std::map<std::string, double> cli::BenchResult::*figures, bool shares) {
  fmt::print("\n{:<14}", title);
  for (const auto& r : runs) {
    fmt::print(" {:>14}", runs.size() > 1 ? fmt::format("{} ms/step", to_string(r.precision)) : "ms/step");
    if (shares) fmt::print(" {:>6}", "share");
  }
  fmt::print("\n");
  std::vector<double> totals;
  for (const auto& r : runs) {
    totals.push_back(0.0);
    for (const auto& [name, ms] : r.*figures) totals.back() += ms;
  }
  for (const std::string& row : rows) {
    fmt::print("{:<14}", row);
    for (size_t i = 0; i < runs.size(); ++i) {
      const auto& column = runs[i].*figures;
      const auto at = column.find(row);
      const double ms = at == column.end() ? 0.0 : at->second;
      fmt::print(" {:>14.3f}", ms);
      if (shares) fmt::print(" {:>5.1f}%", 100 * ms / totals[i]);
    }
    fmt::print("\n");
  }
}

void print_text(const cli::BenchOptions& o, const std::vector<cli::BenchResult>& runs) {
  const nn::GPTConfig& c = o.config;
  const cli::BenchResult& first = runs.front();
  std::string products;
  for (const auto& r : runs) products += fmt::format("{}{}", products.empty() ? "" : " and ", to_string(r.precision));
  const bool bf16 = std::any_of(runs.begin(), runs.end(), [](const auto& r) { return r.precision == Precision::bf16; });
  fmt::print("machine    {}, vector path {}, one core's FMA peak {:.1f} GFLOP/s\n", cpu_model(), vector_path(), fma_peak_gflops());
  fmt::print("model      {} layers, {} heads, {} embd, block {}, vocab {}; batch {}; {} parameters; {} products{}{}\n",
             c.n_layer, c.n_head, c.n_embd, c.block_size, c.vocab_size, o.batch, first.parameters, products,
             bf16 ? fmt::format(" ({})", bf16_kernels_note()) : "",
             runs.size() > 1 ? ", each step in turn" : "");
  if (first.ranks > 1)
    fmt::print("ranks      {} (MPI), each batch {}; averaging the gradients: {:.1f}% of a step (waiting for the "
               "slowest rank first: {:.1f}%)\n",
               first.ranks, o.batch, 100 * first.phase_ms.at("allreduce") / first.ms_per_step,
               100 * first.phase_ms.at("rank-wait") / first.ms_per_step);
  for (const auto& r : runs) {  // with several precisions, a line of each for each
    const std::string tag = runs.size() > 1 ? fmt::format("{} ", to_string(r.precision)) : "";
    fmt::print("throughput {}{:.0f} tokens/s, {:.2f} ms/step (median of {} steps)\n", tag, r.tokens_per_s, r.ms_per_step,
               o.steps);
    fmt::print("compute    {}{:.1f} GFLOP/s = {:.0f}% of the peak {:.1f} GFLOP/s (our {} GEMM, 1024^3)\n", tag, r.gflops,
               100 * r.share_of_peak, r.peak_gflops, to_string(r.precision));
  }
  if (runs.size() > 1)
    fmt::print("bf16       {:.2f}x the speed of fp32 (median over the {} pairs of steps run side by side)\n",
               cli::step_speedup(runs[0], runs[1]), o.steps);
  fmt::print("memory     peak RSS {:.1f} MB; parameters + gradients + moments + activations by formula {:.1f} MB\n",
             first.peak_rss_mb, first.formula_mb);
  std::vector<std::string> phases = {"forward", "backward", "optimizer", "zero-grad"};
  if (first.ranks > 1) phases.insert(phases.begin() + 2, {"rank-wait", "allreduce"});  // only MPI runs have them
  print_table("phase", phases, runs, &cli::BenchResult::phase_ms, false);
  std::vector<std::string> families;
  for (const auto& [family, ms] : first.family_ms) families.push_back(family);
  print_table("op family", families, runs, &cli::BenchResult::family_ms, true);
}

}  // namespace

void add_bench(CLI::App& app) {
  auto o = std::make_shared<cli::BenchOptions>();
  auto json = std::make_shared<bool>(false);
  o->config = {.vocab_size = 65, .block_size = 64, .n_layer = 4, .n_head = 4, .n_embd = 128};
  CLI::App* cmd = app.add_subcommand("bench", "time full training steps (forward, backward, clip, AdamW) on random tokens");
  add_number(cmd, "--layers", o->config.n_layer, io::Range{1, double(nn::kMaxLayers)}, "transformer blocks");
  add_number(cmd, "--heads", o->config.n_head, io::Range{1, double(nn::kMaxHeads)}, "attention heads");
  add_number(cmd, "--embd", o->config.n_embd, io::Range{1, double(nn::kMaxEmbd)}, "embedding width");
  add_number(cmd, "--block", o->config.block_size, io::Range{1, double(nn::kMaxBlock)}, "context length");
  add_number(cmd, "--batch", o->batch, cli::kBenchBatchRange, "sequences per step");
  add_number(cmd, "--vocab-size", o->config.vocab_size, io::Range{1, double(nn::kMaxVocab)}, "vocabulary size");
  add_number(cmd, "--iters", o->steps, cli::kBenchStepsRange, "timed training steps (after 3 warm-up steps)");
  add_number(cmd, "--threads", o->threads, train::kThreadRange, "worker threads (0: all cores)");
  auto arch = std::make_shared<train::ArchOptions>();
  add_arch_flags(cmd, *arch);
  auto attention = std::make_shared<std::string>("auto");
  cmd->add_option("--attention", *attention,
                  "what attention keeps for backward: auto (tiled from block 512 on), weights, tiled")
      ->check(CLI::IsMember({"auto", "weights", "tiled"}))
      ->capture_default_str();
  auto precision = std::make_shared<std::string>("fp32");
  cmd->add_option("--precision", *precision,
                  "matrix products in fp32, or bf16 (operands rounded to bfloat16, sums in float), or both: "
                  "each step in fp32 and in bf16 in turn, and bf16's speed-up step by step")
      ->check(CLI::IsMember({"fp32", "bf16", "both"}))
      ->capture_default_str();
  auto kernels = std::make_shared<std::string>("rounded");
  cmd->add_option("--bf16-kernels", *kernels,
                  "which kernels bf16 products run on: rounded (the float kernels on rounded operands, as train "
                  "runs by default), native (AVX512_BF16, as train --bf16-kernels native), or measured (native "
                  "only where it runs at 1.15x the float kernels here)")
      ->check(CLI::IsMember({"rounded", "native", "measured"}))
      ->capture_default_str();
  cmd->add_flag("--json", *json, "print one JSON object");
  auto weights = std::make_shared<nn::WeightFormat>(nn::WeightFormat::fp32);
  add_weights_flag(cmd, *weights);
  cmd->callback([o, json, attention, precision, kernels, arch, cmd, weights] {
    if (*weights == nn::WeightFormat::int8)
      throw std::invalid_argument("--weights int8: tinygpt bench times training steps, which update float weights; "
                                  "int8 weights are for sample and eval (bench/bench_gpt2 and bench/bench_int8 time them)");
    train::apply_arch(*arch, given_arch_flags(cmd));
    o->config = train::with_arch(o->config, *arch);
    set_bf16_kernels(parse_bf16_kernels(*kernels));
    o->precisions = *precision == "both" ? std::vector<Precision>{Precision::fp32, Precision::bf16}
                                         : std::vector<Precision>{parse_precision(*precision)};
    o->attention = *attention == "tiled"     ? AttentionMemory::tiled
                   : *attention == "weights" ? AttentionMemory::weights
                                             : AttentionMemory::automatic;
    const auto comm = train::Communicator::world();
    const std::vector<cli::BenchResult> runs = cli::run_benchmark(*o, comm);
    if (!comm.is_root()) return;
    if (*json) return print_json(runs);
    print_text(*o, runs);
  });
}

}  // namespace tinygpt::cli
