#include <catch2/catch.hpp>

#include <cmath>

#include "tinygpt/autograd/elementary.h"
#include "gradcheck.h"

using namespace tinygpt;
using tinygpt::testing::check_gradients;
using tinygpt::testing::require_close;

namespace {
Tensor rnd(const Shape& s, uint64_t seed) { return Tensor::uniform(s, seed, -1.5f, 1.5f); }
Tensor positive(const Shape& s, uint64_t seed) { return Tensor::uniform(s, seed, 0.5f, 2.0f); }
}  // namespace

TEST_CASE("elementwise: known values", "[elementwise]") {
  Tensor a = Tensor::from_vector({2, 2}, {1, 2, 3, 4});
  Tensor b = Tensor::from_vector({2}, {10, 20});
  REQUIRE((a + b).to_vector() == std::vector<float>{11, 22, 13, 24});
  REQUIRE((a - b).to_vector() == std::vector<float>{-9, -18, -7, -16});
  REQUIRE((a * b).to_vector() == std::vector<float>{10, 40, 30, 80});
  REQUIRE((b / a).to_vector() == std::vector<float>{10, 10, 10 / 3.0f, 5});
  REQUIRE((a * 2.0f + 1.0f).to_vector() == std::vector<float>{3, 5, 7, 9});
  REQUIRE((1.0f - a).to_vector() == std::vector<float>{0, -1, -2, -3});
  REQUIRE((-a).to_vector() == std::vector<float>{-1, -2, -3, -4});
  REQUIRE(relu(Tensor::from_vector({3}, {-1, 0, 2})).to_vector() == std::vector<float>{0, 0, 2});
  require_close(tinygpt::sqrt(a).to_vector(), {1, std::sqrt(2.0f), std::sqrt(3.0f), 2});
  require_close(tinygpt::exp(Tensor::from_vector({2}, {0, 1})).to_vector(), {1, 2.718281828f});
  require_close(tinygpt::log(Tensor::from_vector({2}, {1, 2.718281828f})).to_vector(), {0, 1});
  require_close(tinygpt::tanh(Tensor::from_vector({2}, {0, 1})).to_vector(), {0, 0.7615941559f});
  // GELU (tanh form) at hand-computed points: 0 -> 0, 1 -> 0.841192, -1 -> -0.158808, 3 -> 2.996363
  require_close(gelu(Tensor::from_vector({4}, {0, 1, -1, 3})).to_vector(), {0, 0.8411920f, -0.1588080f, 2.9963627f});
}

TEST_CASE("elementwise: broadcasting follows NumPy", "[elementwise]") {
  Tensor col = Tensor::from_vector({3, 1}, {1, 2, 3});
  Tensor row = Tensor::from_vector({1, 2}, {10, 20});
  Tensor out = col * row;
  REQUIRE(out.shape() == Shape{3, 2});
  REQUIRE(out.to_vector() == std::vector<float>{10, 20, 20, 40, 30, 60});
  REQUIRE((Tensor::ones({2, 1, 3}) + Tensor::ones({4, 1})).shape() == Shape{2, 4, 3});
  REQUIRE_THROWS_WITH(Tensor::ones({2, 3}) + Tensor::ones({4}),
                      Catch::Contains("add") && Catch::Contains("[2, 3]") && Catch::Contains("[4]") &&
                          Catch::Contains("do not broadcast"));
  REQUIRE_THROWS_WITH(Tensor::ones({2, 3}) * Tensor::ones({3, 2}), Catch::Contains("mul"));
}

TEST_CASE("elementwise: binary gradients, broadcasting in both directions", "[elementwise][grad]") {
  using Fn = Tensor (*)(const Tensor&, const Tensor&);
  const std::vector<std::pair<const char*, Fn>> ops = {{"add", add}, {"sub", sub}, {"mul", mul}};
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{2, 3}, {2, 3}}, {{2, 3}, {3}}, {{3}, {2, 3}}, {{2, 1, 3}, {4, 1}}, {{1, 3}, {2, 1}}, {{}, {2, 2}}};
  for (auto& [name, op] : ops)
    for (auto& [sa, sb] : shapes) {
      INFO(name << " " << to_string(sa) << " " << to_string(sb));
      check_gradients([op = op](const std::vector<Tensor>& in) { return op(in[0], in[1]); }, {rnd(sa, 1), rnd(sb, 2)});
    }
  for (auto& [sa, sb] : shapes) {
    INFO("div " << to_string(sa) << " " << to_string(sb));
    check_gradients([](const std::vector<Tensor>& in) { return in[0] / in[1]; }, {rnd(sa, 1), positive(sb, 2)});
  }
}

