// var, std, norm, logsumexp, cumsum, softmax on any axis, maximum/minimum and comparisons: values
// against plain double loops, gradients against finite differences.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <cmath>
#include <set>
#include <vector>

#include "gradcheck.h"

using namespace tinygpt;
using tinygpt::testing::check_gradients;
using tinygpt::testing::require_close;

TEST_CASE("var, std and norm match plain loops", "[statistics]") {
  const Tensor x = Tensor::uniform({3, 5}, 11, -2, 2);
  const std::vector<float> v = x.to_vector();
  std::vector<float> var1, var0, norm2, norm1, norm3;
  for (int r = 0; r < 3; ++r) {
    double m = 0, s2 = 0, a = 0, c = 0;
    for (int j = 0; j < 5; ++j) m += v[r * 5 + j] / 5.0;
    for (int j = 0; j < 5; ++j) {
      const double d = v[r * 5 + j];
      s2 += (d - m) * (d - m), a += std::abs(d), c += std::pow(std::abs(d), 3.0);
    }
    var1.push_back(static_cast<float>(s2 / 4)), var0.push_back(static_cast<float>(s2 / 5));
    double q = 0;
    for (int j = 0; j < 5; ++j) q += double(v[r * 5 + j]) * v[r * 5 + j];
    norm2.push_back(static_cast<float>(std::sqrt(q))), norm1.push_back(static_cast<float>(a));
    norm3.push_back(static_cast<float>(std::cbrt(c)));
  }
  require_close(var(x, 1).to_vector(), var1);
  require_close(var(x, 1, 0).to_vector(), var0);
  std::vector<float> sd;
  for (float w : var1) sd.push_back(std::sqrt(w));
  require_close(tinygpt::std(x, 1).to_vector(), sd);
  require_close(norm(x, 2, 1).to_vector(), norm2);
  require_close(norm(x, 1, 1).to_vector(), norm1);
  require_close(norm(x, 3, 1).to_vector(), norm3);
  REQUIRE(var(x, {}, 1, true).shape() == Shape{1, 1});
  check_gradients([](const std::vector<Tensor>& in) { return var(in[0], 0); }, {x});
  check_gradients([](const std::vector<Tensor>& in) { return tinygpt::std(in[0], {0, 1}); }, {x});
  check_gradients([](const std::vector<Tensor>& in) { return norm(in[0], 3.0f, 1) + norm(in[0]); }, {x});
  REQUIRE_THROWS_WITH(norm(x, 0.0f), Catch::Contains("norm: p = 0"));
}

namespace {
// The gradient of sum(f(x)) at x, as a vector.
std::vector<float> gradient_of(const std::function<Tensor(const Tensor&)>& f, const Tensor& value) {
  Tensor x = value.clone();
  x.set_requires_grad(true);
  sum(f(x)).backward();
  return x.grad().to_vector();
}
}  // namespace

TEST_CASE("norm and std take PyTorch's subgradients where the chain rule divides by zero", "[statistics][grad]") {
  // torch.linalg.vector_norm / torch.norm and torch.std backward, float32, the same inputs.
  REQUIRE(gradient_of([](const Tensor& x) { return norm(x); }, Tensor::zeros({3})) == std::vector<float>{0, 0, 0});
  REQUIRE(gradient_of([](const Tensor& x) { return norm(x, 3.0f); }, Tensor::zeros({2})) == std::vector<float>{0, 0});
  require_close(gradient_of([](const Tensor& x) { return norm(x); }, Tensor::from_vector({2}, {3, 4})), {0.6f, 0.8f});
  require_close(gradient_of([](const Tensor& x) { return norm(x, 3.0f); }, Tensor::from_vector({2}, {0, 2})), {0, 1});
  require_close(gradient_of([](const Tensor& x) { return norm(x, 1.5f); }, Tensor::from_vector({2}, {0, 1})), {0, 1});
  require_close(gradient_of([](const Tensor& x) { return norm(x, 0.5f); }, Tensor::from_vector({2}, {0, 4})), {0, 1});
  // One padding row of zeros among others: its gradient is 0, the others' untouched.
  require_close(gradient_of([](const Tensor& x) { return norm(x, 2.0f, 1); }, Tensor::from_vector({2, 2}, {0, 0, 3, 4})),
                {0, 0, 0.6f, 0.8f});
  REQUIRE(gradient_of([](const Tensor& x) { return tinygpt::std(x); }, Tensor::full({3}, 2.0f)) ==
          std::vector<float>{0, 0, 0});
  require_close(gradient_of([](const Tensor& x) { return tinygpt::std(x, 1, 1, true); },
                            Tensor::from_vector({2, 2}, {1, 1, 1, 3})),
                {0, 0, -0.70710678f, 0.70710678f});
  REQUIRE(gradient_of([](const Tensor& x) { return var(x); }, Tensor::full({3}, 2.0f)) == std::vector<float>{0, 0, 0});
  REQUIRE(gradient_of([](const Tensor& x) { return abs(x); }, Tensor::from_vector({3}, {-2, 0, 2})) ==
          std::vector<float>{-1, 0, 1});
  // Away from the kinks the new backward is the derivative.
  const Tensor x = Tensor::uniform({3, 4}, 21, -2, 2);
  check_gradients([](const std::vector<Tensor>& in) { return norm(in[0], 0.7f, 1, true) + norm(in[0], 2.5f); }, {x});
  check_gradients([](const std::vector<Tensor>& in) { return tinygpt::std(in[0], 1, 0, true); }, {x});
}

