// sigmoid, pow, abs; max / min / argmax / argmin, where, masked_fill; mse_loss and
// binary_cross_entropy_with_logits; attention over every key with a padding mask; printing.
#include <catch2/catch.hpp>

#include <cmath>
#include <sstream>

#include "gradcheck.h"

using namespace tinygpt;
using tinygpt::testing::check_gradients;
using tinygpt::testing::require_close;

namespace {
Tensor rnd(const Shape& s, uint64_t seed, float lo = -1.5f, float hi = 1.5f) { return Tensor::uniform(s, seed, lo, hi); }
}  // namespace

TEST_CASE("sigmoid, pow, abs: known values and gradients", "[elementwise][grad]") {
  require_close(sigmoid(Tensor::from_vector({4}, {0, 2, -2, -100})).to_vector(),
                {0.5f, 0.8807970780f, 0.1192029220f, 0.0f});
  REQUIRE(sigmoid(Tensor::from_vector({1}, {100})).item() == 1.0f);  // no overflow either way
  require_close(tinygpt::pow(Tensor::from_vector({3}, {2, -3, 0.5f}), 3.0f).to_vector(), {8, -27, 0.125f});
  require_close(tinygpt::pow(Tensor::from_vector({2}, {4, 9}), 0.5f).to_vector(), {2, 3});
  REQUIRE(tinygpt::abs(Tensor::from_vector({3}, {-2, 0, 3})).to_vector() == std::vector<float>{2, 0, 3});
  check_gradients([](const std::vector<Tensor>& in) { return sigmoid(in[0]); }, {rnd({3, 4}, 1, -4, 4)});
  check_gradients([](const std::vector<Tensor>& in) { return tinygpt::pow(in[0], 3.0f); }, {rnd({3, 4}, 2)});
  check_gradients([](const std::vector<Tensor>& in) { return tinygpt::pow(in[0], -1.5f); }, {rnd({3, 4}, 3, 0.5f, 2.0f)});
  // abs away from its kink at 0 (the finite difference straddles it there)
  check_gradients([](const std::vector<Tensor>& in) { return tinygpt::abs(in[0]); },
                  {Tensor::from_vector({4}, {-1.3f, -0.4f, 0.6f, 1.2f})});
}

TEST_CASE("max, min, argmax, argmin over an axis", "[select][grad]") {
  const Tensor x = Tensor::from_vector({2, 3}, {1, 5, 5, -2, -7, 0});
  REQUIRE(tinygpt::max(x, 1).to_vector() == std::vector<float>{5, 0});
  REQUIRE(tinygpt::max(x, 1, true).shape() == Shape{2, 1});
  REQUIRE(tinygpt::min(x, 0).to_vector() == std::vector<float>{-2, -7, 0});
  REQUIRE(argmax(x, 1) == std::vector<int64_t>{1, 2});  // the first of two maxima
  REQUIRE(argmin(x, -1) == std::vector<int64_t>{0, 1});
  REQUIRE(argmax(x, 0) == std::vector<int64_t>{0, 0, 0});
  REQUIRE(std::isnan(tinygpt::max(Tensor::from_vector({3}, {1, NAN, 2}), 0).item()));  // NaN propagates
  REQUIRE_THROWS_WITH(tinygpt::max(x, 2), Catch::Contains("axis 2 out of range"));
  // Gradients reach the chosen element only; distinct values keep finite differences away from ties.
  const Tensor distinct = Tensor::from_vector({2, 3, 4}, [] {
    std::vector<float> v(24);
    for (int i = 0; i < 24; ++i) v[i] = static_cast<float>((i * 7) % 24) * 0.25f - 3.0f;
    return v;
  }());
  for (int64_t axis : {0, 1, 2}) {
    check_gradients([axis](const std::vector<Tensor>& in) { return tinygpt::max(in[0], axis); }, {distinct});
    check_gradients([axis](const std::vector<Tensor>& in) { return tinygpt::min(in[0], axis, true); }, {distinct});
  }
}

TEST_CASE("where and masked_fill broadcast and route gradients", "[select][grad]") {
  const Tensor cond = Tensor::from_vector({2, 1}, {1, 0});
  const Tensor a = Tensor::from_vector({2, 3}, {1, 2, 3, 4, 5, 6}), b = Tensor::from_vector({3}, {-1, -2, -3});
  REQUIRE(where(cond, a, b).to_vector() == std::vector<float>{1, 2, 3, -1, -2, -3});
  const Tensor mask = Tensor::from_vector({3}, {0, 1, 0});
  REQUIRE(masked_fill(a, mask, -INFINITY).to_vector() == std::vector<float>{1, -INFINITY, 3, 4, -INFINITY, 6});
  REQUIRE_THROWS_WITH(masked_fill(a, Tensor::ones({2, 2}), 0.0f), Catch::Contains("masked_fill") &&
                                                                     Catch::Contains("[2, 2]"));
  check_gradients([&](const std::vector<Tensor>& in) { return where(cond, in[0], in[1]); }, {rnd({2, 3}, 1), rnd({3}, 2)});
  check_gradients([&](const std::vector<Tensor>& in) { return masked_fill(in[0], mask, 7.0f); }, {rnd({2, 3}, 3)});
}

