#include <catch2/catch.hpp>

#include <cmath>

#include "tinygpt/autograd/ops.h"
#include "tinygpt/optim/adamw.h"
#include "tinygpt/optim/grad_clip.h"
#include "tinygpt/optim/schedule.h"
#include "tinygpt/optim/sgd.h"

using namespace tinygpt;
using namespace tinygpt::optim;

namespace {
void set_grad(Tensor& p, std::vector<float> g) {
  p.zero_grad();
  sum(p * Tensor::from_vector(p.shape(), std::move(g))).backward();
}
}  // namespace

TEST_CASE("adamw: two steps against hand-computed values", "[optim]") {
  // One weight matrix (decays) and one bias (does not); lr 0.1, betas (0.9, 0.99), eps 1e-8, wd 0.1.
  Tensor w = Tensor::from_vector({1, 2}, {1.0f, -2.0f}).set_requires_grad(true);
  Tensor b = Tensor::from_vector({1}, {0.5f}).set_requires_grad(true);
  AdamW opt({{"w", w}, {"b", b}}, {.lr = 0.1f, .beta1 = 0.9f, .beta2 = 0.99f, .eps = 1e-8f, .weight_decay = 0.1f});
  set_grad(w, {0.5f, -1.0f});
  set_grad(b, {2.0f});
  opt.step(0.1f);
  // Step 1: m = 0.1 g, v = 0.01 g^2, mhat = g, vhat = g^2 -> update = lr * sign(g) (eps aside);
  // w also decays: w (1 - lr wd) = w * 0.99.
  REQUIRE(w.at({0, 0}) == Approx(1.0 * 0.99 - 0.1).epsilon(1e-6));
  REQUIRE(w.at({0, 1}) == Approx(-2.0 * 0.99 + 0.1).epsilon(1e-6));
  REQUIRE(b.at({0}) == Approx(0.5 - 0.1).epsilon(1e-6));
  set_grad(w, {-0.5f, -1.0f});
  set_grad(b, {2.0f});
  opt.step(0.05f);
  // Step 2 for w[0]: m = 0.9*0.05 + 0.1*(-0.5) = -0.005, v = 0.99*0.0025 + 0.01*0.25 = 0.004975;
  // mhat = m / 0.19, vhat = v / 0.0199; p = 0.89 * (1 - 0.005) - 0.05 * mhat / (sqrt(vhat) + eps)
  const double m = -0.005, v = 0.004975, mhat = m / 0.19, vhat = v / (1 - 0.99 * 0.99);
  REQUIRE(w.at({0, 0}) == Approx(0.89 * (1 - 0.005) - 0.05 * mhat / (std::sqrt(vhat) + 1e-8)).epsilon(1e-5));
  REQUIRE(opt.steps() == 2);
  REQUIRE(opt.state()[0].decay);
  REQUIRE_FALSE(opt.state()[1].decay);
}

TEST_CASE("grad clip: scales to the global norm only when above it", "[optim]") {
  Tensor a = Tensor::zeros({2}).set_requires_grad(true), b = Tensor::zeros({1}).set_requires_grad(true);
  set_grad(a, {3.0f, 0.0f});
  set_grad(b, {4.0f});
  REQUIRE(clip_grad_norm({a, b}, 10.0) == Approx(5.0));
  REQUIRE(a.grad().to_vector() == std::vector<float>{3.0f, 0.0f});  // under the limit: unchanged
  REQUIRE(clip_grad_norm({a, b}, 1.0) == Approx(5.0));
  REQUIRE(a.grad().at({0}) == Approx(0.6).epsilon(1e-5));
  REQUIRE(b.grad().at({0}) == Approx(0.8).epsilon(1e-5));
}

