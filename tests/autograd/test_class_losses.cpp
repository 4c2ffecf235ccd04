// nll_loss, cross_entropy with weights / label smoothing / ignore_index / reductions, l1, huber and
// kl_div: against PyTorch's formulas written as plain double loops, and finite differences.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "gradcheck.h"

using namespace tinygpt;
using tinygpt::testing::check_gradients;

namespace {
// PyTorch's cross_entropy with class weights w, label smoothing eps and ignore_index, as loops:
// row loss (1 - eps) w[y] (-log p[y]) + eps / C sum_c w[c] (-log p[c]); the mean divides by the
// sum of w[y] over the rows kept.
std::vector<double> reference_rows(const Tensor& logits, const std::vector<int64_t>& y, const std::vector<double>& w,
                                   double eps, int64_t ignore, double* kept) {
  const int64_t N = logits.shape()[0], C = logits.shape()[1];
  const std::vector<float> z = logits.to_vector();
  std::vector<double> rows(N, 0.0);
  *kept = 0;
  for (int64_t i = 0; i < N; ++i) {
    if (y[i] == ignore) continue;
    double m = -INFINITY, s = 0;
    for (int64_t c = 0; c < C; ++c) m = std::max(m, double(z[i * C + c]));
    for (int64_t c = 0; c < C; ++c) s += std::exp(z[i * C + c] - m);
    auto logp = [&](int64_t c) { return z[i * C + c] - m - std::log(s); };
    double smooth = 0;
    for (int64_t c = 0; c < C; ++c) smooth += w[c] * -logp(c);
    rows[i] = (1 - eps) * w[y[i]] * -logp(y[i]) + eps / C * smooth;
    *kept += w[y[i]];
  }
  return rows;
}
}  // namespace

TEST_CASE("cross_entropy and nll_loss with weights, smoothing, ignore_index and reductions", "[losses]") {
  const Tensor logits = Tensor::uniform({5, 4}, 21, -3, 3);
  const std::vector<int64_t> y{2, 0, -100, 3, 2};
  const std::vector<double> w{0.5, 2.0, 1.0, 1.5};
  const Tensor weight = Tensor::from_vector({4}, {0.5f, 2.0f, 1.0f, 1.5f});
  for (double eps : {0.0, 0.1}) {
    double kept = 0;
    const std::vector<double> rows = reference_rows(logits, y, w, eps, -100, &kept);
    double total = 0;
    for (double r : rows) total += r;
    const CrossEntropyOptions o{weight, -100, static_cast<float>(eps), Reduction::mean};
    INFO("label smoothing " << eps);
    REQUIRE(cross_entropy(logits, y, o).item() == Approx(total / kept).epsilon(1e-5));
    REQUIRE(cross_entropy(logits, y, {weight, -100, float(eps), Reduction::sum}).item() == Approx(total).epsilon(1e-5));
    const std::vector<float> none = cross_entropy(logits, y, {weight, -100, float(eps), Reduction::none}).to_vector();
    for (size_t i = 0; i < rows.size(); ++i) REQUIRE(none[i] == Approx(rows[i]).epsilon(1e-5).margin(1e-7));
    check_gradients([&](const std::vector<Tensor>& in) { return cross_entropy(in[0], y, o); }, {logits});
  }
  // Unweighted, unsmoothed: the options path equals the fused one.
  const std::vector<int64_t> all{1, 0, 2, 3, 2};
  REQUIRE(cross_entropy(logits, all, CrossEntropyOptions{}).item() == cross_entropy(logits, all).item());
  REQUIRE(cross_entropy(logits, all, {Tensor(), -100, 0.0f, Reduction::sum}).item() ==
          Approx(5 * cross_entropy(logits, all).item()).epsilon(1e-6));
  // nll_loss on log_softmax is cross_entropy.
  const NllLossOptions n{weight, -100, Reduction::mean};
  REQUIRE(nll_loss(log_softmax(logits), y, n).item() ==
          Approx(cross_entropy(logits, y, {weight, -100, 0.0f, Reduction::mean}).item()).epsilon(1e-6));
  check_gradients([&](const std::vector<Tensor>& in) { return nll_loss(in[0], y, n); }, {logits});
  REQUIRE_THROWS_AS(nll_loss(logits, std::vector<int64_t>{0, 1, 4, 0, 0}), std::out_of_range);
  REQUIRE_THROWS_WITH(nll_loss(logits, std::vector<int64_t>{0, 1}), Catch::Contains("2 targets for 5 rows"));
  REQUIRE_THROWS_WITH(cross_entropy(logits, all, {Tensor::ones({3}), -100, 0.0f, Reduction::mean}),
                      Catch::Contains("class weights of shape [3] for 4 classes"));
  REQUIRE_THROWS_WITH(cross_entropy(logits, all, {Tensor(), -100, 1.5f, Reduction::mean}),
                      Catch::Contains("label smoothing 1.5"));
}