TEST_CASE("elementwise: a value used twice and a non-contiguous input", "[elementwise][grad]") {
  check_gradients([](const std::vector<Tensor>& in) { return in[0] * in[0] + in[0]; }, {rnd({3, 2}, 5)});
  Tensor base = rnd({3, 4}, 6);
  Tensor transposed = base.transpose(0, 1);  // a strided view, [4, 3]
  REQUIRE_FALSE(transposed.is_contiguous());
  check_gradients([](const std::vector<Tensor>& in) { return in[0] * in[1]; }, {transposed, rnd({4, 3}, 7)});
  check_gradients([](const std::vector<Tensor>& in) { return gelu(in[0]); }, {rnd({4, 6}, 8).slice(1, 1, 5)});
}

TEST_CASE("elementwise: unary and scalar gradients", "[elementwise][grad]") {
  using Fn = std::function<Tensor(const Tensor&)>;
  const std::vector<std::pair<const char*, Fn>> ops = {
      {"neg", [](const Tensor& x) { return -x; }},
      {"add_scalar", [](const Tensor& x) { return x + 2.5f; }},
      {"mul_scalar", [](const Tensor& x) { return x * -3.0f; }},
      {"rsub_scalar", [](const Tensor& x) { return 1.0f - x; }},
      {"div_scalar", [](const Tensor& x) { return x / 4.0f; }},
      {"exp", [](const Tensor& x) { return tinygpt::exp(x); }},
      {"tanh", [](const Tensor& x) { return tinygpt::tanh(x); }},
      {"gelu", [](const Tensor& x) { return gelu(x); }},
      {"relu", [](const Tensor& x) { return relu(x); }},
      {"leaky_relu", [](const Tensor& x) { return leaky_relu(x, 0.1f); }},
      {"sin", [](const Tensor& x) { return tinygpt::sin(x); }},
      {"cos", [](const Tensor& x) { return tinygpt::cos(x); }},
      {"softplus", [](const Tensor& x) { return softplus(x); }},
      {"clamp", [](const Tensor& x) { return clamp(x, -0.5f, 1.0f); }},
  };
  // Keep relu's inputs away from its kink at 0, where the central difference is meaningless.
  Tensor x = Tensor::from_vector({2, 4}, {-1.2f, -0.7f, -0.3f, 0.2f, 0.4f, 0.9f, 1.3f, 2.1f});
  for (auto& [name, op] : ops) {
    INFO(name);
    check_gradients([op = op](const std::vector<Tensor>& in) { return op(in[0]); }, {x});
  }
  check_gradients([](const std::vector<Tensor>& in) { return tinygpt::log(in[0]); }, {positive({5}, 3)});
  check_gradients([](const std::vector<Tensor>& in) { return tinygpt::sqrt(in[0]); }, {positive({5}, 4)});
  check_gradients([](const std::vector<Tensor>& in) { return log1p(in[0]); }, {positive({5}, 5)});
}

TEST_CASE("elementwise: leaky_relu, sin, cos, log1p, softplus and clamp values", "[elementwise]") {
  const Tensor x = Tensor::from_vector({5}, {-100.0f, -1.0f, 0.0f, 1e-7f, 100.0f});
  require_close(leaky_relu(x, 0.1f).to_vector(), {-10.0f, -0.1f, 0.0f, 1e-7f, 100.0f});
  require_close(tinygpt::sin(x).to_vector(), {std::sin(-100.0f), std::sin(-1.0f), 0.0f, 1e-7f, std::sin(100.0f)});
  require_close(tinygpt::cos(x).to_vector(), {std::cos(-100.0f), std::cos(-1.0f), 1.0f, 1.0f, std::cos(100.0f)});
  REQUIRE(log1p(Tensor::from_vector({1}, {1e-7f})).item() == Approx(1e-7).epsilon(1e-6));  // log(1 + x) would round
  const std::vector<float> sp = softplus(x).to_vector();
  REQUIRE(sp[0] == Approx(std::exp(-100.0)).margin(1e-30));
  REQUIRE(sp[2] == Approx(std::log(2.0)));
  REQUIRE(sp[4] == 100.0f);  // no overflow
  require_close(clamp(x, -1.0f, 1.0f).to_vector(), {-1.0f, -1.0f, 0.0f, 1e-7f, 1.0f});
  REQUIRE_THROWS_WITH(clamp(x, 1.0f, -1.0f), Catch::Contains("clamp: lo 1 is above hi -1"));
}

