// index_select, gather, scatter_add, topk, tril/triu: values against plain loops, gradients against
// finite differences, and out-of-range positions refused before anything is read.
#include <catch2/catch.hpp>

#include <vector>

#include "gradcheck.h"

using namespace tinygpt;
using tinygpt::testing::check_gradients;

TEST_CASE("index_select picks slices in the order given, repeats allowed", "[indexing]") {
  const Tensor x = Tensor::uniform({3, 4, 2}, 4, -1, 1);
  const std::vector<int64_t> index{3, 0, 3};
  const Tensor y = index_select(x, 1, index);
  REQUIRE(y.shape() == Shape{3, 3, 2});
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 2; ++k) REQUIRE(y.at({i, j, k}) == x.at({i, index[j], k}));
  check_gradients([&](const std::vector<Tensor>& in) { return index_select(in[0], 1, index); }, {x});
  check_gradients([&](const std::vector<Tensor>& in) { return index_select(in[0].transpose(0, 1), 0, index); }, {x});
  REQUIRE_THROWS_AS(index_select(x, 1, std::vector<int64_t>{4}), std::out_of_range);
  REQUIRE_THROWS_WITH(index_select(x, 1, std::vector<int64_t>{0, -1}),
                      Catch::Contains("index_select: index -1 (at 1) out of range for axis 1 of shape [3, 4, 2]"));
}

TEST_CASE("gather and scatter_add follow PyTorch's rule on every axis", "[indexing]") {
  const Tensor x = Tensor::uniform({3, 4}, 5, -1, 1);
  const Indices along1({3, 2}, {3, 1, 0, 0, 2, 3});
  const Tensor g1 = gather(x, 1, along1);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 2; ++j) REQUIRE(g1.at({i, j}) == x.at({i, along1.at({i, j})}));
  const Indices along0({2, 4}, {2, 0, 1, 2, 0, 0, 2, 1});
  const Tensor g0 = gather(x, 0, along0);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 4; ++j) REQUIRE(g0.at({i, j}) == x.at({along0.at({i, j}), j}));
  check_gradients([&](const std::vector<Tensor>& in) { return gather(in[0], 1, along1); }, {x});
  check_gradients([&](const std::vector<Tensor>& in) { return gather(in[0], 0, along0); }, {x});

  // scatter_add: repeated positions add up.
  const Tensor src = Tensor::uniform({2, 4}, 6, -1, 1);
  const Tensor s = scatter_add(x, 0, along0, src);
  std::vector<float> want = x.to_vector();
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 4; ++j) want[along0.at({i, j}) * 4 + j] += src.at({i, j});
  testing::require_close(s.to_vector(), want, 1e-6);
  check_gradients([&](const std::vector<Tensor>& in) { return scatter_add(in[0], 0, along0, in[1]) * in[0]; },
                  {x, src});

  REQUIRE_THROWS_WITH(gather(x, 1, Indices({3}, {0, 1, 2})), Catch::Contains("the axes must agree"));
  REQUIRE_THROWS_WITH(gather(x, 1, Indices({4, 1}, {0, 0, 0, 0})), Catch::Contains("larger than the tensor's"));
  REQUIRE_THROWS_AS(gather(x, 1, Indices({1, 1}, {4})), std::out_of_range);
  REQUIRE_THROWS_WITH(scatter_add(x, 0, along0, Tensor::zeros({2, 3})), Catch::Contains("source of shape [2, 3]"));
  REQUIRE_THROWS_WITH(Indices({2, 2}, {1, 2, 3}), Catch::Contains("holds 4 values, not 3"));
}

TEST_CASE("topk sorts, breaks ties by position, and passes gradients to the picked", "[indexing]") {
  const Tensor x = Tensor::from_vector({2, 5}, {1, 5, 3, 5, -2, 0, -1, 7, 2, 2});
  const TopK top = topk(x, 3);
  REQUIRE(top.values.to_vector() == std::vector<float>{5, 5, 3, 7, 2, 2});
  REQUIRE(top.indices.values == std::vector<int64_t>{1, 3, 2, 2, 3, 4});
  const TopK low = topk(x, 2, 1, false);
  REQUIRE(low.values.to_vector() == std::vector<float>{-2, 1, -1, 0});
  const TopK down = topk(x, 1, 0);  // along the first axis
  REQUIRE(down.indices.values == std::vector<int64_t>{0, 0, 1, 0, 1});
  // Distinct values 0.1 apart, so that the finite differences never change which are picked.
  std::vector<float> spaced;
  for (int64_t v : randperm(18, 7)) spaced.push_back(0.1f * static_cast<float>(v));
  const Tensor r = Tensor::from_vector({3, 6}, spaced);
  check_gradients([](const std::vector<Tensor>& in) { return topk(in[0], 2, 1).values; }, {r});
  REQUIRE_THROWS_WITH(topk(x, 6), Catch::Contains("topk: k = 6"));
}

TEST_CASE("tril and triu keep a band of diagonals", "[indexing]") {
  const Tensor x = Tensor::uniform({2, 3, 4}, 8, 1, 2);
  const Tensor lower = tril(x), upper = triu(x, 1);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t r = 0; r < 3; ++r)
      for (int64_t c = 0; c < 4; ++c) {
        REQUIRE(lower.at({b, r, c}) == (c <= r ? x.at({b, r, c}) : 0.0f));
        REQUIRE(upper.at({b, r, c}) == (c >= r + 1 ? x.at({b, r, c}) : 0.0f));
      }
  REQUIRE(sum(tril(Tensor::ones({3, 3}), -1)).item() == 3.0f);
  check_gradients([](const std::vector<Tensor>& in) { return tril(in[0], 1) * triu(in[0]); }, {x});
  REQUIRE_THROWS_WITH(tril(Tensor::ones({3})), Catch::Contains("tril: needs at least 2 axes"));
}

TEST_CASE("embedding takes int64 ids as Indices", "[indexing][embedding]") {
  const Tensor table = Tensor::uniform({5, 3}, 9, -1, 1);
  const Indices ids({2, 2}, {4, 0, 4, 2});
  const Tensor rows = embedding(table, ids);
  REQUIRE(rows.shape() == Shape{2, 2, 3});
  REQUIRE(rows.to_vector() == embedding(table, std::vector<int32_t>{4, 0, 4, 2}, {2, 2}).to_vector());
  REQUIRE_THROWS_AS(embedding(table, Indices({1}, {int64_t{1} << 40})), std::out_of_range);
  REQUIRE_THROWS_AS(embedding(table, Indices({1}, {5})), std::out_of_range);
}