TEST_CASE("l1, huber and kl_div: values, reductions and gradients", "[losses]") {
  const Tensor p = Tensor::from_vector({4}, {0.0f, 2.0f, -1.5f, 0.25f}), t = Tensor::from_vector({4}, {1, 0, 0, 0});
  REQUIRE(l1_loss(p, t).item() == Approx((1 + 2 + 1.5 + 0.25) / 4));
  REQUIRE(l1_loss(p, t, Reduction::sum).item() == Approx(4.75));
  REQUIRE(l1_loss(p, t, Reduction::none).to_vector() == std::vector<float>{1, 2, 1.5f, 0.25f});
  // huber, delta 1: 0.5 d² inside, |d| - 0.5 outside.
  const std::vector<float> h{0.5f, 1.5f, 1.0f, 0.03125f};
  REQUIRE(huber_loss(p, t, 1.0f, Reduction::none).to_vector() == h);
  REQUIRE(huber_loss(p, t).item() == Approx((0.5 + 1.5 + 1.0 + 0.03125) / 4));
  REQUIRE(huber_loss(p, t, 2.0f, Reduction::sum).item() == Approx(0.5 + 2 * (2 - 1) + 1.125 + 0.03125));
  const Tensor a = Tensor::uniform({3, 4}, 22, -2, 2), b = Tensor::uniform({3, 4}, 23, -2, 2);
  check_gradients([&](const std::vector<Tensor>& in) { return l1_loss(in[0], in[1]); }, {a, b});
  check_gradients([&](const std::vector<Tensor>& in) { return huber_loss(in[0], in[1], 0.7f); }, {a, b});
  check_gradients([&](const std::vector<Tensor>& in) { return huber_loss(in[0], in[1], 0.7f, Reduction::none); },
                  {a, b});

  // kl_div: sum over classes of q (log q - log p) per row; batchmean divides by the rows.
  const Tensor logp = log_softmax(Tensor::uniform({3, 4}, 24, -1, 1));
  const Tensor q = softmax(Tensor::uniform({3, 4}, 25, -1, 1));
  double total = 0;
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t c = 0; c < 4; ++c) total += q.at({i, c}) * (std::log(double(q.at({i, c}))) - logp.at({i, c}));
  REQUIRE(kl_div(logp, q, Reduction::batchmean).item() == Approx(total / 3).epsilon(1e-5));
  REQUIRE(kl_div(logp, q, Reduction::sum).item() == Approx(total).epsilon(1e-5));
  REQUIRE(kl_div(logp, log(q), Reduction::sum, true).item() == Approx(total).epsilon(1e-5));
  REQUIRE(kl_div(logp, Tensor::zeros({3, 4}), Reduction::sum).item() == 0.0f);  // 0 log 0 is 0
  check_gradients([&](const std::vector<Tensor>& in) { return kl_div(in[0], q, Reduction::batchmean); }, {a});
  REQUIRE_THROWS_WITH(l1_loss(p, Tensor::zeros({3})), Catch::Contains("differ in shape"));
  REQUIRE_THROWS_WITH(huber_loss(p, t, 0.0f), Catch::Contains("delta 0"));
  REQUIRE_THROWS_WITH(l1_loss(p, t, Reduction::batchmean), Catch::Contains("batchmean"));
}

TEST_CASE("gradcheck: the installed checker finds a wrong backward", "[grad]") {
  // A user's op with a deliberately wrong gradient (2x instead of 3x²) fails, naming the element.
  auto cube_wrong = [](const std::vector<Tensor>& in) {
    const Tensor x = in[0];
    Tensor out = Tensor::from_vector(x.shape(), [&] {
      std::vector<float> v = x.to_vector();
      for (float& e : v) e = e * e * e;
      return v;
    }());
    return attach(out, "cube", {x}, [x](const Tensor&, const Tensor& g) {
      if (float* sink = grad_sink(x))
        for (int64_t i = 0; i < x.numel(); ++i) sink[i] += g.data()[i] * 2.0f * x.data()[i];
    });
  };
  const GradCheckResult bad = gradcheck(cube_wrong, {Tensor::uniform({3}, 26, 1, 2)});
  REQUIRE_FALSE(bad.ok);
  REQUIRE(bad.input == 0);
  REQUIRE(bad.element == 0);
  REQUIRE_THAT(bad.message(), Catch::Contains("input 0, element 0: analytic"));
  const GradCheckResult good = gradcheck([](const std::vector<Tensor>& in) { return in[0] * in[0] * in[0]; },
                                         {Tensor::uniform({3}, 26, 1, 2)});
  REQUIRE(good.ok);
  REQUIRE(good.checked == 3);
}
