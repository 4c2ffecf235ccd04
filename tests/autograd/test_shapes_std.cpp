// Shapes, axes and tensor lists at the public surface are plain standard types: the lines a
// libtorch user writes compile and mean what they mean there. Plus the view ops built on them.
#include <catch2/catch.hpp>

#include <vector>

#include "gradcheck.h"

using namespace tinygpt;
using tinygpt::testing::check_gradients;

TEST_CASE("shapes and axes: std::vector in and out, one axis alone", "[views][api]") {
  const Tensor x = Tensor::uniform({2, 3, 4}, 1, -1, 1);
  std::vector<int64_t> s = x.shape();  // a plain std::vector
  REQUIRE(s == std::vector<int64_t>{2, 3, 4});
  REQUIRE(x.shape() == std::vector<int64_t>{2, 3, 4});
  const std::vector<int64_t> dims{4, 6};
  REQUIRE(Tensor::zeros(dims).shape() == Shape{4, 6});
  REQUIRE(x.reshape(dims).shape() == Shape{4, 6});
  const std::vector<int64_t> axes{0, 2};
  REQUIRE(mean(x, axes).shape() == Shape{3});
  REQUIRE(sum(x, 1).shape() == Shape{2, 4});
  REQUIRE(sum(x, -1, true).shape() == Shape{2, 3, 1});
  REQUIRE(sum(x, {}).shape() == Shape{});  // empty braces: every axis, never axis 0
  REQUIRE(sum(x, 1).to_vector() == sum(x, {1}).to_vector());
  REQUIRE(concat(split(x, 1, 1), 1).to_vector() == x.to_vector());
}

TEST_CASE("views: unsqueeze, squeeze, flatten, expand, clone", "[views]") {
  const Tensor x = Tensor::from_vector({2, 3}, {0, 1, 2, 3, 4, 5});
  REQUIRE(x.unsqueeze(0).shape() == Shape{1, 2, 3});
  REQUIRE(x.unsqueeze(-1).shape() == Shape{2, 3, 1});
  REQUIRE(x.unsqueeze(1).unsqueeze(0).squeeze().shape() == Shape{2, 3});
  REQUIRE(x.unsqueeze(1).squeeze(1).shape() == Shape{2, 3});
  REQUIRE(x.squeeze(0).shape() == Shape{2, 3});  // not of size 1: unchanged, as PyTorch
  REQUIRE(Tensor::zeros({2, 3, 4, 5}).flatten(1, 2).shape() == Shape{2, 12, 5});
  REQUIRE(x.transpose(0, 1).flatten().to_vector() == std::vector<float>{0, 3, 1, 4, 2, 5});
  const Tensor e = Tensor::from_vector({3, 1}, {1, 2, 3}).expand({2, 3, 4});
  REQUIRE(e.shape() == Shape{2, 3, 4});
  REQUIRE(e.at({1, 2, 3}) == 3.0f);
  REQUIRE(e.strides() == Strides{0, 1, 0});
  REQUIRE(x.expand({-1, 3}).shape() == Shape{2, 3});
  const Tensor c = x.clone();
  REQUIRE(c.data() != x.data());
  REQUIRE(c.to_vector() == x.to_vector());
  REQUIRE_THROWS_WITH(x.unsqueeze(3), Catch::Contains("unsqueeze: axis 3 out of range"));
  REQUIRE_THROWS_WITH(x.expand({4, 3}), Catch::Contains("expand: shape [2, 3] cannot be expanded to [4, 3]"));
  REQUIRE_THROWS_WITH(x.flatten(1, 0), Catch::Contains("flatten"));
  REQUIRE_THROWS_WITH(stack({x, Tensor::zeros({3, 2})}), Catch::Contains("stack: shapes [2, 3] and [3, 2] differ"));

  const Tensor st = stack({x, x * 10.0f}, 1);  // [2, 2, 3]
  REQUIRE(st.shape() == Shape{2, 2, 3});
  REQUIRE(st.at({1, 1, 2}) == 50.0f);
  REQUIRE(st.at({1, 0, 2}) == 5.0f);
}

TEST_CASE("views: gradients of unsqueeze, squeeze, flatten, expand, clone and stack", "[views][grad]") {
  const Tensor a = Tensor::uniform({2, 1, 3}, 2, -1, 1), b = Tensor::uniform({2, 1, 3}, 3, -1, 1);
  check_gradients([](const std::vector<Tensor>& in) { return in[0].squeeze(1).unsqueeze(0).flatten() * 2.0f; }, {a});
  check_gradients([](const std::vector<Tensor>& in) { return in[0].expand({4, 2, 5, 3}) * in[0].expand({4, 2, 5, 3}); },
                  {a});
  check_gradients([](const std::vector<Tensor>& in) { return in[0].transpose(0, 2).clone() * in[0].transpose(0, 2); },
                  {a});
  check_gradients([](const std::vector<Tensor>& in) { return stack({in[0], in[1] * in[0]}, 2); }, {a, b});
}