TEST_CASE("grad clip: clip_grad_value clamps each element, as torch's clip_grad_value_", "[optim]") {
  Tensor a = Tensor::zeros({3}).set_requires_grad(true), b = Tensor::zeros({1}).set_requires_grad(true);
  Tensor none = Tensor::zeros({2}).set_requires_grad(true);  // no gradient: left alone
  set_grad(a, {3.0f, -0.5f, -2.0f});
  set_grad(b, {0.25f});
  clip_grad_value({a, b, none}, 1.0);
  REQUIRE(a.grad().to_vector() == std::vector<float>{1.0f, -0.5f, -1.0f});
  REQUIRE(b.grad().to_vector() == std::vector<float>{0.25f});
  REQUIRE_FALSE(none.has_grad());
  REQUIRE_THROWS_WITH(clip_grad_value({a}, -1.0), Catch::Contains("clip_grad_value: clip -1"));
}

TEST_CASE("adamw: a clip factor given to step equals clipping the gradients first, bit for bit", "[optim]") {
  auto run = [](bool fused) {
    Tensor w = Tensor::uniform({40, 30}, 5, -1, 1).set_requires_grad(true);
    Tensor b = Tensor::uniform({30}, 6, -1, 1).set_requires_grad(true);
    AdamW opt({{"w", w}, {"b", b}}, {});
    for (int step = 0; step < 3; ++step) {
      set_grad(w, Tensor::uniform({40, 30}, 10 + step, -2, 2).to_vector());
      set_grad(b, Tensor::uniform({30}, 20 + step, -2, 2).to_vector());
      if (fused) {
        const float scale = clip_scale(global_grad_norm({w, b}), 1.0);
        REQUIRE(scale < 1.0f);  // the norm is far above 1: clipping happens
        opt.step(1e-2f, scale);
      } else {
        clip_grad_norm({w, b}, 1.0);
        opt.step(1e-2f);
      }
    }
    std::vector<float> out = w.to_vector(), bias = b.to_vector();
    out.insert(out.end(), bias.begin(), bias.end());
    return out;
  };
  REQUIRE(run(true) == run(false));
  REQUIRE(clip_scale(0.5, 1.0) == 1.0f);
  REQUIRE(clip_scale(5.0, 0.0) == 1.0f);  // 0: clipping off
}

TEST_CASE("lr schedule: linear warm-up, cosine decay, floor", "[optim]") {
  LrSchedule s{.lr = 1e-3f, .min_lr = 1e-4f, .warmup = 100, .decay_iters = 2000};
  REQUIRE(s.at(0) == Approx(1e-3 * 1 / 101));
  REQUIRE(s.at(99) == Approx(1e-3 * 100 / 101));
  REQUIRE(s.at(100) == Approx(1e-3));                         // the peak
  REQUIRE(s.at(1050) == Approx(0.5 * (1e-3 + 1e-4)));         // half-way down the cosine
  REQUIRE(s.at(2000) == Approx(1e-4));
  REQUIRE(s.at(5000) == Approx(1e-4));
  for (int64_t it = 101; it < 2000; ++it) REQUIRE(s.at(it) <= s.at(it - 1));
}

TEST_CASE("adamw: keeps its learning rate, which step() uses and set_lr and schedules change", "[optim]") {
  auto run = [](bool stored) {
    Tensor w = Tensor::from_vector({2, 1}, {1.0f, -2.0f}).set_requires_grad(true);
    AdamW opt({{"w", w}}, {.lr = 0.05f});
    REQUIRE(opt.lr() == 0.05f);
    set_grad(w, {0.5f, -1.0f});
    if (stored) opt.step();
    else opt.step(0.05f);
    return w.to_vector();
  };
  REQUIRE(run(true) == run(false));
  Tensor p = Tensor::zeros({1}).set_requires_grad(true);
  AdamW opt({{"p", p}}, {.lr = 1.0f});
  const LrSchedule schedule{.lr = 0.5f, .min_lr = 0.1f, .warmup = 2, .decay_iters = 10};
  schedule.apply(opt, 1);
  REQUIRE(opt.lr() == schedule.at(1));
  REQUIRE(opt.options().lr == schedule.at(1));
  opt.step(0.25f);  // an explicit rate leaves the stored one alone
  REQUIRE(opt.lr() == schedule.at(1));
  REQUIRE_THROWS_WITH(opt.set_lr(NAN), Catch::Contains("learning rate must be finite"));
  REQUIRE_THROWS_WITH(AdamW({{"p", p}}, {.beta2 = 1.0f}), Catch::Contains("beta2 must be in [0, 1)"));
  REQUIRE_THROWS_WITH(AdamW({{"q", Tensor::zeros({1})}}, {}), Catch::Contains("'q' must be a contiguous tensor that "
                                                                               "requires a gradient"));
}

