// Inference on GPT-2 124M's shape (random weights): the machine's memory bandwidth, the speed of
// sampling with the key/value cache against the bound of reading every weight once per token, and
// evaluation at block 1024 against the GEMM peak, for 1 and 2 threads.
//   bench_gpt2 [--layers 12 --heads 12 --embd 768 --block 1024 --vocab-size 50257 --tokens 64]
//   bench_gpt2 --past 1 [--rope 1] [sizes]   (only sampling over one block inside the context
//       against the next block past it, where the cache slides (RoPE) or is encoded again)
//   bench_gpt2 --write-hf DIR --tokenizer TOKDIR   (only writes the random model in Hugging Face's
//       layout, with GPT-2's tokenizer files from TOKDIR: input for tinygpt import, eval, sample)
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "tinygpt/autograd/graph.h"
#include "tinygpt/autograd/kernels/simd.h"
#include "tinygpt/autograd/machine.h"
#include "tinygpt/autograd/memory.h"
#include "tinygpt/autograd/ops.h"
#include "tinygpt/autograd/parallel.h"
#include "tinygpt/nn/sampling.h"
#include "tinygpt/data/gpt2_vocab.h"
#include "tinygpt/nn/gpt.h"
#include "tinygpt/io/hf_gpt2.h"
#include "flags.h"
#include "sampling_rate.h"

using namespace tinygpt;

