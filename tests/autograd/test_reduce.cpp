#include <catch2/catch.hpp>

#include "gradcheck.h"

using namespace tinygpt;
using tinygpt::testing::check_gradients;
using tinygpt::testing::require_close;

TEST_CASE("reduce: sum and mean known values", "[reduce]") {
  Tensor x = Tensor::from_vector({2, 3}, {1, 2, 3, 4, 5, 6});
  REQUIRE(sum(x).item() == 21.0f);
  REQUIRE(sum(x, {0}).to_vector() == std::vector<float>{5, 7, 9});
  REQUIRE(sum(x, {1}).to_vector() == std::vector<float>{6, 15});
  REQUIRE(sum(x, {-1}, true).shape() == Shape{2, 1});
  REQUIRE(mean(x, {1}).to_vector() == std::vector<float>{2, 5});
  REQUIRE(mean(x).item() == 3.5f);
  Tensor y = Tensor::uniform({3, 4, 5, 2}, 1, -1, 1);
  // Middle and alternating axes against a direct loop.
  std::vector<float> v = y.to_vector(), got = sum(y, {0, 2}).to_vector();
  for (int j = 0; j < 4; ++j)
    for (int l = 0; l < 2; ++l) {
      double s = 0;
      for (int i = 0; i < 3; ++i)
        for (int k = 0; k < 5; ++k) s += v[((i * 4 + j) * 5 + k) * 2 + l];
      REQUIRE(got[j * 2 + l] == Approx(s).margin(1e-5));
    }
  REQUIRE_THROWS_WITH(sum(x, {2}), Catch::Contains("sum: axis 2 out of range"));
  REQUIRE_THROWS_WITH(sum(x, {1, -1}), Catch::Contains("given twice"));
}

TEST_CASE("reduce: gradients over every axis pattern", "[reduce][grad]") {
  const Tensor x = Tensor::uniform({3, 4, 5}, 2, -1, 1);
  const std::vector<Axes> patterns = {{}, {0}, {1}, {2}, {0, 2}, {1, 2}, {0, 1}};
  for (const auto& axes : patterns)
    for (bool keepdim : {false, true}) {
      INFO("axes " << to_string(axes) << " keepdim " << keepdim);
      check_gradients([&](const std::vector<Tensor>& in) { return sum(in[0], axes, keepdim); }, {x});
      check_gradients([&](const std::vector<Tensor>& in) { return mean(in[0], axes, keepdim); }, {x});
    }
}

TEST_CASE("reduce: sum_to_shape undoes broadcasting", "[reduce]") {
  Tensor g = Tensor::ones({2, 3, 4});
  REQUIRE(sum_to_shape(g, {4}).to_vector() == std::vector<float>(4, 6.0f));
  REQUIRE(sum_to_shape(g, {3, 1}).to_vector() == std::vector<float>(3, 8.0f));
  REQUIRE(sum_to_shape(g, {2, 1, 1}).to_vector() == std::vector<float>(2, 12.0f));
  REQUIRE_THROWS_WITH(sum_to_shape(g, {5}), Catch::Contains("sum_to_shape"));
  check_gradients([](const std::vector<Tensor>& in) { return sum_to_shape(in[0], {3, 1}); },
                  {Tensor::uniform({2, 3, 4}, 3, -1, 1)});
}

TEST_CASE("reduce: large sums are exact enough and order-fixed", "[reduce]") {
  Tensor x = Tensor::full({1000, 1000}, 0.1f);
  require_close({sum(x).item()}, {100000.0f}, 1e-4);
  require_close(sum(x, {0}).to_vector(), std::vector<float>(1000, 100.0f), 1e-5);
}
