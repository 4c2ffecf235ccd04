#include <catch2/catch.hpp>

#include <cmath>

#include "gradcheck.h"

using namespace tinygpt;
using tinygpt::testing::check_gradients;

TEST_CASE("cross_entropy: known values", "[cross_entropy]") {
  // Uniform logits over 4 classes: loss = ln 4 whatever the target.
  std::vector<int32_t> t = {0, 3};
  REQUIRE(cross_entropy(Tensor::zeros({2, 4}), t).item() == Approx(std::log(4.0)).epsilon(1e-6));
  // Hand-computed: logits [1, 2, 3], target 2: ln(e + e^2 + e^3) - 3 = 0.40760596
  std::vector<int32_t> t2 = {2};
  REQUIRE(cross_entropy(Tensor::from_vector({1, 3}, {1, 2, 3}), t2).item() == Approx(0.40760596).epsilon(1e-6));
  // Extreme logits stay finite.
  REQUIRE(std::isfinite(cross_entropy(Tensor::from_vector({1, 3}, {1e4f, -1e4f, 0}), t2).item()));
}

TEST_CASE("cross_entropy: ignore_index leaves rows out of the mean", "[cross_entropy]") {
  Tensor logits = Tensor::from_vector({2, 3}, {1, 2, 3, 5, 0, 0});
  std::vector<int32_t> t = {2, -100};
  REQUIRE(cross_entropy(logits, t).item() == Approx(0.40760596).epsilon(1e-6));
  // Every row ignored: NaN and a zero gradient, as torch.nn.functional.cross_entropy, fused or with
  // options (weights take the other path).
  for (bool weighted : {false, true}) {
    Tensor x = logits.clone();
    x.set_requires_grad(true);
    const std::vector<int64_t> none = {-100, -100};
    CrossEntropyOptions o;
    if (weighted) o.weight = Tensor::from_vector({3}, {1, 2, 3});
    const Tensor loss = cross_entropy(x, none, o);
    REQUIRE(std::isnan(loss.item()));
    loss.backward();
    REQUIRE(x.grad().to_vector() == std::vector<float>(6, 0.0f));
  }
}

TEST_CASE("cross_entropy: gradients, with and without ignored rows, over [B, T, V]", "[cross_entropy][grad]") {
  std::vector<int32_t> t = {0, 4, 2, 1, 3, 3};
  check_gradients([&](const std::vector<Tensor>& in) { return cross_entropy(in[0], t); },
                  {Tensor::uniform({2, 3, 5}, 1, -2, 2)});
  std::vector<int32_t> t2 = {0, -1, 2, -1, 3, 3};
  check_gradients([&](const std::vector<Tensor>& in) { return cross_entropy(in[0], t2, -1); },
                  {Tensor::uniform({6, 5}, 2, -2, 2)});
}

TEST_CASE("cross_entropy: bad targets raise errors", "[cross_entropy][errors]") {
  std::vector<int32_t> out_of_range = {0, 5};
  REQUIRE_THROWS_WITH(cross_entropy(Tensor::zeros({2, 5}), out_of_range),
                      Catch::Contains("target 5 at position 1 is out of range for 5 classes"));
  std::vector<int32_t> negative = {-3, 0};
  REQUIRE_THROWS_WITH(cross_entropy(Tensor::zeros({2, 5}), negative), Catch::Contains("target -3"));
  std::vector<int32_t> too_few = {0};
  REQUIRE_THROWS_WITH(cross_entropy(Tensor::zeros({2, 5}), too_few), Catch::Contains("1 targets for logits of shape [2, 5]"));
}

TEST_CASE("cross_entropy: int64 targets (argmax's) give the int32 result", "[cross_entropy]") {
  const Tensor logits = Tensor::uniform({4, 5}, 3, -2, 2);
  const std::vector<int64_t> predicted = argmax(logits, 1);
  const std::vector<int32_t> narrow(predicted.begin(), predicted.end());
  REQUIRE(cross_entropy(logits, predicted).item() == cross_entropy(logits, narrow).item());
  REQUIRE_THROWS_WITH(cross_entropy(logits, std::vector<int64_t>{0, 1, 2, int64_t{1} << 40}),
                      Catch::Contains("target 1099511627776 at position 3 is not a class"));
}
