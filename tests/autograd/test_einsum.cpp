// einsum's common forms against torch.einsum (tests/reference/torch_ops.txt), its gradients
// against finite differences, and the equations it refuses.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "torch_fixture.h"

using namespace tinygpt;
using tinygpt::testing::check_gradients;
using tinygpt::testing::filled;
using tinygpt::testing::require_close;

TEST_CASE("einsum: the common forms equal torch.einsum", "[einsum]") {
  const Tensor a = filled({3, 4}, 0.31, 0.2), b = filled({4, 5}, 0.27, 0.9), c = filled({5, 2}, 0.63, 0.1);
  const Tensor a3 = filled({2, 3, 4}, 0.41, 0.5), b3 = filled({2, 4, 5}, 0.23, 0.7);
  const Tensor v = filled({4}, 0.5, 0.3), w = filled({5}, 0.7, 0.6);
  const Tensor q = filled({2, 2, 3, 4}, 0.19, 0.4), k = filled({2, 2, 5, 4}, 0.37, 0.8);
  const std::vector<std::tuple<std::string, std::string, std::vector<Tensor>, Shape>> cases = {
      {"mm", "ij,jk->ik", {a, b}, {3, 5}},
      {"bmm", "bij,bjk->bik", {a3, b3}, {2, 3, 5}},
      {"transpose", "ij->ji", {a}, {4, 3}},
      {"total", "ij->", {a}, {}},
      {"dot", "i,i->", {v, v}, {}},
      {"outer", "i,j->ij", {v, w}, {4, 5}},
      {"scores", "bhqd,bhkd->bhqk", {q, k}, {2, 2, 3, 5}},
      {"chain", "ij,jk,kl->il", {a, b, c}, {3, 2}},
      {"implicit", "ij,jk", {a, b}, {3, 5}},
      {"partial", "bij->jb", {a3}, {4, 2}},
      {"hadamard", " ij , ij -> ij ", {a, a}, {3, 4}}};
  for (const auto& [name, equation, operands, shape] : cases) {
    INFO(equation);
    const Tensor out = einsum(equation, operands);
    REQUIRE(out.shape() == shape);
    require_close(out.to_vector(), tinygpt::testing::torch_values().at("einsum." + name), 2e-5);
  }
  REQUIRE(einsum("ij,jk->ik", {a, b}).to_vector() == matmul(a, b).to_vector());  // the same product
}

TEST_CASE("einsum: gradients through every form", "[einsum][grad]") {
  const Tensor a = Tensor::uniform({3, 4}, 1, -1, 1), b = Tensor::uniform({4, 5}, 2, -1, 1),
               c = Tensor::uniform({5, 2}, 3, -1, 1), a3 = Tensor::uniform({2, 3, 4}, 4, -1, 1);
  check_gradients([](const std::vector<Tensor>& in) { return einsum("ij,jk,kl->li", in); }, {a, b, c});
  check_gradients([](const std::vector<Tensor>& in) { return einsum("bij,jk->kb", in); }, {a3, b});
  check_gradients([](const std::vector<Tensor>& in) { return einsum("ij,ij->i", in); }, {a, Tensor::uniform({3, 4}, 5, -1, 1)});
}

TEST_CASE("einsum: equations it cannot compute are errors naming the equation", "[einsum][errors]") {
  const Tensor a = Tensor::zeros({3, 4}), b = Tensor::zeros({5, 6});
  REQUIRE_THROWS_WITH(einsum("ij,jk->ik", {a, b}), Catch::Contains("einsum: 'j' is 4 in one operand and 5 in another"));
  REQUIRE_THROWS_WITH(einsum("ij->ij", {a, a}), Catch::Contains("names 1 operands; 2 given"));
  REQUIRE_THROWS_WITH(einsum("ijk->i", {a}), Catch::Contains("operand 0 has 2 axes, named by 'ijk'"));
  REQUIRE_THROWS_WITH(einsum("ii->i", {Tensor::zeros({3, 3})}), Catch::Contains("'i' twice in one operand"));
  REQUIRE_THROWS_WITH(einsum("...ij->ij", {a}), Catch::Contains("ellipses"));
  REQUIRE_THROWS_WITH(einsum("ij->ik", {a}), Catch::Contains("output letter 'k'"));
  REQUIRE_THROWS_WITH(einsum("i1->i", {a}), Catch::Contains("'1' is not a letter"));
}
