// Forward + backward time of one Block and of the whole GPT (default: the "baby" config), with a
// per-module breakdown: each module's forward + backward timed alone on the shapes it sees in the model.
//   bench_model [--layers L --heads H --embd C --block T --batch B --vocab-size V --iters N --threads K]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <thread>

#include "tinygpt/autograd/threads.h"
#include "tinygpt/autograd/random.h"
#include "tinygpt/nn/gpt.h"
#include "tinygpt/cli/benchmark.h"
#include "flags.h"

using namespace tinygpt;
using namespace tinygpt::nn;

namespace {

// Median milliseconds of `steps` calls, after 3 warm-up calls.
double median_ms(int steps, const std::function<void()>& step) {
  for (int i = 0; i < 3; ++i) step();
  std::vector<double> ms;
  for (int i = 0; i < steps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    step();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
  return ms[ms.size() / 2];
}

// Forward, then backward seeded with a fixed random gradient of the output's shape (made once).
void forward_backward(const std::function<Tensor()>& forward) {
  thread_local std::map<Shape, Tensor> seeds;
  Tensor out = forward();
  auto [it, fresh] = seeds.try_emplace(out.shape());
  if (fresh) it->second = Tensor::uniform(out.shape(), 1, -1, 1);
  out.backward(it->second);
}

}  // namespace

int main(int argc, char** argv) try {
  int64_t B = 12, steps = 20, threads = 0;
  GPTConfig c{.vocab_size = 65, .block_size = 64, .n_layer = 4, .n_head = 4, .n_embd = 128};
  CLI::App app("each op of a GPT's training step, forward and backward, timed", "bench_model");
  bench::add_integer(app, "--batch", B, cli::kBenchBatchRange, "sequences per step");
  bench::add_integer(app, "--iters", steps, cli::kBenchStepsRange, "steps timed");
  bench::add_integer(app, "--threads", threads, train::kThreadRange, "threads (0: every core)");
  bench::add_model_flags(app, c);
  bench::parse_flags(app, argc, argv);
  c.validate();
  set_num_threads(static_cast<int>(threads));
  const int64_t T = c.block_size, C = c.n_embd;
  fmt::print("# config: layers {} heads {} embd {} block {} batch {} vocab {}; threads {}\n", c.n_layer, c.n_head,
             C, T, B, c.vocab_size, num_threads());

  GPT model(c);
  Rng rng(1);
  std::vector<int32_t> ids(B * T), targets(B * T);
  for (auto& id : ids) id = static_cast<int32_t>(rng.below(c.vocab_size));
  for (auto& id : targets) id = static_cast<int32_t>(rng.below(c.vocab_size));

  const double gpt_ms = median_ms(steps, [&] {
    model.zero_grad();
    model.forward(ids, B, T, targets).loss.backward();
  });
  Block& block = *model.h[0];
  const Tensor x = Tensor::randn({B, T, C}, 2).set_requires_grad(true);
  auto no_dropout = [](const Tensor& t) { return t; };
  const double block_ms = median_ms(steps, [&] { forward_backward([&] { return block.forward(x, no_dropout); }); });

  // Each module alone, on the shapes it sees inside the model.
  const Tensor h4 = Tensor::randn({B, T, 4 * C}, 3).set_requires_grad(true);
  struct Part {
    const char* name;
    int64_t per_step;  // how many times one training step runs it
    std::function<Tensor()> forward;
  };
  std::vector<int32_t> positions(T);
  for (int64_t t = 0; t < T; ++t) positions[t] = static_cast<int32_t>(t);
  const std::vector<Part> parts = {
      {"embedding (wte + wpe)", 1, [&] { return model.wte.forward(ids, {B, T}) + model.wpe->forward(positions, {T}); }},
      {"layer norm", 2 * c.n_layer + 1, [&] { return block.ln_1.forward(x); }},
      {"attention: c_attn", c.n_layer, [&] { return block.attn.c_attn.forward(x); }},
      {"attention: heads (QK^T, softmax, PV)", c.n_layer,
       [&] {
         const Tensor q = x.view({B, T, c.n_head, C / c.n_head}).transpose(1, 2);
         return causal_attention(q, q, q).y;
       }},
      {"attention: c_proj", c.n_layer, [&] { return block.attn.c_proj.forward(x); }},
      {"mlp: c_fc", c.n_layer, [&] { return block.mlp.c_fc.forward(x); }},
      {"mlp: gelu", c.n_layer, [&] { return gelu(h4); }},
      {"mlp: c_proj", c.n_layer, [&] { return block.mlp.c_proj.forward(h4); }},
      {"residual add", 2 * c.n_layer, [&] { return x + x; }},
      {"lm_head + cross-entropy", 1,
       [&] { return cross_entropy(matmul(x, model.wte.weight.transpose(0, 1)), targets).view({1}); }},
  };
  fmt::print("\n{:<40} {:>10} {:>8} {:>12} {:>8}\n", "module (forward + backward)", "ms each", "x/step", "ms per step",
             "share");
  double total = 0;
  std::vector<double> part_ms;
  for (const Part& p : parts) part_ms.push_back(median_ms(steps, [&] { forward_backward(p.forward); }));
  for (size_t i = 0; i < parts.size(); ++i) total += part_ms[i] * parts[i].per_step;
  for (size_t i = 0; i < parts.size(); ++i)
    fmt::print("{:<40} {:>10.3f} {:>8} {:>12.3f} {:>7.1f}%\n", parts[i].name, part_ms[i], parts[i].per_step,
               part_ms[i] * parts[i].per_step, 100 * part_ms[i] * parts[i].per_step / total);
  fmt::print("{:<40} {:>10} {:>8} {:>12.3f}\n", "sum of the parts", "", "", total);
  fmt::print("\none Block, forward + backward:     {:8.3f} ms\n", block_ms);
  fmt::print("whole GPT, forward + backward:     {:8.3f} ms  ({:.0f} tokens/s)\n", gpt_ms, B * T / gpt_ms * 1e3);
} catch (const std::exception& e) {
  fmt::print(stderr, "bench_model: {}\n", e.what());
  return 2;
}
