// Adam, RMSprop and Adagrad, and the StepLR, OneCycleLR and ReduceLROnPlateau schedules: five steps
// on a fixed quadratic against values torch.optim 1.13 gave for the same numbers (float32), and a
// save/load round trip of each optimizer's state.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <functional>
#include <vector>

#include "temp_files.h"
#include "tinygpt/autograd/ops.h"
#include "tinygpt/io/save.h"
#include "tinygpt/optim/adamw.h"
#include "tinygpt/optim/rmsprop.h"
#include "tinygpt/optim/schedule.h"
#include "tinygpt/optim/sgd.h"

using namespace tinygpt;
using namespace tinygpt::optim;

namespace {
// Five steps of loss = sum(c p²), p from [[0.5, -1, 2], [0, 1.5, -0.25]], c = [[1, 2, 3], [4, 5, 6]] / 4.
std::vector<float> five_steps(const std::function<std::unique_ptr<Optimizer>(Tensor)>& make) {
  Tensor p = Tensor::from_vector({2, 3}, {0.5f, -1.0f, 2.0f, 0.0f, 1.5f, -0.25f}).set_requires_grad(true);
  const Tensor c = Tensor::from_vector({2, 3}, {0.25f, 0.5f, 0.75f, 1.0f, 1.25f, 1.5f});
  std::unique_ptr<Optimizer> opt = make(p);
  for (int i = 0; i < 5; ++i) {
    opt->zero_grad();
    sum(c * p * p).backward();
    opt->step();
  }
  return p.to_vector();
}

void require_near(const std::vector<float>& got, const std::vector<float>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": " << fmt::format("{:.9g}", got[i]));
    REQUIRE(got[i] == Approx(want[i]).epsilon(2e-6).margin(1e-7));
  }
}
}  // namespace

TEST_CASE("optimizers: Adam and RMSprop and Adagrad step as torch.optim does", "[optim]") {
  require_near(five_steps([](Tensor p) {
                 return std::make_unique<Adam>(std::vector{std::pair{std::string("p"), p}},
                                               AdamOptions{.lr = 0.1f, .weight_decay = 0.05f});
               }),
               {0.0278144628f, -0.507963717f, 1.50295579f, 0.0f, 1.00435817f, 0.127603918f});
  require_near(five_steps([](Tensor p) {
                 return std::make_unique<RMSprop>(std::vector{std::pair{std::string("p"), p}}, RMSpropOptions{.lr = 0.01f});
               }),
               {0.221571058f, -0.69646579f, 1.68548155f, 0.0f, 1.1890254f, -0.0305122491f});
  require_near(five_steps([](Tensor p) {
                 return std::make_unique<RMSprop>(
                     std::vector{std::pair{std::string("p"), p}},
                     RMSpropOptions{.lr = 0.01f, .weight_decay = 0.1f, .momentum = 0.9f, .centered = true});
               }),
               {-0.233984843f, -0.134701937f, 1.08192348f, 0.0f, 0.59842664f, 0.217348441f});
  require_near(five_steps([](Tensor p) {
                 return std::make_unique<Adagrad>(
                     std::vector{std::pair{std::string("p"), p}},
                     AdagradOptions{.lr = 0.1f, .lr_decay = 0.01f, .weight_decay = 0.1f, .initial_accumulator_value = 0.1f});
               }),
               {0.278345853f, -0.708517551f, 1.69224918f, 0.0f, 1.19538248f, -0.0388675705f});
  Tensor p = Tensor::zeros({2}).set_requires_grad(true);
  REQUIRE_THROWS_WITH(RMSprop({{"p", p}}, {.alpha = 1.5f}), Catch::Contains("RMSprop: alpha must be in [0, 1]"));
  REQUIRE_THROWS_WITH(Adagrad({{"p", p}}, {.eps = 0.0f}), Catch::Contains("Adagrad: eps"));
  REQUIRE_THROWS_WITH(Adam({{"p", p}}, {.beta2 = 1.0f}), Catch::Contains("Adam: beta2"));
}

