// A small demo of the autograd library: a two-layer tanh network learns y = sin(3x) on [-1, 1]
// by plain gradient descent, and the loss falls as it trains.
#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "autograd/graph.h"
#include "autograd/ops.h"

using namespace tinygpt;

int main() {
  const int64_t N = 256, H = 32;
  std::vector<float> xs(N), ys(N);
  for (int64_t i = 0; i < N; ++i) {
    xs[i] = -1.0f + 2.0f * static_cast<float>(i) / (N - 1);
    ys[i] = std::sin(3.0f * xs[i]);
  }
  const Tensor x = Tensor::from_vector({N, 1}, xs), y = Tensor::from_vector({N, 1}, ys);
  std::vector<Tensor> params = {Tensor::randn({1, H}, 1, 1.0f), Tensor::zeros({H}), Tensor::randn({H, 1}, 2, 0.2f),
                                Tensor::zeros({1})};
  for (Tensor& p : params) p.set_requires_grad(true);

  for (int step = 0; step <= 2000; ++step) {
    const Tensor hidden = tinygpt::tanh(matmul(x, params[0]) + params[1]);  // [N, H]
    const Tensor prediction = matmul(hidden, params[2]) + params[3];         // [N, 1]
    const Tensor error = prediction - y;
    const Tensor loss = mean(error * error);
    for (Tensor& p : params) p.zero_grad();
    loss.backward();
    {
      NoGradGuard no_grad;
      for (Tensor& p : params) p.copy_from_(p - p.grad() * 0.1f);
    }
    if (step % 200 == 0) fmt::print("step {:4d}  mean squared error {:.6f}\n", step, loss.item());
  }
}