namespace {

double seconds_of(const std::function<void()>& work) {
  const auto t0 = std::chrono::steady_clock::now();
  work();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Best read bandwidth (GB/s) over a buffer much larger than the caches, summed in SIMD registers:
// each task reads its piece as four streams at once (as the decoder reads four weight rows), which
// the hardware prefetchers follow further than one.
double read_bandwidth(const std::vector<float>& buffer, int rounds) {
  const auto n = static_cast<int64_t>(buffer.size());
  constexpr int64_t kPiece = int64_t{1} << 20, kStream = kPiece / 4;
  double best = 0, sink = 0;
  for (int r = 0; r < rounds; ++r) {
    std::vector<float> partial((n + kPiece - 1) / kPiece);
    const double s = seconds_of([&] {
      parallel_for((n + kPiece - 1) / kPiece, 1, [&](int64_t p0, int64_t p1) {
        for (int64_t p = p0; p < p1; ++p) {
          simd::vfloat acc[4] = {simd::zero(), simd::zero(), simd::zero(), simd::zero()};
          const float* x = buffer.data() + p * kPiece;
          for (int64_t i = 0; i < kStream; i += simd::kLanes)
            for (int k = 0; k < 4; ++k) acc[k] = simd::add(acc[k], simd::load(x + k * kStream + i));
          float lanes[simd::kLanes];
          simd::store(lanes, simd::add(simd::add(acc[0], acc[1]), simd::add(acc[2], acc[3])));
          partial[p] = std::accumulate(lanes, lanes + simd::kLanes, 0.0f);
        }
      });
    });
    sink += std::accumulate(partial.begin(), partial.end(), 0.0);
    best = std::max(best, static_cast<double>(n) * 4 / s / 1e9);
  }
  if (sink == 42) fmt::print("");  // keeps the sums alive
  return best;
}

// Best GFLOP/s of our GEMM on the largest product of a block (c_fc: [T, C] x [4C, C]^T).
double gemm_peak(int64_t T, int64_t C, int rounds) {
  const Tensor x = Tensor::uniform({T, C}, 1, -1, 1), w = Tensor::uniform({4 * C, C}, 2, -1, 1);
  NoGradGuard no_grad;
  double best = 0;
  for (int r = 0; r < rounds; ++r) best = std::max(best, 2.0 * T * C * 4 * C / seconds_of([&] { linear(x, w, Tensor()); }) / 1e9);
  return best;
}

// Tokens/s of greedy sampling over positions 0 .. block - 1, and over the next block_size tokens,
// past the context: best of `rounds`.
std::pair<double, double> inside_and_past_context(nn::GPT& model, int rounds) {
  const int64_t block = model.config().block_size;
  nn::Generator gen(model);
  double inside = 0, past = 0;
  for (int round = 0; round < rounds; ++round) {
    gen.reset();
    int32_t next = 0;
    auto run = [&] {
      for (int64_t k = 0; k < block; ++k) {
        const std::vector<float>& logits = gen.feed(next);
        next = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
      }
    };
    inside = std::max(inside, static_cast<double>(block) / seconds_of(run));
    past = std::max(past, static_cast<double>(block) / seconds_of(run));
  }
  return {inside, past};
}

}  // namespace

int main(int argc, char** argv) try {
  int64_t tokens = 64, past = 0, rope = 0, int8_group = nn::kInt8Group;
  nn::GPTConfig c{.vocab_size = 50257, .block_size = 1024, .n_layer = 12, .n_head = 12, .n_embd = 768};
  std::string write_hf, tokenizer_files;
  CLI::App app("GPT-2 124M's shape: sampling speed, or a random model written in Hugging Face's layout", "bench_gpt2");
  bench::add_integer(app, "--tokens", tokens, {1, 1 << 16}, "tokens sampled");
  bench::add_integer(app, "--past", past, {0, 1}, "1: sample inside and past the context");
  bench::add_integer(app, "--rope", rope, {0, 1}, "1: RoPE instead of learned positions");
  bench::add_integer(app, "--int8-group", int8_group, {0, 4096}, "int8 weights' group (0: none)");
  bench::add_model_flags(app, c);
  app.add_option("--write-hf", write_hf, "write the model into this Hugging Face folder");
  app.add_option("--tokenizer", tokenizer_files, "with --write-hf: GPT-2's tokenizer files' folder");
  bench::parse_flags(app, argc, argv);
  c.validate();
  if (rope) c.position = nn::PositionKind::rope;
  nn::GPT model(c, 1);
  model.eval();
  if (past) {
    fmt::print("machine: {}, vector path {}\nGPT: {} layers, {} heads, n_embd {}, block {}, vocab {}, {} positions\n",
               cpu_model(), vector_path(), c.n_layer, c.n_head, c.n_embd, c.block_size, c.vocab_size, nn::name(c.position));
    for (int threads : {1, 2}) {
      set_num_threads(threads);
      const auto [inside, past] = inside_and_past_context(model, 3);
      fmt::print("threads {}: sample over the block inside the context {:.1f} tokens/s, over the next block past it "
                 "{:.1f} tokens/s = {:.2f}x\n",
                 threads, inside, past, past / inside);
    }
    return 0;
  }
  if (const std::string& dir = write_hf; !dir.empty()) {
    const data::BpeTokenizer tokenizer = data::read_gpt2_tokenizer(tokenizer_files);
    io::export_hf_gpt2(model, tokenizer, dir);
    fmt::print("wrote {}: {} parameters\n", dir, model.parameter_count());
    return 0;
  }
  // What one generated token reads: every weight matrix and bias once, wte twice over (lookup
  // row aside, the logits read all of it), and one row of wpe.
  const double weight_bytes = 4.0 * static_cast<double>(model.parameter_count() - c.block_size * c.n_embd);
  fmt::print("machine: {}, vector path {}, one core's FMA peak {:.1f} GFLOP/s\n", cpu_model(), vector_path(),
             fma_peak_gflops());
  fmt::print("GPT: {} layers, {} heads, n_embd {}, block {}, vocab {}: {} parameters ({:.0f} MB read per token)\n",
             c.n_layer, c.n_head, c.n_embd, c.block_size, c.vocab_size, model.parameter_count(), weight_bytes / 1e6);
  std::vector<float> buffer(size_t{1} << 28, 1.0f);  // 1 GiB
  std::vector<int32_t> prompt(16);
  for (size_t i = 0; i < prompt.size(); ++i) prompt[i] = static_cast<int32_t>(i * 977 % c.vocab_size);
  std::vector<int32_t> idx(c.block_size), targets(c.block_size);
  for (int64_t i = 0; i < c.block_size; ++i) idx[i] = static_cast<int32_t>(i * 7919 % c.vocab_size);
  for (int64_t i = 0; i < c.block_size; ++i) targets[i] = idx[(i + 1) % c.block_size];
  const double forward_flops = 2.0 * static_cast<double>(model.parameter_count() - c.block_size * c.n_embd) * c.block_size +
                               2.0 * c.n_layer * c.block_size * c.block_size * c.n_embd;  // weights, QK^T and AV (causal)
  // The same model with int8 weights (its own copy: the float one keeps its weights).
  std::unique_ptr<nn::GPT> int8;
  double int8_bytes = 0;
  if (int8_group > 0) {
    int8 = std::make_unique<nn::GPT>(c, 1);
    int8->eval();
    int8->use_int8_weights(int8_group);
    int8_bytes = weight_bytes / 4 * (1 + 4.0 / int8_group);  // a byte a weight and a float a group (rows: whole groups)
  }
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    const double bandwidth = read_bandwidth(buffer, 5);
    const double best = bench::sampling_rate(model, prompt, tokens);
    const double bound = bandwidth * 1e9 / weight_bytes;
    fmt::print("threads {}: read bandwidth {:.1f} GB/s -> bound {:.1f} tokens/s; sample (KV cache, positions {}-{}): "
               "{:.1f} tokens/s = {:.0f}% of the bound\n",
               threads, bandwidth, bound, prompt.size(), prompt.size() + tokens, best, 100 * best / bound);
    if (int8) {
      const double rate = bench::sampling_rate(*int8, prompt, tokens), fp32_again = bench::sampling_rate(model, prompt, tokens);
      fmt::print("threads {}: int8 weights (groups of {}, about {:.0f} MB read per token): {:.1f} tokens/s = {:.2f}x fp32 "
                 "({:.1f} tokens/s before it, {:.1f} after)\n",
                 threads, int8_group, int8_bytes / 1e6, rate, rate / std::max(best, fp32_again), best, fp32_again);
    }
    const double peak = gemm_peak(c.block_size, c.n_embd, 5);
    NoGradGuard no_grad;
    memory::Reuse reuse;  // as tinygpt eval: each window runs in the memory the one before freed
    double eval_s = 1e30;
    for (int round = 0; round < 3; ++round)
      eval_s = std::min(eval_s, seconds_of([&] { model.forward(idx, 1, c.block_size, targets).loss.item(); }));
    fmt::print("threads {}: eval forward at block {}: {:.0f} tokens/s, {:.1f} GFLOP/s = {:.0f}% of the GEMM peak "
               "({:.1f} GFLOP/s, [{}, {}] x [{}, {}]^T)\n",
               threads, c.block_size, c.block_size / eval_s, forward_flops / eval_s / 1e9,
               100 * forward_flops / eval_s / 1e9 / peak, peak, c.block_size, c.n_embd, 4 * c.n_embd, c.n_embd);
  }
} catch (const std::exception& e) {
  fmt::print(stderr, "bench_gpt2: {}\n", e.what());
  return 2;
}
