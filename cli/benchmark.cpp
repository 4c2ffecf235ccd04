#include "benchmark.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "../autograd/ops.h"
#include "../autograd/precision.h"
#include "../autograd/threads.h"
#include "../autograd/profile.h"
#include "../autograd/random.h"
#include "../optim/adamw.h"
#include "../optim/grad_clip.h"
#include "../train/memory_budget.h"

namespace tinygpt::cli {

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// An even count's median is the mean of its two middle values.
double median(std::vector<double> v) {
  const auto upper = v.begin() + v.size() / 2;
  std::nth_element(v.begin(), upper, v.end());
  if (v.size() % 2 == 1) return *upper;
  return (*std::max_element(v.begin(), upper) + *upper) / 2;
}

// The machine's practical peak: our GEMM on a large square product, the best of 20 (the machine
// is shared: the best run is the one least disturbed).
double measure_peak_gflops(Precision precision) {
  const int64_t n = 1024;
  const Tensor a = Tensor::uniform({n, n}, 1, -1, 1), b = Tensor::uniform({n, n}, 2, -1, 1);
  const PrecisionGuard products(precision);
  double best = 1e30;
  for (int r = 0; r < 20; ++r) {
    const auto t0 = Clock::now();
    const Tensor c = matmul(a, b);
    best = std::min(best, ms_since(t0));
  }
  return 2.0 * n * n * n / (best * 1e-3) / 1e9;
}

// r's figures from its timed steps (step_ms, phase_ms summed over the steps) and op families
// (seconds over the steps); the peak is measured again after the steps and the better one kept.
void summarize(const BenchOptions& o, int ranks, const OpSeconds& families, double peak_before, BenchResult& r) {
  for (auto& [phase, ms] : r.phase_ms) ms /= static_cast<double>(o.steps);
  double op_total = 0;
  for (const auto& [family, s] : families) op_total += (r.family_ms[family] = s * 1e3 / static_cast<double>(o.steps));
  r.family_ms["optimizer"] = r.phase_ms["optimizer"];
  r.family_ms["other"] += std::max(0.0, r.phase_ms["forward"] + r.phase_ms["backward"] + r.phase_ms["zero-grad"] - op_total);

  const nn::GPTConfig& c = o.config;
  r.ms_per_step = median(r.step_ms);
  r.ranks = ranks;
  r.tokens_per_s = static_cast<double>(o.batch * c.block_size * ranks) / (r.ms_per_step * 1e-3);
  r.flops_per_token = nn::training_flops_per_token(c);
  r.gflops = r.flops_per_token * r.tokens_per_s / 1e9;
  r.peak_gflops = std::max(peak_before, measure_peak_gflops(r.precision));
  r.share_of_peak = r.gflops / r.peak_gflops;
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  r.peak_rss_mb = static_cast<double>(usage.ru_maxrss) / 1024.0;
  r.formula_mb = train::training_bytes(c, o.batch, o.attention) / (1024.0 * 1024.0);
}

// Throws where a count is out of its range ("bench: steps must be at least 1 (got 0)").
void check_counts(const BenchOptions& o) {
  const struct {
    const char* name;
    int64_t value;
    io::Range range;
  } counts[] = {{"batch", o.batch, kBenchBatchRange},
                {"steps", o.steps, kBenchStepsRange},
                {"warmup", o.warmup, kBenchWarmupRange},
                {"threads", o.threads, train::kThreadRange}};
  for (const auto& c : counts)
    if (const std::string problem = io::range_problem(c.value, c.range); !problem.empty())
      throw std::invalid_argument(fmt::format("bench: {} {}", c.name, problem));
}

}  // namespace

