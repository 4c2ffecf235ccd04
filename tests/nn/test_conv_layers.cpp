// The convolution and pooling layers: libtorch's shapes, names and initialization bounds, and a
// network of them that learns through Sequential.
#include <catch2/catch.hpp>

#include <cmath>

#include "tinygpt/nn/containers.h"
#include "tinygpt/nn/conv.h"

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