TEST_CASE("optimizers: parameter groups step as separate optimizers would, schedules included", "[optim][groups]") {
  using Named = std::vector<std::pair<std::string, Tensor>>;
  using Make = std::function<std::unique_ptr<Optimizer>(std::vector<ParamGroup>, float lr)>;
  const std::vector<std::pair<const char*, Make>> kinds = {
      {"AdamW", [](auto g, float lr) { return std::make_unique<AdamW>(g, AdamWOptions{.lr = lr, .weight_decay = 0.05f}); }},
      {"Adam", [](auto g, float lr) { return std::make_unique<Adam>(g, AdamOptions{.lr = lr, .weight_decay = 0.05f}); }},
      {"SGD", [](auto g, float lr) { return std::make_unique<SGD>(g, SGDOptions{.lr = lr, .momentum = 0.9f}); }},
      {"RMSprop", [](auto g, float lr) { return std::make_unique<RMSprop>(g, RMSpropOptions{.lr = lr}); }},
      {"Adagrad", [](auto g, float lr) { return std::make_unique<Adagrad>(g, AdagradOptions{.lr = lr}); }}};
  for (const auto& [kind, make] : kinds) {
    INFO(kind);
    auto fresh = [] {
      return Named{{"w", Tensor::uniform({3, 4}, 1, -1, 1).set_requires_grad(true)},
                   {"b", Tensor::uniform({4}, 2, -1, 1).set_requires_grad(true)}};
    };
    const Named grouped = fresh(), alone = fresh();
    // w at twice the rate and with a decay of its own; b as the optimizer's options say.
    auto together = make({ParamGroup{{grouped[0]}, 0.02f, 0.1f}, ParamGroup{{grouped[1]}}}, 0.01f);
    auto first = make({ParamGroup{{alone[0]}, std::nullopt, 0.1f}}, 0.02f);
    auto second = make({ParamGroup{{alone[1]}}}, 0.01f);
    for (int step = 0; step < 4; ++step) {
      if (step == 2) together->set_lr(0.005f), first->set_lr(0.01f), second->set_lr(0.005f);  // halved
      for (const Named* set : {&grouped, &alone}) {
        for (auto [name, p] : *set) p.zero_grad();
        sum(exp((*set)[0].second * 0.5f) * (*set)[1].second).backward();
      }
      together->step(), first->step(), second->step();
    }
    REQUIRE(grouped[0].second.to_vector() == alone[0].second.to_vector());  // bitwise
    REQUIRE(grouped[1].second.to_vector() == alone[1].second.to_vector());
  }
  // A group's decay reaches every parameter in it, 1-d ones included (AdamW decays only 2-d
  // tensors of its own accord): with a zero gradient the step is the decay alone.
  Tensor b = Tensor::from_vector({2}, {1.0f, -2.0f}).set_requires_grad(true);
  AdamW decayed({ParamGroup{{{"b", b}}, std::nullopt, 0.5f}}, AdamWOptions{.lr = 0.1f});
  sum(b * 0.0f).backward();
  decayed.step();
  REQUIRE(b.to_vector() == std::vector<float>{1.0f * (1.0f - 0.1f * 0.5f), -2.0f * (1.0f - 0.1f * 0.5f)});

  Tensor p = Tensor::zeros({2}).set_requires_grad(true);
  REQUIRE_THROWS_WITH(SGD({ParamGroup{{{"p", p}}}, ParamGroup{{{"q", p}}}}, SGDOptions{}),
                      Catch::Contains("parameter 'q' is in more than one group"));
  REQUIRE_THROWS_WITH(SGD({ParamGroup{{{"p", p}}, -1.0f}}, SGDOptions{}), Catch::Contains("group 0's learning rate -1"));
  REQUIRE_THROWS_WITH(Adam({ParamGroup{{{"p", p}}, std::nullopt, NAN}}, AdamOptions{}),
                      Catch::Contains("group 0's weight decay nan"));
}

TEST_CASE("optimizers: a step between a loss and its backward is an error naming the step", "[optim][errors]") {
  using Make = std::function<std::unique_ptr<Optimizer>(std::vector<std::pair<std::string, Tensor>>)>;
  const std::vector<std::pair<const char*, Make>> optimizers = {
      {"AdamW::step", [](auto named) { return std::make_unique<AdamW>(named, AdamWOptions{}); }},
      {"Adam::step", [](auto named) { return std::make_unique<Adam>(named, AdamOptions{}); }},
      {"SGD::step", [](auto named) { return std::make_unique<SGD>(named, SGDOptions{.lr = 0.1f}); }},
      {"RMSprop::step", [](auto named) { return std::make_unique<RMSprop>(named, RMSpropOptions{}); }},
      {"Adagrad::step", [](auto named) { return std::make_unique<Adagrad>(named, AdagradOptions{}); }}};
  for (const auto& [step, make] : optimizers) {
    INFO(step);
    Tensor p = Tensor::from_vector({2}, {0.5f, -1.0f}).set_requires_grad(true);
    std::unique_ptr<Optimizer> opt = make({{"p", p}});
    sum(p * p).backward();
    Tensor loss = sum(exp(p));  // exp reads p as it is now; the step below changes it
    opt->step();
    REQUIRE_THROWS_WITH(loss.backward(), Catch::Contains(std::string("exp: input 0 was changed in place by ") + step));
    // The usual order works: forward, backward, step.
    opt->zero_grad();
    sum(exp(p)).backward();
    opt->step();
  }
}