TEST_CASE("maximum and minimum pass the gradient to both inputs where one is NaN, as PyTorch", "[statistics][grad]") {
  for (bool larger : {true, false}) {
    Tensor a = Tensor::from_vector({3}, {NAN, 1, 2}).set_requires_grad(true);
    Tensor b = Tensor::from_vector({3}, {0, NAN, 2}).set_requires_grad(true);
    sum(larger ? maximum(a, b) : minimum(a, b)).backward();
    REQUIRE(a.grad().to_vector() == std::vector<float>{1, 1, 0.5f});
    REQUIRE(b.grad().to_vector() == std::vector<float>{1, 1, 0.5f});
  }
}

TEST_CASE("logsumexp is exact where exp overflows", "[statistics]") {
  const Tensor x = Tensor::from_vector({2, 3}, {1000, 1000, 1000, -1, 0, 1});
  const std::vector<float> got = logsumexp(x, 1).to_vector();
  REQUIRE(got[0] == Approx(1000 + std::log(3.0)).epsilon(1e-7));
  REQUIRE(got[1] == Approx(std::log(std::exp(-1.0) + 1 + std::exp(1.0))).epsilon(1e-6));
  REQUIRE(logsumexp(Tensor::full({2}, -INFINITY)).item() == -INFINITY);
  REQUIRE(logsumexp(x, {0, 1}, true).shape() == Shape{1, 1});
  const Tensor r = Tensor::uniform({2, 3, 4}, 12, -3, 3);
  check_gradients([](const std::vector<Tensor>& in) { return logsumexp(in[0], {0, 2}); }, {r});
  check_gradients([](const std::vector<Tensor>& in) { return logsumexp(in[0], -1, true); }, {r});
}

TEST_CASE("cumsum runs along any axis", "[statistics]") {
  const Tensor x = Tensor::from_vector({2, 3}, {1, 2, 3, 4, 5, 6});
  REQUIRE(cumsum(x, 1).to_vector() == std::vector<float>{1, 3, 6, 4, 9, 15});
  REQUIRE(cumsum(x, 0).to_vector() == std::vector<float>{1, 2, 3, 5, 7, 9});
  const Tensor r = Tensor::uniform({3, 4, 2}, 13, -1, 1);
  check_gradients([](const std::vector<Tensor>& in) { return cumsum(in[0], 1); }, {r});
  check_gradients([](const std::vector<Tensor>& in) { return cumsum(in[0].transpose(0, 2), 0); }, {r});
}

TEST_CASE("softmax and log_softmax on any axis", "[statistics][softmax]") {
  const Tensor x = Tensor::uniform({3, 4, 2}, 14, -2, 2);
  const Tensor s = softmax(x, 1);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t k = 0; k < 2; ++k) {
      double total = 0;
      for (int64_t j = 0; j < 4; ++j) total += std::exp(double(x.at({i, j, k})));
      for (int64_t j = 0; j < 4; ++j) REQUIRE(s.at({i, j, k}) == Approx(std::exp(x.at({i, j, k})) / total).epsilon(1e-6));
    }
  require_close(log_softmax(x, 0).to_vector(), log(softmax(x, 0)).to_vector(), 1e-5);
  require_close(softmax(x, -1).to_vector(), softmax(x).to_vector(), 0);
  check_gradients([](const std::vector<Tensor>& in) { return softmax(in[0], 0); }, {x});
  check_gradients([](const std::vector<Tensor>& in) { return log_softmax(in[0], 1); }, {x});
}

