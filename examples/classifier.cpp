// Classifies points of three interleaved spirals with an MLP trained in shuffled minibatches, then
// shows that stopping, saving and resuming gives the very same model as training straight through.
//   usage: example_classifier [epochs] [folder for its files]
#include <tinygpt/tinygpt.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

using namespace tinygpt;

namespace {

constexpr int64_t kClasses = 3, kPerClass = 200, kBatch = 32;

// Points of kClasses spirals with a little noise: x [n, 2], the class of each as int64.
std::pair<Tensor, std::vector<int64_t>> spirals(uint64_t seed) {
  const Tensor noise = Tensor::randn({kClasses * kPerClass, 2}, seed, 0.05f);
  std::vector<float> x;
  std::vector<int64_t> labels;
  for (int64_t c = 0; c < kClasses; ++c)
    for (int64_t i = 0; i < kPerClass; ++i) {
      const float r = static_cast<float>(i) / kPerClass, angle = 4.0f * r + 2.0944f * static_cast<float>(c);
      const int64_t row = static_cast<int64_t>(labels.size());
      x.push_back(r * std::sin(angle) + noise.at({row, 0}));
      x.push_back(r * std::cos(angle) + noise.at({row, 1}));
      labels.push_back(c);
    }
  return {Tensor::from_vector({kClasses * kPerClass, 2}, x), labels};
}

struct Classifier : nn::Module {
  Classifier() {
    register_module("net", net);
    net.add<nn::Linear>(2, 64);
    net.add<nn::ReLU>();
    net.add<nn::Linear>(64, 64);
    net.add<nn::ReLU>();
    net.add<nn::Linear>(64, kClasses);
  }
  Tensor forward(const Tensor& x) const { return net.forward(x); }  // [N, 2] -> logits [N, classes]
  nn::Sequential net;
};

// What training carries from one epoch to the next besides the weights: the shuffling generator.
struct Run {
  Classifier model;
  optim::Adam optimizer{model.named_parameters(), {.lr = 1e-2f}};
  optim::StepLR schedule{.lr = 1e-2f, .step_size = 20, .gamma = 0.5f};
  Rng shuffle{7};
  int64_t epoch = 0;

  void train_epoch(const Tensor& x, const std::vector<int64_t>& y) {
    schedule.apply(optimizer, epoch);
    const std::vector<int64_t> order = randperm(x.size(0), shuffle.next_u64());
    for (size_t start = 0; start < order.size(); start += kBatch) {
      const std::vector<int64_t> rows(order.begin() + start, order.begin() + std::min(order.size(), start + kBatch));
      std::vector<int64_t> targets;
      for (int64_t r : rows) targets.push_back(y[r]);
      optimizer.zero_grad();
      cross_entropy(model.forward(index_select(x, 0, rows)), targets).backward();
      optimizer.step();
    }
    ++epoch;
  }
  void save(const std::string& folder) const {
    io::SavedState state;
    state.integers["epoch"] = epoch;
    state.generators["shuffle"] = shuffle.state();
    nn::save(model, folder + "/classifier.h5", state);
    optim::save(optimizer, folder + "/classifier.optim.h5");
  }
  void load(const std::string& folder) {
    const io::SavedState state = nn::load(model, folder + "/classifier.h5");
    optim::load(optimizer, folder + "/classifier.optim.h5");
    epoch = state.integers.at("epoch");
    shuffle.set_state(state.generators.at("shuffle"));
  }
};

float accuracy(const Classifier& model, const Tensor& x, const std::vector<int64_t>& y) {
  NoGradGuard no_grad;
  const std::vector<int64_t> predicted = argmax(model.forward(x), 1);
  int64_t right = 0;
  for (size_t i = 0; i < y.size(); ++i) right += predicted[i] == y[i];
  return static_cast<float>(right) / static_cast<float>(y.size());
}

bool same_weights(const nn::Module& a, const nn::Module& b) {
  const auto wa = a.state_dict(), wb = b.state_dict();
  for (size_t i = 0; i < wa.size(); ++i)
    if (wa[i].second.to_vector() != wb.at(i).second.to_vector()) return false;
  return wa.size() == wb.size();
}

}  // namespace

int main(int argc, char** argv) try {
  const int64_t epochs = argc > 1 ? std::stoll(argv[1]) : 60;
  const std::string folder = argc > 2 ? argv[2] : ".";
  const auto [x, y] = spirals(1);
  const auto [x_test, y_test] = spirals(2);

  Run straight;  // all epochs in one go
  for (int64_t e = 0; e < epochs; ++e) straight.train_epoch(x, y);
  const float acc = accuracy(straight.model, x_test, y_test);
  std::printf("%lld epochs: test accuracy %.1f%%\n", static_cast<long long>(epochs), 100 * acc);

  Run first;  // half the epochs, saved; a fresh run loads them and finishes
  for (int64_t e = 0; e < epochs / 2; ++e) first.train_epoch(x, y);
  first.save(folder);
  Run resumed;
  resumed.load(folder);
  while (resumed.epoch < epochs) resumed.train_epoch(x, y);
  const bool exact = same_weights(resumed.model, straight.model);
  std::printf("stopped after %lld epochs, saved, resumed: weights %s\n", static_cast<long long>(epochs / 2),
              exact ? "identical to the straight run" : "DIFFER");
  return exact && (epochs < 60 || acc > 0.95f) ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "example_classifier: %s\n", e.what());
  return 2;
}
