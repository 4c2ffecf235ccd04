#include <catch2/catch.hpp>

#include "gradcheck.h"

using namespace tinygpt;
using tinygpt::testing::check_gradients;

TEST_CASE("views: reshape, transpose, permute and slice share storage", "[views]") {
  Tensor x = Tensor::from_vector({2, 3}, {0, 1, 2, 3, 4, 5});
  Tensor t = x.transpose(0, 1);
  REQUIRE(t.shape() == Shape{3, 2});
  REQUIRE(t.strides() == Strides{1, 3});
  REQUIRE(t.to_vector() == std::vector<float>{0, 3, 1, 4, 2, 5});
  REQUIRE(t.data() == x.data());  // no copy
  Tensor s = x.slice(1, 1, 3);
  REQUIRE(s.to_vector() == std::vector<float>{1, 2, 4, 5});
  REQUIRE(s.data() == x.data() + 1);
  REQUIRE(x.view({3, 2}).to_vector() == x.to_vector());
  REQUIRE(x.view({-1}).shape() == Shape{6});
  REQUIRE(x.permute({1, 0}).to_vector() == t.to_vector());
  Tensor c = t.contiguous();
  REQUIRE(c.is_contiguous());
  REQUIRE(c.to_vector() == t.to_vector());
  REQUIRE(t.reshape({6}).to_vector() == std::vector<float>{0, 3, 1, 4, 2, 5});
  auto parts = split(Tensor::from_vector({6}, {0, 1, 2, 3, 4, 5}), 2, 0);
  REQUIRE(parts.size() == 3);
  REQUIRE(parts[2].to_vector() == std::vector<float>{4, 5});
  REQUIRE(concat({parts[2], parts[0]}, 0).to_vector() == std::vector<float>{4, 5, 0, 1});
  // split's pieces are a std::vector, concat's argument: they compose as in libtorch.
  const Tensor m = Tensor::uniform({2, 6}, 3, -1, 1);
  REQUIRE(concat(split(m, 3, 1), 1).to_vector() == m.to_vector());
  // Pieces that do not divide the axis: the last one is shorter, as torch.split.
  const std::vector<Tensor> pieces = split(m, 4, 1);
  REQUIRE(pieces.size() == 2);
  REQUIRE(pieces[0].shape() == Shape{2, 4});
  REQUIRE(pieces[1].shape() == Shape{2, 2});
  REQUIRE(concat(pieces, 1).to_vector() == m.to_vector());
  REQUIRE(split(m, 7, 1).size() == 1);
  check_gradients([](const std::vector<Tensor>& in) { return split(in[0], 4, 1)[1] * 2.0f; }, {m});
}

TEST_CASE("views: bad shapes raise errors naming the op", "[views][errors]") {
  Tensor x = Tensor::ones({2, 3});
  REQUIRE_THROWS_WITH(x.view({4, 2}), Catch::Contains("reshape: cannot view shape [2, 3]"));
  REQUIRE_THROWS_WITH(x.transpose(0, 1).view({6}), Catch::Contains("cannot be seen as [6] without a copy"));
  REQUIRE_THROWS_WITH(x.slice(1, 2, 5), Catch::Contains("slice: range [2, 5)"));
  REQUIRE_THROWS_WITH(x.permute({0, 0}), Catch::Contains("repeated"));
  REQUIRE_THROWS_WITH(split(x, 0, 1), Catch::Contains("split: pieces of 0 elements along axis 1 of shape [2, 3]"));
  REQUIRE_THROWS_WITH(concat({x, Tensor::ones({3, 3})}, 1), Catch::Contains("concat"));
}

TEST_CASE("views: gradients flow back through every view", "[views][grad]") {
  const Tensor x = Tensor::uniform({2, 3, 4}, 1, -1, 1);
  const Tensor w = Tensor::uniform({4, 2, 3}, 2, -1, 1);
  // multiplying by fixed weights makes each position's gradient distinct
  check_gradients([&](const std::vector<Tensor>& in) { return in[0].permute({2, 0, 1}) * w; }, {x});
  check_gradients([&](const std::vector<Tensor>& in) { return in[0].transpose(1, 2).reshape({2, 12}); }, {x});
  check_gradients([&](const std::vector<Tensor>& in) { return in[0].slice(2, 1, 3) * 2.0f; }, {x});
  check_gradients([&](const std::vector<Tensor>& in) { return in[0].view({6, 4}).slice(0, 2, 5); }, {x});
  check_gradients(
      [&](const std::vector<Tensor>& in) {
        auto p = split(in[0], 2, 2);
        return p[1] * p[0] + p[1];  // two pieces of one tensor, one used twice
      },
      {x});
  check_gradients([&](const std::vector<Tensor>& in) { return concat({in[0], in[1].transpose(1, 2)}, 1); },
                  {x, Tensor::uniform({2, 4, 5}, 3, -1, 1)});
}