TEST_CASE("elementwise: the vectorizable exp and tanh behind GELU are accurate", "[elementwise]") {
  double worst_exp = 0, worst_tanh = 0;
  for (float x = -87.0f; x < 88.0f; x += 0.0137f) {
    worst_exp = std::max(worst_exp, std::abs(vector_exp(x) / std::exp(static_cast<double>(x)) - 1.0));
    worst_tanh = std::max(worst_tanh, std::abs(2 * gelu_sigmoid(x) - 1 - std::tanh(static_cast<double>(x))));
  }
  REQUIRE(worst_exp < 3e-7);   // about 2 ulp
  REQUIRE(worst_tanh < 3e-7);  // 2 sigmoid(2u) - 1 = tanh(u), absolute: what 1 + tanh(u) in GELU can resolve
  REQUIRE(vector_exp(-200.0f) == 0.0f);
  REQUIRE(vector_exp(-INFINITY) == 0.0f);  // a masked score: exactly 0
  REQUIRE((vector_exp(200.0f) > 1e38f && std::isfinite(vector_exp(200.0f))));
  REQUIRE(std::isnan(vector_exp(NAN)));
  // The exp op's: the whole range, to 0 and inf.
  REQUIRE(full_range_exp(-200.0f) == 0.0f);
  REQUIRE(full_range_exp(200.0f) == INFINITY);
  REQUIRE(full_range_exp(89.0f) == INFINITY);
  REQUIRE(full_range_exp(88.7f) == Approx(std::exp(double{88.7f})).epsilon(3e-7));
  REQUIRE(full_range_exp(-100.0f) == Approx(std::exp(double{-100.0f})).margin(1.5e-45));  // subnormal: within its spacing
  REQUIRE(std::isnan(full_range_exp(NAN)));
  for (float x = -87.0f; x < 88.0f; x += 0.0137f) REQUIRE(full_range_exp(x) == vector_exp(x));  // the same inside
  // GELU against the formula evaluated in double with std::tanh.
  std::vector<float> xs;
  for (float x = -8.0f; x <= 8.0f; x += 0.01f) xs.push_back(x);
  const std::vector<float> got = gelu(Tensor::from_vector({static_cast<int64_t>(xs.size())}, xs)).to_vector();
  for (size_t i = 0; i < xs.size(); ++i) {
    const double x = xs[i], want = 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    REQUIRE(std::abs(got[i] - want) <= 1e-6 * (1 + std::abs(want)));
  }
}

// Relative error of a float against a double reference, in units of the float's last place.
static double float_math_ulps(float got, double want) {
  if (want == 0) return got == 0 ? 0 : 1e30;
  const double ulp = std::ldexp(1.0, std::ilogb(static_cast<float>(want)) - 23);
  return std::abs(static_cast<double>(got) - want) / ulp;
}

TEST_CASE("elementwise: the project's own log, log1p, expm1 and tanh are accurate to a few ulp", "[elementwise]") {
  double worst_log = 0, worst_log1p = 0, worst_expm1 = 0, worst_tanh = 0;
  for (float x = 1e-38f; x < 3e38f; x *= 1.0007f) worst_log = std::max(worst_log, float_math_ulps(vector_log(x), std::log(double{x})));
  for (float x = 1e-30f; x < 1e30f; x *= 1.0013f) {
    worst_log1p = std::max(worst_log1p, float_math_ulps(vector_log1p(x), std::log1p(double{x})));
    if (x < 0.99f) worst_log1p = std::max(worst_log1p, float_math_ulps(vector_log1p(-x), std::log1p(-double{x})));
  }
  for (float x = 1e-30f; x < 80.0f; x *= 1.0011f)
    for (float v : {x, -x}) {
      worst_expm1 = std::max(worst_expm1, float_math_ulps(vector_expm1(v), std::expm1(double{v})));
      worst_tanh = std::max(worst_tanh, float_math_ulps(vector_tanh(v), std::tanh(double{v})));
    }
  CAPTURE(worst_log, worst_log1p, worst_expm1, worst_tanh);
  REQUIRE(worst_log <= 2);
  REQUIRE(worst_log1p <= 4);
  REQUIRE(worst_expm1 <= 8);
  REQUIRE(worst_tanh <= 8);
  // The edges: subnormals, zero, negatives, infinities and NaN.
  REQUIRE(vector_log(1e-45f) == Approx(std::log(double{1e-45f})).epsilon(1e-6));  // the smallest subnormal
  REQUIRE(vector_log(0.0f) == -INFINITY);
  REQUIRE(std::isnan(vector_log(-1.0f)));
  REQUIRE(std::isnan(vector_log(NAN)));
  REQUIRE(vector_log(INFINITY) == INFINITY);
  REQUIRE(vector_log(1.0f) == 0.0f);
  REQUIRE(vector_log1p(-1.0f) == -INFINITY);
  REQUIRE(vector_log1p(INFINITY) == INFINITY);
  REQUIRE((vector_tanh(100.0f) == 1.0f && vector_tanh(-100.0f) == -1.0f && vector_tanh(0.0f) == 0.0f));
  REQUIRE(std::signbit(vector_tanh(-0.0f)));
  REQUIRE(vector_expm1(1e-20f) == 1e-20f);
}