TEST_CASE("mse_loss and binary_cross_entropy_with_logits: values and gradients", "[losses][grad]") {
  const Tensor p = Tensor::from_vector({2, 2}, {1, 2, 3, 4}), t = Tensor::from_vector({2, 2}, {1, 0, 5, 4});
  REQUIRE(mse_loss(p, t).item() == Approx((0 + 4 + 4 + 0) / 4.0));
  // BCE of sigmoid(x) against t: -[t log s + (1 - t) log(1 - s)], also for logits far from 0.
  const std::vector<float> xs = {0.5f, -2.0f, 30.0f, -30.0f}, ts = {1, 0, 0, 0.25f};
  double want = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const double x = xs[i], s = 1 / (1 + std::exp(-x));
    want += x > 20 || x < -20 ? std::max(x, 0.0) - x * ts[i] + std::log1p(std::exp(-std::abs(x)))
                              : -(ts[i] * std::log(s) + (1 - ts[i]) * std::log(1 - s));
  }
  REQUIRE(binary_cross_entropy_with_logits(Tensor::from_vector({4}, xs), Tensor::from_vector({4}, ts)).item() ==
          Approx(want / 4).epsilon(1e-6));
  REQUIRE_THROWS_WITH(mse_loss(p, Tensor::ones({4})), Catch::Contains("mse_loss") && Catch::Contains("differ in shape"));
  check_gradients([](const std::vector<Tensor>& in) { return mse_loss(in[0], in[1]); }, {rnd({3, 2}, 4), rnd({3, 2}, 5)});
  check_gradients([](const std::vector<Tensor>& in) { return binary_cross_entropy_with_logits(in[0], in[1]); },
                  {rnd({3, 2}, 6, -3, 3), rnd({3, 2}, 7, 0, 1)});
  // The reductions: the terms (none), their sum, their mean; batchmean is kl_div's alone.
  REQUIRE(mse_loss(p, t, Reduction::none).to_vector() == std::vector<float>{0, 4, 4, 0});
  REQUIRE(mse_loss(p, t, Reduction::sum).item() == 8.0f);
  const Tensor x4 = Tensor::from_vector({4}, xs), t4 = Tensor::from_vector({4}, ts);
  const std::vector<float> terms = binary_cross_entropy_with_logits(x4, t4, Reduction::none).to_vector();
  REQUIRE(terms.size() == 4);
  double total = 0;
  for (float v : terms) total += v;
  REQUIRE(total == Approx(want).epsilon(1e-6));
  REQUIRE(binary_cross_entropy_with_logits(x4, t4, Reduction::sum).item() == Approx(want).epsilon(1e-6));
  REQUIRE_THROWS_WITH(mse_loss(p, t, Reduction::batchmean), Catch::Contains("batchmean"));
  check_gradients([](const std::vector<Tensor>& in) { return mse_loss(in[0], in[1], Reduction::none); },
                  {rnd({3, 2}, 4), rnd({3, 2}, 5)});
  check_gradients(
      [](const std::vector<Tensor>& in) { return binary_cross_entropy_with_logits(in[0], in[1], Reduction::none); },
      {rnd({3, 2}, 6, -3, 3), rnd({3, 2}, 7, 0, 1)});
}

TEST_CASE("attention over every key: the four steps, a padding mask, gradients", "[attention][grad]") {
  const Tensor q = rnd({2, 2, 3, 4}, 1), k = rnd({2, 2, 5, 4}, 2), v = rnd({2, 2, 5, 3}, 3);
  const AttentionResult r = attention(q, k, v);
  REQUIRE(r.y.shape() == Shape{2, 2, 3, 3});
  // Against plain loops in double.
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t i = 0; i < 3; ++i) {
        std::vector<double> w(5);
        double total = 0;
        for (int64_t j = 0; j < 5; ++j) {
          double s = 0;
          for (int64_t d = 0; d < 4; ++d) s += double(q.at({b, h, i, d})) * k.at({b, h, j, d});
          total += w[j] = std::exp(s / 2.0);  // sqrt(d_k) = 2
        }
        for (int64_t c = 0; c < 3; ++c) {
          double y = 0;
          for (int64_t j = 0; j < 5; ++j) y += w[j] / total * v.at({b, h, j, c});
          REQUIRE(r.y.at({b, h, i, c}) == Approx(y).margin(1e-6));
        }
      }
  // Padded keys (1 = ignore) get weight exactly 0.
  const Tensor mask = Tensor::from_vector({2, 5}, {0, 0, 0, 1, 1, 1, 0, 0, 0, 0});
  const AttentionResult masked = attention(q, k, v, mask);
  for (int64_t i = 0; i < 3; ++i) {
    REQUIRE(masked.weights.at({0, 1, i, 3}) == 0.0f);
    REQUIRE(masked.weights.at({0, 1, i, 4}) == 0.0f);
    REQUIRE(masked.weights.at({1, 0, i, 0}) == 0.0f);
  }
  REQUIRE_THROWS_WITH(attention(q, k, v, Tensor::ones({2, 5})), Catch::Contains("every key of batch row 0 is masked"));
  REQUIRE_THROWS_WITH(attention(q, k, rnd({2, 2, 4, 3}, 9)), Catch::Contains("key and value differ in length"));
  check_gradients([&](const std::vector<Tensor>& in) { return attention(in[0], in[1], in[2], mask).y; },
                  {rnd({2, 1, 3, 4}, 4), rnd({2, 1, 5, 4}, 5), rnd({2, 1, 5, 2}, 6)});
}

TEST_CASE("printing a tensor shows its shape and values, elided when large", "[tensor]") {
  std::ostringstream small, big, scalar;
  small << Tensor::from_vector({2, 2}, {1, -2.5f, 3, 4}).set_requires_grad(true);
  REQUIRE(small.str() == "tensor([[ 1.0000, -2.5000],\n        [ 3.0000,  4.0000]], shape=[2, 2], requires_grad=true)");
  scalar << Tensor::scalar(0.5f);
  REQUIRE(scalar.str() == "tensor(0.5000)");
  big << Tensor::zeros({100, 100});
  REQUIRE(big.str().find("...") != std::string::npos);
  REQUIRE(big.str().size() < 1000);
  REQUIRE(big.str().find("shape=[100, 100]") != std::string::npos);
}
