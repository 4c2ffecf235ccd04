#include <catch2/catch.hpp>

#include <cmath>

#include "gradcheck.h"

using namespace tinygpt;
using tinygpt::testing::check_gradients;
using tinygpt::testing::require_close;

TEST_CASE("softmax: known values and extreme logits", "[softmax]") {
  require_close(softmax(Tensor::from_vector({3}, {1, 2, 3})).to_vector(), {0.09003057f, 0.24472847f, 0.66524096f});
  // Huge logits: no overflow, no NaN.
  std::vector<float> big = softmax(Tensor::from_vector({3}, {1000, 1001, 1002})).to_vector();
  require_close(big, {0.09003057f, 0.24472847f, 0.66524096f});
  std::vector<float> ls = log_softmax(Tensor::from_vector({2, 2}, {-1e4f, -1e4f, 0, -1e4f})).to_vector();
  for (float x : ls) REQUIRE(std::isfinite(x));
  require_close(ls, {-0.6931472f, -0.6931472f, 0, -1e4f});
}

TEST_CASE("softmax: rows sum to one", "[softmax]") {
  std::vector<float> y = softmax(Tensor::uniform({7, 13}, 1, -20, 20)).to_vector();
  for (int r = 0; r < 7; ++r) {
    double s = 0;
    for (int j = 0; j < 13; ++j) s += y[r * 13 + j];
    REQUIRE(s == Approx(1.0).epsilon(1e-6));
  }
}

TEST_CASE("softmax: gradients", "[softmax][grad]") {
  const Tensor x = Tensor::uniform({3, 5}, 2, -2, 2);
  check_gradients([](const std::vector<Tensor>& in) { return softmax(in[0]); }, {x});
  check_gradients([](const std::vector<Tensor>& in) { return log_softmax(in[0]); }, {x});
  check_gradients([](const std::vector<Tensor>& in) { return softmax(in[0].transpose(0, 1)); }, {x});
}
