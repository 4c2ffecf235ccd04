// Fits y = sin(x0) x1 with a small MLP, saves it, loads it into a fresh one and checks that the
// copy predicts exactly what the original does.  usage: example_mlp [steps] [model.h5]
#include <tinygpt/tinygpt.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

using namespace tinygpt;

namespace {

// `n` points x in [-2, 2]^2 and their targets y = sin(x0) x1: [n, 2] and [n, 1].
std::pair<Tensor, Tensor> dataset(int64_t n, uint64_t seed) {
  Tensor x = Tensor::uniform({n, 2}, seed, -2.0f, 2.0f);
  std::vector<float> y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) y[i] = std::sin(x.at({i, 0})) * x.at({i, 1});
  return {x, Tensor::from_vector({n, 1}, y)};
}

nn::Sequential make_mlp(uint64_t seed) {
  nn::Sequential mlp(seed);
  mlp.add<nn::Linear>(2, 32);
  mlp.add<nn::Tanh>();
  mlp.add<nn::Linear>(32, 32);
  mlp.add<nn::Tanh>();
  mlp.add<nn::Linear>(32, 1);
  return mlp;
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::stoi(argv[1]) : 2000;
  const std::string path = argc > 2 ? argv[2] : "mlp.h5";
  const auto [x, y] = dataset(512, 1);
  const auto [x_test, y_test] = dataset(256, 2);

  nn::Sequential mlp = make_mlp(42);
  optim::AdamW optimizer(mlp.named_parameters(), {.lr = 3e-3f, .weight_decay = 0.0f});
  for (int step = 1; step <= steps; ++step) {
    optimizer.zero_grad();
    Tensor loss = mse_loss(mlp.forward(x), y);
    loss.backward();
    optimizer.step();
    if (step % 500 == 0 || step == steps) std::printf("step %5d  train loss %.5f\n", step, loss.item());
  }

  NoGradGuard no_grad;  // evaluation builds no graph
  const Tensor prediction = mlp.forward(x_test);
  const float test_loss = mse_loss(prediction, y_test).item();
  std::printf("test loss %.5f (the variance of y is %.3f)\n", test_loss, mse_loss(y_test, y_test * 0.0f).item());

  nn::save(mlp, path);
  nn::Sequential restored = make_mlp(7);  // other starting weights, overwritten by load
  nn::load(restored, path);
  const bool exact = restored.forward(x_test).to_vector() == prediction.to_vector();
  std::printf("saved to %s and restored: predictions %s\n", path.c_str(), exact ? "identical" : "DIFFER");
  const bool fitted = steps < 2000 || test_loss < 0.01f;  // a full run fits within 1% of y's variance
  return exact && fitted ? 0 : 1;
}
