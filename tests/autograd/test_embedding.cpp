#include <catch2/catch.hpp>

#include "gradcheck.h"

using namespace tinygpt;
using tinygpt::testing::check_gradients;

TEST_CASE("embedding: gathers rows", "[embedding]") {
  Tensor w = Tensor::from_vector({3, 2}, {0, 1, 10, 11, 20, 21});
  std::vector<int32_t> ids = {2, 0, 2};
  Tensor out = embedding(w, ids, {1, 3});
  REQUIRE(out.shape() == Shape{1, 3, 2});
  REQUIRE(out.to_vector() == std::vector<float>{20, 21, 0, 1, 20, 21});
}

TEST_CASE("embedding: repeated ids scatter-add their gradients", "[embedding][grad]") {
  std::vector<int32_t> ids = {1, 3, 1, 0, 1, 3};
  check_gradients([&](const std::vector<Tensor>& in) { return embedding(in[0], ids, {2, 3}); },
                  {Tensor::uniform({5, 4}, 1, -1, 1)});
  Tensor w = Tensor::zeros({5, 2}).set_requires_grad(true);
  sum(embedding(w, ids, {6})).backward();
  REQUIRE(w.grad().to_vector() == std::vector<float>{1, 1, 3, 3, 0, 0, 2, 2, 0, 0});
}

TEST_CASE("embedding: out-of-range ids raise errors", "[embedding][errors]") {
  std::vector<int32_t> ids = {0, 7};
  REQUIRE_THROWS_WITH(embedding(Tensor::ones({5, 2}), ids, {2}),
                      Catch::Contains("embedding: id 7 at position 1 is out of range for 5 rows"));
  std::vector<int32_t> negative = {-1};
  REQUIRE_THROWS_WITH(embedding(Tensor::ones({5, 2}), negative, {1}), Catch::Contains("id -1"));
}