TEST_CASE("optimizers: the state of Adam and RMSprop and Adagrad saves and loads exactly", "[optim][io]") {
  tinygpt::testing::TempDir dir;
  Tensor p = Tensor::from_vector({3}, {1, -2, 3}).set_requires_grad(true);
  auto run = [&](Optimizer& opt, int steps) {
    for (int i = 0; i < steps; ++i) {
      opt.zero_grad();
      sum(p * p * p).backward();
      opt.step();
    }
  };
  auto check = [&](auto make) {
    const std::vector<float> start = p.to_vector();
    auto a = make();
    run(*a, 2);
    optim::save(*a, dir.file("opt.h5"));
    run(*a, 2);
    const std::vector<float> straight = p.to_vector();
    p.copy_from_(Tensor::from_vector({3}, start));  // again from the start: 2 steps, save, load, 2 steps
    auto b = make();
    run(*b, 2);
    auto c = make();
    optim::load(*c, dir.file("opt.h5"));
    REQUIRE(c->steps() == 2);
    run(*c, 2);
    REQUIRE(p.to_vector() == straight);
    p.copy_from_(Tensor::from_vector({3}, start));
  };
  check([&] { return std::make_unique<Adam>(std::vector{std::pair{std::string("p"), p}}, AdamOptions{.lr = 0.01f}); });
  check([&] {
    return std::make_unique<RMSprop>(std::vector{std::pair{std::string("p"), p}},
                                     RMSpropOptions{.lr = 0.01f, .momentum = 0.5f, .centered = true});
  });
  check([&] { return std::make_unique<Adagrad>(std::vector{std::pair{std::string("p"), p}}, AdagradOptions{}); });
  Adagrad other({{"p", p}}, {});
  Adam adam({{"p", p}}, {});
  optim::save(adam, dir.file("adam.h5"));
  REQUIRE_THROWS_WITH(optim::load(other, dir.file("adam.h5")), Catch::Contains("holds the state of adam, not of adagrad"));
}

TEST_CASE("schedules: StepLR and OneCycleLR and ReduceLROnPlateau give torch rates", "[optim][schedule]") {
  const StepLR step{.lr = 1.0f, .step_size = 3, .gamma = 0.5f};
  REQUIRE(step.at(0) == 1.0f);
  REQUIRE(step.at(2) == 1.0f);
  REQUIRE(step.at(3) == 0.5f);
  REQUIRE(step.at(7) == 0.25f);

  const OneCycleLR cycle{.max_lr = 0.1f, .total_steps = 10};
  const std::vector<double> torch_cycle{0.004,        0.052,        0.1,          0.0950484632, 0.0811745654,
                                        0.0611262022, 0.0388741978, 0.0188258346, 0.0049519368, 4e-07};
  for (int64_t i = 0; i < 10; ++i) {
    INFO("step " << i);
    REQUIRE(cycle.at(i) == Approx(torch_cycle[i]).epsilon(1e-6));
  }
  REQUIRE_THROWS_WITH(cycle.at(10), Catch::Contains("OneCycleLR: step outside"));

  Tensor p = Tensor::zeros({1}).set_requires_grad(true);
  SGD sgd({{"p", p}}, {.lr = 1.0f});
  ReduceLROnPlateau plateau{.factor = 0.5f, .patience = 2, .cooldown = 1};
  const std::vector<double> metrics{5, 4, 4, 4, 4, 4, 4, 4, 3, 3, 3, 3};
  const std::vector<float> torch_lr{1, 1, 1, 1, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.25f};
  for (size_t i = 0; i < metrics.size(); ++i) {
    plateau.step(sgd, metrics[i]);
    INFO("call " << i);
    REQUIRE(sgd.lr() == torch_lr[i]);
  }
}
