#include <catch2/catch.hpp>

#include "gradcheck.h"

using namespace tinygpt;
using tinygpt::testing::check_gradients;

TEST_CASE("matmul: known values", "[matmul]") {
  Tensor a = Tensor::from_vector({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = Tensor::from_vector({3, 2}, {7, 8, 9, 10, 11, 12});
  REQUIRE(matmul(a, b).to_vector() == std::vector<float>{58, 64, 139, 154});
  // A transposed operand is read in place: aᵀ·a
  REQUIRE(matmul(a.transpose(0, 1), a).to_vector() == std::vector<float>{17, 22, 27, 22, 29, 36, 27, 36, 45});
}

TEST_CASE("matmul: gradients for 2-d, batched, broadcast and transposed operands", "[matmul][grad]") {
  auto mm = [](const std::vector<Tensor>& in) { return matmul(in[0], in[1]); };
  auto u = [](const Shape& s, uint64_t seed) { return Tensor::uniform(s, seed, -1, 1); };
  check_gradients(mm, {u({3, 4}, 1), u({4, 5}, 2)});
  check_gradients(mm, {u({2, 3, 4}, 1), u({4, 5}, 2)});             // folded into one gemm
  check_gradients(mm, {u({2, 3, 4}, 1), u({2, 4, 5}, 2)});          // batched
  check_gradients(mm, {u({2, 1, 3, 4}, 1), u({3, 4, 2}, 2)});       // batch axes broadcast both ways
  check_gradients(mm, {u({3, 4}, 1), u({2, 4, 5}, 2)});             // unbatched A, batched B
  check_gradients(mm, {u({4, 3}, 1).transpose(0, 1), u({5, 4}, 2).transpose(0, 1)});  // both transposed
  check_gradients(mm, {u({2, 4, 3}, 1).transpose(1, 2), u({4, 5}, 2)});  // batched, transposed A
  check_gradients(mm, {u({3, 8}, 1).slice(1, 2, 6), u({4, 5}, 2)});      // a sliced view
}

TEST_CASE("matmul: shape errors name the op and the shapes", "[matmul][errors]") {
  REQUIRE_THROWS_WITH(matmul(Tensor::ones({2, 3}), Tensor::ones({4, 5})),
                      Catch::Contains("matmul: inner dimensions differ: [2, 3] @ [4, 5]"));
  REQUIRE_THROWS_WITH(matmul(Tensor::ones({3}), Tensor::ones({3, 2})), Catch::Contains("at least 2 axes"));
  REQUIRE_THROWS_WITH(matmul(Tensor::ones({2, 2, 3}), Tensor::ones({3, 3, 1})), Catch::Contains("batch"));
}
