// Classifies generated 16x16 images of bars (horizontal, vertical, diagonal) at random places
// under noise with a small convolutional network, and checks that it reaches 95% on images it
// never saw.
//   usage: example_cnn [steps]
#include <tinygpt/tinygpt.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace tinygpt;

namespace {

constexpr int64_t kSide = 16, kClasses = 3, kBatch = 32;

// n images [n, 1, 16, 16]: a bar of length 8 in one of three directions (the class), its start
// anywhere it fits, over N(0, 0.3²) noise.
std::pair<Tensor, std::vector<int64_t>> bars(int64_t n, uint64_t seed) {
  Tensor images = Tensor::randn({n, 1, kSide, kSide}, seed, 0.3f);
  Rng rng(seed + 1);
  std::vector<int64_t> labels;
  for (int64_t i = 0; i < n; ++i) {
    const auto kind = static_cast<int64_t>(rng.below(kClasses));
    const auto r = static_cast<int64_t>(rng.below(kSide - 8)), c = static_cast<int64_t>(rng.below(kSide - 8));
    float* image = images.data() + i * kSide * kSide;
    for (int64_t k = 0; k < 8; ++k) {
      const int64_t row = kind == 1 ? r + k : kind == 2 ? r + k : r + 4;
      const int64_t col = kind == 0 ? c + k : kind == 2 ? c + k : c + 4;
      image[row * kSide + col] += 1.0f;
    }
    labels.push_back(kind);
  }
  return {images, labels};
}

struct Net : nn::Module {
  Net() {
    register_module("features", features);
    features.add<nn::Conv2d>(1, 8, std::array<int64_t, 2>{3, 3}, nn::Conv2dLayerOptions{.window = {.padding = {1, 1}}});
    features.add<nn::ReLU>();
    features.add<nn::MaxPool2d>();  // 16 -> 8
    features.add<nn::Conv2d>(8, 16, std::array<int64_t, 2>{3, 3}, nn::Conv2dLayerOptions{.window = {.padding = {1, 1}}});
    features.add<nn::ReLU>();
    features.add<nn::MaxPool2d>();  // 8 -> 4
    features.add<nn::Flatten>();
    features.add<nn::Linear>(16 * 4 * 4, kClasses);
  }
  Tensor forward(const Tensor& x) const { return features.forward(x); }  // [N, 1, 16, 16] -> logits [N, 3]
  nn::Sequential features;
};

double accuracy(const Net& net, const Tensor& x, const std::vector<int64_t>& y) {
  NoGradGuard no_grad;
  const std::vector<int64_t> guess = argmax(net.forward(x), 1);
  int64_t right = 0;
  for (size_t i = 0; i < y.size(); ++i) right += guess[i] == y[i];
  return static_cast<double>(right) / static_cast<double>(y.size());
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t steps = argc > 1 ? std::atoll(argv[1]) : 300;
  const auto [train_x, train_y] = bars(2048, 1);
  const auto [test_x, test_y] = bars(512, 2);
  Net net;
  optim::AdamW optimizer(net.named_parameters(), {.lr = 3e-3f, .weight_decay = 0.0f});
  Rng shuffle(3);
  memory::Reuse reuse;  // steps take back the memory the last one freed (no page faults per step)
  for (int64_t step = 1; step <= steps; ++step) {
    std::vector<int64_t> rows, targets;
    for (int64_t b = 0; b < kBatch; ++b) {
      rows.push_back(static_cast<int64_t>(shuffle.below(train_y.size())));
      targets.push_back(train_y[rows.back()]);
    }
    optimizer.zero_grad();
    const Tensor loss = cross_entropy(net.forward(index_select(train_x, 0, rows)), targets);
    loss.backward();
    optimizer.step();
    if (step % 100 == 0) std::printf("step %4lld  loss %.4f\n", static_cast<long long>(step), loss.item());
  }
  const double test = accuracy(net, test_x, test_y);
  std::printf("test accuracy %.3f on %zu unseen images\n", test, test_y.size());
  if (test < 0.95) {
    std::printf("FAILED: below 0.95\n");
    return 1;
  }
  return 0;
}
