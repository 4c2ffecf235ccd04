#include <catch2/catch.hpp>

#include "gradcheck.h"
#include "tinygpt/autograd/profile.h"

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

TEST_CASE("linear: x Wᵀ + b in one op, with and without bias", "[matmul]") {
  Tensor x = Tensor::from_vector({1, 3}, {1, 1, 1});
  Tensor w = Tensor::from_vector({2, 3}, {1, 2, 3, 4, 5, 6});
  REQUIRE(linear(x, w, Tensor::from_vector({2}, {10, 20})).to_vector() == std::vector<float>{16, 35});
  REQUIRE(linear(x, w, Tensor()).to_vector() == std::vector<float>{6, 15});
  auto u = [](const Shape& s, uint64_t seed) { return Tensor::uniform(s, seed, -1, 1); };
  check_gradients([](const std::vector<Tensor>& in) { return linear(in[0], in[1], in[2]); },
                  {u({2, 3, 4}, 1), u({5, 4}, 2), u({5}, 3)});
  check_gradients([](const std::vector<Tensor>& in) { return linear(in[0], in[1], Tensor()); },
                  {u({4, 3}, 1).transpose(0, 1), u({2, 4}, 2)});  // a strided input is copied once
  // The same numbers as matmul + broadcast add.
  const Tensor a = u({6, 7}, 4), wt = u({3, 7}, 5), b = u({3}, 6);
  tinygpt::testing::require_close(linear(a, wt, b).to_vector(), (matmul(a, wt.transpose(0, 1)) + b).to_vector(), 1e-6);
  REQUIRE_THROWS_WITH(linear(Tensor::ones({2, 3}), Tensor::ones({4, 5}), Tensor()),
                      Catch::Contains("linear: input [2, 3] does not fit weight [4, 5]"));
}

TEST_CASE("Profiler: seconds by op family on this thread, while it lives", "[profile]") {
  Tensor a = Tensor::uniform({64, 64}, 1, -1, 1);
  a.set_requires_grad(true);
  const Tensor b = Tensor::uniform({64, 64}, 2, -1, 1);
  OpSeconds families;
  {
    Profiler profiler(families);
    sum(gelu(matmul(a, b))).backward();
  }
  REQUIRE(families.count("matmul") == 1);
  REQUIRE(families.count("gelu") == 1);
  REQUIRE(families.at("matmul") > 0);
  const OpSeconds before = families;
  matmul(a, b);  // no Profiler alive: nothing recorded
  REQUIRE(families == before);
}
