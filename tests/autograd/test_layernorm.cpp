#include <catch2/catch.hpp>

#include "gradcheck.h"

using namespace tinygpt;
using tinygpt::testing::check_gradients;
using tinygpt::testing::require_close;

TEST_CASE("layer_norm: known values", "[layernorm]") {
  // Row [1, 2, 3, 4]: mean 2.5, var 1.25 -> (x - 2.5) / sqrt(1.25 + 1e-5)
  Tensor x = Tensor::from_vector({1, 4}, {1, 2, 3, 4});
  Tensor y = layer_norm(x, Tensor::ones({4}), Tensor::zeros({4}));
  const float s = 1.0f / std::sqrt(1.25f + 1e-5f);
  require_close(y.to_vector(), {-1.5f * s, -0.5f * s, 0.5f * s, 1.5f * s});
  Tensor y2 = layer_norm(x, Tensor::full({4}, 2.0f), Tensor::full({4}, 1.0f));
  require_close(y2.to_vector(), {1 - 3 * s, 1 - s, 1 + s, 1 + 3 * s});
  // A constant row normalizes to the bias, not NaN.
  require_close(layer_norm(Tensor::full({1, 3}, 5.0f), Tensor::ones({3}), Tensor::full({3}, 0.5f)).to_vector(),
                {0.5f, 0.5f, 0.5f});
}

TEST_CASE("layer_norm: gradients for input, weight and bias", "[layernorm][grad]") {
  check_gradients([](const std::vector<Tensor>& in) { return layer_norm(in[0], in[1], in[2]); },
                  {Tensor::uniform({2, 3, 6}, 1, -2, 2), Tensor::uniform({6}, 2, 0.5, 1.5),
                   Tensor::uniform({6}, 3, -1, 1)});
  // More rows than one gradient chunk, and a strided input.
  check_gradients([](const std::vector<Tensor>& in) { return layer_norm(in[0].transpose(0, 1), in[1], in[2]); },
                  {Tensor::uniform({5, 70}, 4, -2, 2), Tensor::uniform({5}, 5, 0.5, 1.5),
                   Tensor::uniform({5}, 6, -1, 1)},
                  {1e-2, 1e-2, 2e-2});
}

TEST_CASE("layer_norm: rows in groups and rows alone give the same bits", "[layernorm]") {
  // 9 rows: two groups of four and one alone; 13 columns: one block of 8 lanes and a tail of 5.
  const Tensor x = Tensor::uniform({9, 13}, 7, -2, 2), w = Tensor::uniform({13}, 8, 0.5, 1.5),
               b = Tensor::uniform({13}, 9, -1, 1);
  const std::vector<float> together = layer_norm(x, w, b).to_vector();
  for (int64_t r = 0; r < 9; ++r) {
    const std::vector<float> alone = layer_norm(x.slice(0, r, r + 1), w, b).to_vector();
    REQUIRE(std::equal(alone.begin(), alone.end(), together.begin() + r * 13));
  }
  check_gradients([](const std::vector<Tensor>& in) { return layer_norm(in[0], in[1], in[2]); },
                  {x, w, b}, {1e-2, 1e-2, 2e-2});
}

TEST_CASE("layer_norm: shape errors", "[layernorm][errors]") {
  REQUIRE_THROWS_WITH(layer_norm(Tensor::ones({2, 4}), Tensor::ones({3}), Tensor::zeros({4})),
                      Catch::Contains("layer_norm: input [2, 4] needs weight and bias [4], got [3] and [4]"));
}