std::vector<BenchResult> run_benchmark(const BenchOptions& o, const train::Communicator& comm) {
  o.config.validate();
  check_counts(o);
  if (o.precisions.empty()) throw std::invalid_argument("bench: no precision to time");
  train::require_memory(train::training_bytes(o.config, o.batch, o.attention), "this benchmark");
  set_num_threads(static_cast<int>(o.threads));
  memory::Reuse reuse;  // as in training: steps take the memory earlier steps freed
  nn::GPT model(o.config, kDefaultSeed);
  model.set_attention_memory(o.attention);
  optim::AdamW optimizer(model.named_parameters(), {});
  const std::vector<Tensor> parameters = model.parameters();
  const int64_t B = o.batch, T = o.config.block_size;
  Rng rng(1 + static_cast<uint64_t>(comm.rank()));
  Buffer flat_grads;
  std::vector<int32_t> ids(B * T), targets(B * T);
  const size_t runs = o.precisions.size();
  std::vector<BenchResult> results(runs);
  std::vector<OpSeconds> families(runs);
  std::vector<double> peak_before(runs);
  for (size_t i = 0; i < runs; ++i) peak_before[i] = measure_peak_gflops(o.precisions[i]);

  // One training step in results[i]'s precision; timed: its phases and op families are recorded.
  auto step_in = [&](size_t i, bool timed) {
    const PrecisionGuard precision(o.precisions[i]);
    BenchResult& r = results[i];
    for (auto& id : ids) id = static_cast<int32_t>(rng.below(o.config.vocab_size));
    for (auto& id : targets) id = static_cast<int32_t>(rng.below(o.config.vocab_size));
    OpSeconds discard;
    Profiler profiler(timed ? families[i] : discard);
    const auto t0 = Clock::now();
    model.zero_grad();
    const auto t1 = Clock::now();
    Tensor loss = model.forward(ids, B, T, targets).loss;
    const auto t2 = Clock::now();
    loss.backward();
    const auto t_backward = Clock::now();
    if (comm.size() > 1) comm.sum(0);  // the ranks meet first: the wait for a slower rank is not communication
    const auto t_met = Clock::now();
    comm.average_gradients(parameters, flat_grads);
    const auto t3 = Clock::now();
    optimizer.step(1e-3f, optim::clip_scale(optim::global_grad_norm(parameters), 1.0));
    if (!timed) return;
    const double zero = std::chrono::duration<double, std::milli>(t1 - t0).count();
    const double forward = std::chrono::duration<double, std::milli>(t2 - t1).count();
    const double backward = std::chrono::duration<double, std::milli>(t_backward - t2).count();
    const double waiting = std::chrono::duration<double, std::milli>(t_met - t_backward).count();
    const double allreduce = std::chrono::duration<double, std::milli>(t3 - t_met).count();
    const double opt = ms_since(t3);
    r.phase_ms["zero-grad"] += zero;
    r.phase_ms["forward"] += forward;
    r.phase_ms["backward"] += backward;
    r.phase_ms["optimizer"] += opt;
    r.phase_ms["allreduce"] += allreduce;
    r.phase_ms["rank-wait"] += waiting;
    r.step_ms.push_back(zero + forward + backward + waiting + allreduce + opt);
  };
  // With several precisions every step runs once in each, and each round reverses the last one's
  // order (fp32 bf16, bf16 fp32, ...): a host that speeds up or slows down favours none of them.
  for (int64_t step = 0; step < o.warmup + o.steps; ++step)
    for (size_t turn = 0; turn < runs; ++turn) step_in(step % 2 ? runs - 1 - turn : turn, step >= o.warmup);

  for (size_t i = 0; i < runs; ++i) {
    results[i].precision = o.precisions[i];
    results[i].parameters = model.parameter_count();
    summarize(o, comm.size(), families[i], peak_before[i], results[i]);
  }
  return results;
}

double step_speedup(const BenchResult& base, const BenchResult& other) {
  if (base.step_ms.size() != other.step_ms.size() || base.step_ms.empty())
    throw std::invalid_argument(fmt::format("step_speedup: {} and {} timed steps do not pair up", base.step_ms.size(),
                                            other.step_ms.size()));
  std::vector<double> ratios(base.step_ms.size());
  for (size_t s = 0; s < ratios.size(); ++s) ratios[s] = base.step_ms[s] / other.step_ms[s];
  return median(ratios);
}

}  // namespace tinygpt::cli