TEST_CASE("sgd: plain, momentum, Nesterov and weight decay against hand-computed values", "[optim]") {
  auto two_steps = [](SGDOptions o) {
    Tensor w = Tensor::from_vector({1}, {1.0f}).set_requires_grad(true);
    SGD opt({{"w", w}}, o);
    set_grad(w, {0.5f});
    opt.step();
    const float first = w.at({0});
    set_grad(w, {-1.0f});
    opt.step();
    return std::pair{first, w.at({0})};
  };
  // Plain: w -= lr g.
  auto [p1, p2] = two_steps({.lr = 0.1f});
  REQUIRE(p1 == Approx(0.95));
  REQUIRE(p2 == Approx(1.05));
  // Momentum 0.9: b1 = g1 = 0.5; b2 = 0.9 * 0.5 - 1 = -0.55.
  auto [m1, m2] = two_steps({.lr = 0.1f, .momentum = 0.9f});
  REQUIRE(m1 == Approx(0.95));
  REQUIRE(m2 == Approx(0.95 + 0.055));
  // Nesterov: d = g + mu b: step 1 0.5 + 0.45 = 0.95; step 2 -1 + 0.9 * -0.55 = -1.495.
  auto [n1, n2] = two_steps({.lr = 0.1f, .momentum = 0.9f, .nesterov = true});
  REQUIRE(n1 == Approx(1 - 0.095));
  REQUIRE(n2 == Approx(1 - 0.095 + 0.1495));
  // Weight decay 0.1 adds 0.1 w to the gradient: d1 = 0.5 + 0.1 = 0.6.
  auto [d1, d2] = two_steps({.lr = 0.1f, .weight_decay = 0.1f});
  REQUIRE(d1 == Approx(0.94));
  REQUIRE(d2 == Approx(0.94 - 0.1 * (-1 + 0.094)));
  REQUIRE_THROWS_WITH(SGD({{"w", Tensor::zeros({1}).set_requires_grad(true)}}, {.nesterov = true}),
                      Catch::Contains("Nesterov momentum needs momentum > 0"));
}

TEST_CASE("optim: AdamW's update sums are kept only when asked, and are the step's own", "[optim]") {
  for (auto sums : {AdamW::UpdateSums::skipped, AdamW::UpdateSums::kept}) {
    Tensor w = Tensor::randn({300, 70}, 3).set_requires_grad(true);  // 21,000: three chunks
    AdamW opt({{"w", w}}, {});
    opt.keep_update_sums(sums);
    (w * w).sum().backward();
    const std::vector<float> before = w.to_vector();
    opt.step(1e-2f);
    const std::vector<float> after = w.to_vector();
    double update = 0, weight = 0;
    for (size_t i = 0; i < before.size(); ++i) {
      const double d = double(after[i]) - before[i];
      update += d * d, weight += double(before[i]) * before[i];
    }
    const AdamW::UpdateSquares& got = opt.last_update().at(0);
    if (sums == AdamW::UpdateSums::skipped) {
      REQUIRE(got.update == 0);
      REQUIRE(got.weight == 0);
    } else {
      REQUIRE(got.update == Approx(update).epsilon(1e-9));
      REQUIRE(got.weight == Approx(weight).epsilon(1e-12));
    }
  }
}