TEST_CASE("maximum, minimum and comparisons broadcast", "[statistics][elementwise]") {
  const Tensor a = Tensor::from_vector({2, 3}, {1, 5, 3, 2, 2, 8});
  const Tensor b = Tensor::from_vector({3}, {2, 2, 3});
  REQUIRE(maximum(a, b).to_vector() == std::vector<float>{2, 5, 3, 2, 2, 8});
  REQUIRE(minimum(a, b).to_vector() == std::vector<float>{1, 2, 3, 2, 2, 3});
  REQUIRE(eq(a, b).to_vector() == std::vector<float>{0, 0, 1, 1, 1, 0});
  REQUIRE(gt(a, b).to_vector() == std::vector<float>{0, 1, 0, 0, 0, 1});
  REQUIRE(le(a, 2.0f).to_vector() == std::vector<float>{1, 0, 0, 1, 1, 0});
  REQUIRE(ne(a, b).to_vector() == std::vector<float>{1, 1, 0, 0, 0, 1});
  REQUIRE(lt(a, b).to_vector() == std::vector<float>{1, 0, 0, 0, 0, 0});
  REQUIRE(ge(a, 3.0f).to_vector() == std::vector<float>{0, 1, 1, 0, 0, 1});
  REQUIRE(std::isnan(maximum(Tensor::scalar(NAN), Tensor::scalar(1)).item()));
  // Ties share the gradient half and half (as PyTorch).
  Tensor p = Tensor::from_vector({2}, {1, 4}).set_requires_grad(true), q = Tensor::from_vector({2}, {1, 2}).set_requires_grad(true);
  sum(maximum(p, q)).backward();
  REQUIRE(p.grad().to_vector() == std::vector<float>{0.5f, 1.0f});
  REQUIRE(q.grad().to_vector() == std::vector<float>{0.5f, 0.0f});
  const Tensor u = Tensor::uniform({2, 3}, 15, -1, 1), w = Tensor::uniform({3}, 16, -1, 1);
  check_gradients([](const std::vector<Tensor>& in) { return maximum(in[0], in[1]) * minimum(in[0], in[1]); },
                  {u, w});
}

TEST_CASE("creation: arange, eye, randperm, randint, multinomial", "[create]") {
  REQUIRE(arange(4).to_vector() == std::vector<float>{0, 1, 2, 3});
  REQUIRE(arange(1, 2, 0.25).to_vector() == std::vector<float>{1, 1.25f, 1.5f, 1.75f});
  REQUIRE(arange(3, 0, -1).to_vector() == std::vector<float>{3, 2, 1});
  REQUIRE(arange(2, 1).numel() == 0);
  REQUIRE_THROWS_WITH(arange(0, 1, 0), Catch::Contains("arange"));
  REQUIRE(eye(2, 3).to_vector() == std::vector<float>{1, 0, 0, 0, 1, 0});
  REQUIRE(sum(eye(5)).item() == 5.0f);

  std::vector<int64_t> perm = randperm(50, 3);
  REQUIRE(perm == randperm(50, 3));   // the same seed, the same order
  REQUIRE(perm != randperm(50, 4));
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 50; ++i) REQUIRE(sorted[i] == i);

  const Indices r = randint(-3, 4, {100, 2}, 5);
  REQUIRE(r.shape == Shape{100, 2});
  std::vector<int> seen(7, 0);
  for (int64_t v : r.values) {
    REQUIRE(v >= -3);
    REQUIRE(v < 4);
    ++seen[v + 3];
  }
  for (int c : seen) REQUIRE(c > 10);  // 200 draws over 7 values: each about 29 times

  // multinomial: draws follow the weights; without replacement each category at most once.
  const Tensor probs = Tensor::from_vector({2, 4}, {0, 1, 3, 0, 5, 0, 0, 5});
  const Indices once = multinomial(probs, 2, 9);
  REQUIRE(once.shape == Shape{2, 2});
  REQUIRE(std::set<int64_t>{once.at({0, 0}), once.at({0, 1})} == std::set<int64_t>{1, 2});
  REQUIRE(std::set<int64_t>{once.at({1, 0}), once.at({1, 1})} == std::set<int64_t>{0, 3});
  const Indices many = multinomial(Tensor::from_vector({3}, {1, 3, 0}), 4000, 10, true);
  int64_t ones = 0;
  for (int64_t v : many.values) {
    REQUIRE(v != 2);
    ones += v == 1;
  }
  REQUIRE(ones == Approx(3000).margin(120));  // 3/4 of 4000, within about 4 standard deviations
  REQUIRE_THROWS_WITH(multinomial(probs, 5, 1), Catch::Contains("5 samples from 4 categories without replacement"));
  REQUIRE_THROWS_WITH(multinomial(probs, 3, 1), Catch::Contains("row 0 has no weight left"));
  REQUIRE_THROWS_WITH(multinomial(Tensor::from_vector({2}, {1, -1}), 1, 1), Catch::Contains("not a finite weight"));
}
