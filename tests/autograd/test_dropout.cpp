#include <catch2/catch.hpp>

#include "gradcheck.h"

using namespace tinygpt;
using tinygpt::testing::check_gradients;

TEST_CASE("dropout: seeded mask, inverted scaling, identity when off", "[dropout]") {
  Tensor x = Tensor::ones({10000});
  std::vector<float> a = dropout(x, 0.25f, 42).to_vector(), b = dropout(x, 0.25f, 42).to_vector();
  REQUIRE(a == b);                                          // same seed, same mask
  REQUIRE(a != dropout(x, 0.25f, 43).to_vector());          // another seed, another mask
  int64_t zeros = 0;
  for (float v : a) {
    REQUIRE((v == 0.0f || v == Approx(1.0f / 0.75f)));
    zeros += v == 0.0f;
  }
  REQUIRE(zeros > 2300);
  REQUIRE(zeros < 2700);
  REQUIRE(dropout(x, 0.25f, 42, /*training=*/false).same_as(x));
  REQUIRE(dropout(x, 0.0f, 42).same_as(x));
  REQUIRE_THROWS_WITH(dropout(x, 1.0f, 1), Catch::Contains("dropout: probability 1"));
}

TEST_CASE("dropout: gradient uses the same mask", "[dropout][grad]") {
  check_gradients([](const std::vector<Tensor>& in) { return dropout(in[0], 0.5f, 7); },
                  {Tensor::uniform({4, 5}, 1, -1, 1)});
}
