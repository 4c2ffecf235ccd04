// The convolution, pooling and normalization layers: libtorch's shapes, names and initialization
// bounds, torch's values (tests/reference/torch_ops.txt), and a network of them that learns
// through Sequential.
#include <catch2/catch.hpp>

#include <cmath>

#include "tinygpt/nn/containers.h"
#include "tinygpt/nn/conv.h"
#include "tinygpt/nn/norms.h"
#include "torch_fixture.h"

using namespace tinygpt;
using namespace tinygpt::nn;

TEST_CASE("conv layers: shapes, parameter names and PyTorch's initialization bounds", "[nn][conv]") {
  Conv2d conv(4, 6, {3, 2}, {.window = {.stride = {2, 1}, .padding = {1, 0}}, .groups = 2});
  REQUIRE(conv.weight.shape() == Shape{6, 2, 3, 2});
  REQUIRE(conv.bias.shape() == Shape{6});
  REQUIRE(conv.named_parameters().at(0).first == "weight");
  REQUIRE(conv.forward(Tensor::zeros({2, 4, 7, 5})).shape() == Shape{2, 6, 4, 4});
  const float bound = 1.0f / std::sqrt(2.0f * 3 * 2);  // fan_in = C / groups * kh * kw
  for (float w : conv.weight.to_vector()) REQUIRE(std::abs(w) <= bound);
  for (float b : conv.bias.to_vector()) REQUIRE(std::abs(b) <= bound);
  REQUIRE(conv.weight.to_vector() != Conv2d(4, 6, {3, 2}, {.groups = 2, .seed = 9}).weight.to_vector());

  Conv1d line(3, 5, 4, {.stride = 2, .bias = false});
  REQUIRE_FALSE(line.bias.defined());
  REQUIRE(line.parameter_count() == 5 * 3 * 4);
  REQUIRE(line.forward(Tensor::zeros({1, 3, 10})).shape() == Shape{1, 5, 4});
  REQUIRE(MaxPool2d().forward(Tensor::zeros({1, 2, 6, 6})).shape() == Shape{1, 2, 3, 3});
  REQUIRE(AvgPool2d({.kernel = {3, 3}, .stride = {1, 1}, .padding = {1, 1}}).forward(Tensor::zeros({1, 1, 5, 5})).shape() ==
          Shape{1, 1, 5, 5});
  REQUIRE_THROWS_WITH(Conv2d(3, 4, {3, 3}, {.groups = 2}), Catch::Contains("Conv2d: 3 input and 4 output channels in 2 groups"));
  REQUIRE_THROWS_WITH(Conv1d(2, 2, 0), Catch::Contains("Conv1d: a kernel of 0"));
}

TEST_CASE("conv layers: a small network fits a batch through Sequential", "[nn][conv]") {
  Sequential net(1);
  net.add<Conv2d>(1, 4, std::array<int64_t, 2>{3, 3}, Conv2dLayerOptions{.window = {.padding = {1, 1}}});
  net.add<ReLU>();
  net.add<AvgPool2d>();
  net.add<Flatten>();
  net.add<Linear>(4 * 4 * 4, 2);
  const Tensor x = Tensor::randn({8, 1, 8, 8}, 2);
  const std::vector<int64_t> y = {0, 1, 0, 1, 1, 0, 1, 0};
  float first = 0, last = 0;
  for (int step = 0; step < 60; ++step) {
    net.zero_grad();
    const Tensor loss = cross_entropy(net.forward(x), y);
    loss.backward();
    NoGradGuard no_grad;
    for (const Tensor& p : net.parameters()) p.copy_from_(p - 0.1f * p.grad());
    (step == 0 ? first : last) = loss.item();
  }
  REQUIRE(last < 0.2f * first);
}

TEST_CASE("norm layers: BatchNorm2d in training and eval, and GroupNorm, equal torch's", "[nn][norm]") {
  using tinygpt::testing::filled;
  BatchNorm2d bn(4);
  bn.weight.copy_from_(filled({4}, 0.9, 0.2) + 1.0f);
  bn.bias.copy_from_(filled({4}, 0.4, 1.3));
  REQUIRE(bn.named_buffers().size() == 3);  // running_mean, running_var, num_batches_tracked
  bn.train();
  bn.forward(filled({3, 4, 3, 2}, 0.37, 0.4));
  Tensor x = (filled({3, 4, 3, 2}, 0.71, 0.9) * 2.0f + 0.5f).set_requires_grad(true);
  tinygpt::testing::require_torch_case("batch_norm2d_train", bn.forward(x), {x, bn.weight, bn.bias});
  const auto& want = tinygpt::testing::torch_values();
  tinygpt::testing::require_close(bn.running_mean.to_vector(), want.at("batch_norm2d_train.running_mean"));
  tinygpt::testing::require_close(bn.running_var.to_vector(), want.at("batch_norm2d_train.running_var"));
  REQUIRE(bn.num_batches_tracked.item() == 2);

  bn.eval();
  bn.zero_grad();
  Tensor x2 = x.detach().clone().set_requires_grad(true);
  const std::vector<float> stats = bn.running_mean.to_vector();
  tinygpt::testing::require_torch_case("batch_norm2d_eval", bn.forward(x2), {x2, bn.weight, bn.bias});
  REQUIRE(bn.running_mean.to_vector() == stats);  // eval leaves the statistics alone

  GroupNorm gn(3, 6);
  gn.weight.copy_from_(filled({6}, 0.8, 0.1) + 1.0f);
  gn.bias.copy_from_(filled({6}, 0.5, 0.7));
  Tensor g = (filled({2, 6, 5}, 0.47, 0.3) * 3.0f - 1.0f).set_requires_grad(true);
  tinygpt::testing::require_torch_case("group_norm", gn.forward(g), {g, gn.weight, gn.bias});

  REQUIRE_THROWS_WITH(bn.forward(Tensor::zeros({2, 3, 2, 2})), Catch::Contains("BatchNorm2d: input [2, 3, 2, 2] is not [N, 4, H, W]"));
  bn.train();
  REQUIRE_THROWS_WITH(BatchNorm1d(2).forward(Tensor::zeros({1, 2})), Catch::Contains("one value per channel"));
  REQUIRE_THROWS_WITH(GroupNorm(4, 6), Catch::Contains("GroupNorm: 6 channels in 4 groups"));
  REQUIRE(BatchNorm1d(3).forward(Tensor::randn({5, 3, 7}, 1)).shape() == Shape{5, 3, 7});
}
