// A denoising autoencoder with a loss of its own: 16-dimensional points that lie on a curved 2-D
// surface, seen through noise, are squeezed through 2 numbers and rebuilt. The loss, log-cosh, is
// written as a new op (forward and backward, attach and grad_sink) and checked with gradcheck
// before it trains anything.   usage: example_autoencoder [steps]
#include <tinygpt/tinygpt.h>

#include <cmath>
#include <cstdio>
#include <vector>

using namespace tinygpt;

namespace {

// mean(log(cosh(p - t))): like squared error near 0, like absolute error far out. log(cosh(d)) =
// |d| + log1p(exp(-2|d|)) - log 2 never overflows; its slope is tanh(d).
Tensor log_cosh_loss(const Tensor& prediction, const Tensor& target) {
  if (prediction.shape() != target.shape()) throw std::invalid_argument("log_cosh_loss: shapes differ");
  const Tensor p = prediction.contiguous(), t = target.contiguous();
  const int64_t n = p.numel();
  double total = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = std::abs(double(p.data()[i]) - t.data()[i]);
    total += d + std::log1p(std::exp(-2 * d)) - std::log(2.0);
  }
  Tensor loss = Tensor::scalar(static_cast<float>(total / static_cast<double>(n)));
  return attach(loss, "log_cosh_loss", {p, t}, [p, t, n](const Tensor&, const Tensor& g) {
    const float scale = g.item() / static_cast<float>(n);
    float* dp = grad_sink(p);  // null when that input needs no gradient
    float* dt = grad_sink(t);
    for (int64_t i = 0; i < n; ++i) {
      const float slope = std::tanh(p.data()[i] - t.data()[i]) * scale;
      if (dp) dp[i] += slope;
      if (dt) dt[i] -= slope;
    }
  });
}

// n points tanh(z A) on a 2-D surface in 16 dimensions, z ~ N(0, 1): [n, 16].
Tensor surface_points(int64_t n, uint64_t seed) {
  const Tensor A = Tensor::randn({2, 16}, 99);
  NoGradGuard no_grad;
  return tanh(matmul(Tensor::randn({n, 2}, seed), A));
}

nn::Sequential make_autoencoder() {
  nn::Sequential net(3);
  net.add<nn::Linear>(16, 64);  // the encoder: 16 -> 2
  net.add<nn::SiLU>();
  net.add<nn::Linear>(64, 2);
  net.add<nn::Linear>(2, 64);   // the decoder: 2 -> 16
  net.add<nn::SiLU>();
  net.add<nn::Linear>(64, 16);
  return net;
}

}  // namespace

int main(int argc, char** argv) try {
  const int steps = argc > 1 ? std::stoi(argv[1]) : 1500;
  const GradCheckResult check = gradcheck([](const std::vector<Tensor>& in) { return log_cosh_loss(in[0], in[1]); },
                                          {Tensor::uniform({3, 4}, 1, -2, 2), Tensor::uniform({3, 4}, 2, -2, 2)});
  std::printf("log_cosh_loss gradient check: %s\n", check.message().c_str());
  if (!check.ok) return 1;

  const Tensor clean = surface_points(1024, 5), test = surface_points(256, 6);
  nn::Sequential net = make_autoencoder();
  optim::Adam optimizer(net.named_parameters(), {.lr = 3e-3f});
  const optim::OneCycleLR schedule{.max_lr = 1e-2f, .total_steps = steps};
  for (int step = 0; step < steps; ++step) {
    schedule.apply(optimizer, step);
    const Tensor noisy = clean + Tensor::randn(clean.shape(), 1000 + step, 0.3f);  // new noise each step
    optimizer.zero_grad();
    const Tensor loss = log_cosh_loss(net.forward(noisy), clean);
    loss.backward();
    optimizer.step();
    if (step % 500 == 0) std::printf("step %4d  loss %.4f\n", step, loss.item());
  }

  NoGradGuard no_grad;
  const Tensor noisy_test = test + Tensor::randn(test.shape(), 7, 0.3f);
  const float before = mse_loss(noisy_test, test).item(), after = mse_loss(net.forward(noisy_test), test).item();
  std::printf("squared error to the clean points: noisy input %.4f, rebuilt %.4f\n", before, after);
  return after < 0.5f * before ? 0 : 1;  // the 2-number bottleneck removes most of the noise
} catch (const std::exception& e) {
  std::fprintf(stderr, "example_autoencoder: %s\n", e.what());
  return 2;
}
