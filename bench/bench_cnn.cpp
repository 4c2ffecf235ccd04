// A small CNN's training step on 28x28 images (LeNet's shape: conv 5x5 16 -> pool -> conv 5x5 32 ->
// pool -> linear 10; batch 64), forward, backward and AdamW, timed; bench/cnn_torch.py is the same
// step in PyTorch, and bench/compare_cnn.sh runs them in turn.
//   bench_cnn [--threads N] [--iters N] [--batch N]      prints: ms per step (median), images/s
#include <tinygpt/tinygpt.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "flags.h"

using namespace tinygpt;

int main(int argc, char** argv) {
  int64_t threads = 0, iters = 20, batch = 64;
  CLI::App app("a small CNN's training step, timed", "bench_cnn");
  bench::add_integer(app, "--threads", threads, train::kThreadRange, "threads (0: every core)");
  bench::add_integer(app, "--iters", iters, {1, 1e6}, "steps timed");
  bench::add_integer(app, "--batch", batch, {1, 65536}, "images per step");
  bench::parse_flags(app, argc, argv);
  set_num_threads(static_cast<int>(threads));
  nn::Sequential net(1);
  net.add<nn::Conv2d>(1, 16, std::array<int64_t, 2>{5, 5}, nn::Conv2dLayerOptions{.window = {.padding = {2, 2}}});
  net.add<nn::ReLU>();
  net.add<nn::MaxPool2d>();
  net.add<nn::Conv2d>(16, 32, std::array<int64_t, 2>{5, 5}, nn::Conv2dLayerOptions{.window = {.padding = {2, 2}}});
  net.add<nn::ReLU>();
  net.add<nn::MaxPool2d>();
  net.add<nn::Flatten>();
  net.add<nn::Linear>(32 * 7 * 7, 10);
  optim::AdamW optimizer(net.named_parameters(), {.lr = 1e-3f});
  const Tensor x = Tensor::randn({batch, 1, 28, 28}, 2);
  std::vector<int64_t> y(static_cast<size_t>(batch));
  for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<int64_t>(i % 10);
  memory::Reuse reuse;  // each step takes the memory the last one gave back, as the trainer's do
  std::vector<double> ms;
  for (int64_t i = 0; i < iters + 2; ++i) {  // two warm-up steps
    const auto t0 = std::chrono::steady_clock::now();
    optimizer.zero_grad();
    cross_entropy(net.forward(x), y).backward();
    optimizer.step();
    const double took = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (i >= 2) ms.push_back(took);
  }
  std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
  const double median = ms[ms.size() / 2];
  std::printf("tinygpt cnn: %d threads, batch %lld: %.2f ms/step, %.0f images/s\n", num_threads(),
              static_cast<long long>(batch), median, 1000.0 * static_cast<double>(batch) / median);
  return 0;
}
