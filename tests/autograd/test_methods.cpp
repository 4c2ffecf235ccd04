// The ops a libtorch program reaches for beyond the model's own: more elementwise functions,
// pieces and arrangements, prod/amax, sort, cosine similarity, linspace and *_like, allclose, the
// comparison and compound operators, and Tensor's methods that mirror the free functions. Values
// are torch 1.13's for the same inputs (float32); gradients against finite differences.
#include <catch2/catch.hpp>

#include <cmath>
#include <sstream>
#include <vector>

#include "gradcheck.h"

using namespace tinygpt;
using tinygpt::testing::check_gradients;
using tinygpt::testing::require_close;

namespace {
Tensor u(const Shape& shape, uint64_t seed, float lo = -1, float hi = 1) { return Tensor::uniform(shape, seed, lo, hi); }
std::vector<float> v(std::initializer_list<float> values) { return values; }
}  // namespace

TEST_CASE("methods: erf, atan, log2, log10, rsqrt, reciprocal and the steps", "[methods][elementwise]") {
  const Tensor x = Tensor::from_vector({4}, {0.5f, 1.0f, 8.0f, 100.0f});
  require_close(erf(x).to_vector(), v({0.52049988f, 0.84270079f, 1.0f, 1.0f}));
  require_close(atan(x).to_vector(), v({0.46364761f, 0.78539816f, 1.44644133f, 1.56079666f}));
  require_close(log2(x).to_vector(), v({-1, 0, 3, 6.64385619f}));
  require_close(log10(x).to_vector(), v({-0.30103f, 0, 0.90308999f, 2}));
  require_close(rsqrt(x).to_vector(), v({1.41421356f, 1, 0.35355339f, 0.1f}));
  require_close(reciprocal(x).to_vector(), v({2, 1, 0.125f, 0.01f}));
  const Tensor s = Tensor::from_vector({6}, {-1.5f, -0.5f, 0.0f, 0.5f, 1.5f, 2.5f});
  REQUIRE(sign(s).to_vector() == v({-1, -1, 0, 1, 1, 1}));
  REQUIRE(floor(s).to_vector() == v({-2, -1, 0, 0, 1, 2}));
  REQUIRE(ceil(s).to_vector() == v({-1, -0.0f, 0, 1, 2, 3}));
  REQUIRE(round(s).to_vector() == v({-2, -0.0f, 0, 0, 2, 2}));  // halves to even
  REQUIRE(std::isnan(sign(Tensor::scalar(NAN)).item()));
  const Tensor positive = u({2, 3}, 1, 0.5f, 2.0f);
  using Op = Tensor (*)(const Tensor&);
  for (Op f : {Op(&erf), Op(&atan), Op(&log2), Op(&log10), Op(&rsqrt), Op(&reciprocal)}) {
    check_gradients([f](const std::vector<Tensor>& in) { return (*f)(in[0]); }, {positive});
  }
  Tensor p = s.clone();
  p.set_requires_grad(true);
  sum(sign(p) + floor(p) + ceil(p) + round(p)).backward();
  REQUIRE(p.grad().to_vector() == std::vector<float>(6, 0.0f));
}

TEST_CASE("methods: comparison and compound operators", "[methods][elementwise]") {
  const Tensor a = Tensor::from_vector({3}, {1, 2, 3}), b = Tensor::from_vector({3}, {3, 2, 1});
  REQUIRE((a > b).to_vector() == v({0, 0, 1}));
  REQUIRE((a >= b).to_vector() == v({0, 1, 1}));
  REQUIRE((a < 2.0f).to_vector() == v({1, 0, 0}));
  REQUIRE((a <= 2.0f).to_vector() == v({1, 1, 0}));
  REQUIRE((6.0f / a).to_vector() == v({6, 3, 2}));
  Tensor w = Tensor::from_vector({3}, {1, 2, 3}).set_requires_grad(true);
  Tensor x = w;
  x += b;  // x is a new tensor, w as it was
  x *= 2.0f;
  x -= 1.0f;
  x /= b;
  REQUIRE(w.to_vector() == v({1, 2, 3}));
  require_close(x.to_vector(), v({7.0f / 3, 7.0f / 2, 7}));
  x.sum().backward();
  require_close(w.grad().to_vector(), v({2.0f / 3, 1, 2}));
  // allclose: |a - b| <= atol + rtol |b|, NaN only with equal_nan.
  REQUIRE(allclose(a, a + 1e-6f));
  REQUIRE_FALSE(allclose(a, a + 1e-3f));
  REQUIRE(allclose(a, a + 1e-3f, 1e-3, 0));
  REQUIRE(allclose(Tensor::from_vector({2}, {1, 1}), Tensor::scalar(1)));  // broadcast
  REQUIRE_FALSE(allclose(Tensor::scalar(NAN), Tensor::scalar(NAN)));
  REQUIRE(allclose(Tensor::scalar(NAN), Tensor::scalar(NAN), 1e-5, 1e-8, true));
  REQUIRE(allclose(Tensor::scalar(INFINITY), Tensor::scalar(INFINITY)));
}

TEST_CASE("methods: max and min give values and indices, amax shares ties, prod passes zeros", "[methods][reduce]") {
  const Tensor x = Tensor::from_vector({2, 3}, {1, 5, 5, -2, -7, 0});
  auto [values, indices] = max(x, 1);
  REQUIRE(values.to_vector() == v({5, 0}));
  REQUIRE(indices.values == std::vector<int64_t>{1, 2});  // the first on ties
  REQUIRE(indices.shape == Shape{2});
  const ValuesIndices low = x.min(0, true);
  REQUIRE(low.to_vector() == v({-2, -7, 0}));
  REQUIRE(low.indices.shape == Shape{1, 3});
  REQUIRE(low.indices.values == std::vector<int64_t>{1, 1, 1});

  Tensor t = Tensor::from_vector({3}, {1, 3, 3}).set_requires_grad(true);
  amax(t).backward();  // torch.amax: the gradient split between equal maxima
  REQUIRE(t.grad().to_vector() == v({0, 0.5f, 0.5f}));
  REQUIRE(amin(x, {0, 1}).item() == -7);
  REQUIRE(amax(x, 1, true).shape() == Shape{2, 1});
  check_gradients([](const std::vector<Tensor>& in) { return amax(in[0], 1) * amin(in[0], {0, 1}); }, {u({3, 4}, 2)});

  Tensor z = Tensor::from_vector({2, 3}, {2, 0, 3, 2, 0, 0}).set_requires_grad(true);
  const Tensor pz = prod(z, 1);
  REQUIRE(pz.to_vector() == v({0, 0}));
  pz.sum().backward();
  REQUIRE(z.grad().to_vector() == v({0, 6, 0, 0, 0, 0}));  // one zero: the others' product; two: 0
  REQUIRE(prod(Tensor::from_vector({2, 2}, {1, 2, 3, 4})).item() == 24);
  check_gradients([](const std::vector<Tensor>& in) { return prod(in[0], 0, true); }, {u({3, 2}, 3)});
}

TEST_CASE("methods: sort and argsort are topk of the whole axis, stable", "[methods][index]") {
  const Tensor x = Tensor::from_vector({2, 4}, {3, 1, 2, 1, 0, -1, 5, 4});
  const TopK up = sort(x, 1);
  REQUIRE(up.values.to_vector() == v({1, 1, 2, 3, -1, 0, 4, 5}));
  REQUIRE(up.indices.values == std::vector<int64_t>{1, 3, 2, 0, 1, 0, 3, 2});  // equal values keep their order
  REQUIRE(argsort(x, 1, true).values == std::vector<int64_t>{0, 2, 1, 3, 2, 3, 0, 1});
  REQUIRE(sort(x, 0).values.to_vector() == v({0, -1, 2, 1, 3, 1, 5, 4}));
  check_gradients([](const std::vector<Tensor>& in) { return sort(in[0], -1, true).values * arange(4); },
                  {u({2, 4}, 4)});
}

TEST_CASE("methods: chunk, narrow, select, unbind, flip, repeat and pad", "[methods][views]") {
  const Tensor x = arange(12).reshape({3, 4});
  const std::vector<Tensor> pieces = chunk(x, 3, 1);  // torch.chunk: ceil(4 / 3) = 2 each, so 2 pieces
  REQUIRE(pieces.size() == 2);
  REQUIRE(pieces[1].to_vector() == v({2, 3, 6, 7, 10, 11}));
  REQUIRE(chunk(arange(5), 2).at(1).to_vector() == v({3, 4}));
  REQUIRE(narrow(x, 1, 1, 2).to_vector() == v({1, 2, 5, 6, 9, 10}));
  REQUIRE(select(x, 1, -1).to_vector() == v({3, 7, 11}));
  REQUIRE(x[2].to_vector() == v({8, 9, 10, 11}));
  REQUIRE(unbind(x, 0).size() == 3);
  REQUIRE(unbind(x, 1)[2].to_vector() == v({2, 6, 10}));
  REQUIRE(flip(x, {0, 1}).to_vector() == v({11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0}));
  REQUIRE(flip(x, {1}).to_vector() == v({3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8}));
  const Tensor r = repeat(Tensor::from_vector({2}, {1, 2}), {2, 3});  // torch: [[1,2,1,2,1,2],[1,2,1,2,1,2]]
  REQUIRE(r.shape() == Shape{2, 6});
  REQUIRE(r.to_vector() == v({1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2}));
  REQUIRE(repeat(Tensor::from_vector({2, 1}, {1, 2}), {1, 2}).to_vector() == v({1, 1, 2, 2}));
  const Tensor p = pad(Tensor::from_vector({1, 2}, {1, 2}), {1, 2, 1, 0}, -1.0f);
  REQUIRE(p.shape() == Shape{2, 5});
  REQUIRE(p.to_vector() == v({-1, -1, -1, -1, -1, -1, 1, 2, -1, -1}));
  REQUIRE_THROWS_WITH(select(x, 0, 3), Catch::Contains("select: index 3 of axis 0 of shape [3, 4]"));
  REQUIRE_THROWS_WITH(pad(x, {1}), Catch::Contains("pad: 1 numbers"));
  REQUIRE_THROWS_WITH(pad(x, {-1, 0}), Catch::Contains("negative"));
  REQUIRE_THROWS_WITH(flip(x, {1, -1}), Catch::Contains("flip: axis 1 given twice"));
  REQUIRE_THROWS_WITH(repeat(x, {2}), Catch::Contains("repeat: 1 repeats for the 2 axes"));
  const Tensor y = u({3, 4}, 5);
  check_gradients([](const std::vector<Tensor>& in) { return flip(in[0], {0}) * arange(4); }, {y});
  check_gradients([](const std::vector<Tensor>& in) { return repeat(in[0], {2, 1, 2}); }, {y});
  check_gradients([](const std::vector<Tensor>& in) { return pad(in[0], {2, 1, 0, 1}, 3.0f); }, {y});
  check_gradients([](const std::vector<Tensor>& in) { return select(in[0], 1, 2) * narrow(in[0], 1, 0, 1).squeeze(); },
                  {y});
}

TEST_CASE("methods: cosine_similarity, linspace and the *_like creators", "[methods][create]") {
  const Tensor a = Tensor::from_vector({2, 2}, {1, 0, 3, 4}), b = Tensor::from_vector({2}, {1, 1});
  require_close(cosine_similarity(a, b, 1).to_vector(), v({0.70710678f, 0.98994949f}));
  REQUIRE(cosine_similarity(Tensor::zeros({1, 3}), Tensor::ones({1, 3})).item() == 0);  // eps keeps it finite
  check_gradients([](const std::vector<Tensor>& in) { return cosine_similarity(in[0], in[1], 0); },
                  {u({3, 2}, 6), u({3, 2}, 7)});
  REQUIRE(linspace(0, 1, 5).to_vector() == v({0, 0.25f, 0.5f, 0.75f, 1}));
  REQUIRE(linspace(-1, 1, 1).to_vector() == v({-1}));
  REQUIRE(linspace(0, 0.3, 4).to_vector().back() == 0.3f);  // the end exactly
  REQUIRE_THROWS_WITH(linspace(0, 1, -2), Catch::Contains("linspace"));
  const Tensor like = u({2, 3}, 8);
  REQUIRE(zeros_like(like).to_vector() == std::vector<float>(6, 0.0f));
  REQUIRE(ones_like(like).shape() == Shape{2, 3});
  REQUIRE(full_like(like, 7).to_vector() == std::vector<float>(6, 7.0f));
  REQUIRE(randn_like(like, 3).to_vector() == Tensor::randn({2, 3}, 3).to_vector());
  REQUIRE(rand_like(like, 3).to_vector() == Tensor::uniform({2, 3}, 3, 0, 1).to_vector());
  REQUIRE_FALSE(zeros_like(like).requires_grad());
}

TEST_CASE("methods: Tensor's methods are the free functions", "[methods]") {
  const Tensor x = u({3, 4}, 9, 0.5f, 2.0f), y = u({4, 2}, 10);
  auto same = [](const Tensor& a, const Tensor& b) { REQUIRE(a.to_vector() == b.to_vector()); };
  same(x.sum(), sum(x));
  same(x.sum(1, true), sum(x, 1, true));
  same(x.mean(0), mean(x, 0));
  same(x.var(1), var(x, 1));
  same(x.std(), tinygpt::std(x));
  same(x.norm(3.0f, 1), norm(x, 3.0f, 1));
  same(x.logsumexp(1), logsumexp(x, 1));
  same(x.amax(0), amax(x, 0));
  same(x.amin(), amin(x));
  same(x.prod(1), prod(x, 1));
  same(x.prod(), prod(x));
  same(x.max(1), tinygpt::max(x, 1));
  REQUIRE(x.max(1).indices == tinygpt::max(x, 1).indices);
  same(x.min(0), tinygpt::min(x, 0));
  same(x.cumsum(1), cumsum(x, 1));
  same(x.exp(), exp(x));
  same(x.log(), log(x));
  same(x.log1p(), log1p(x));
  same(x.sqrt(), sqrt(x));
  same(x.rsqrt(), rsqrt(x));
  same(x.abs(), abs(x));
  same(x.sign(), sign(x));
  same(x.neg(), -x);
  same(x.reciprocal(), reciprocal(x));
  same(x.tanh(), tanh(x));
  same(x.sigmoid(), sigmoid(x));
  same(x.relu(), relu(x));
  same(x.sin(), sin(x));
  same(x.cos(), cos(x));
  same(x.erf(), erf(x));
  same(x.floor(), floor(x));
  same(x.ceil(), ceil(x));
  same(x.round(), round(x));
  same(x.pow(3.0f), pow(x, 3.0f));
  same(x.clamp(0.7f, 1.5f), clamp(x, 0.7f, 1.5f));
  same(x.softmax(0), softmax(x, 0));
  same(x.log_softmax(1), log_softmax(x, 1));
  same(x.matmul(y), matmul(x, y));
  same(x.masked_fill(x > 1.0f, 0), masked_fill(x, x > 1.0f, 0));
  same(x.t(), x.transpose(0, 1));
  REQUIRE(x.t().shape() == Shape{4, 3});
  same(arange(3).t(), arange(3));
  REQUIRE_THROWS_WITH(Tensor::zeros({2, 2, 2}).t(), Catch::Contains("t: a tensor of shape [2, 2, 2]"));
  same(x.narrow(1, 1, 2), narrow(x, 1, 1, 2));
  same(x.select(0, 1), x[1]);
  REQUIRE(x.chunk(2, 1).size() == 2);
  REQUIRE(x.split(3, 1).at(1).shape() == Shape{3, 1});
  REQUIRE(x.unbind(1).size() == 4);
  same(x.flip({1}), flip(x, {1}));
  same(x.repeat({1, 2}), repeat(x, {1, 2}));
  // A method's result is in the graph as the function's is.
  Tensor w = x.clone();
  w.set_requires_grad(true);
  w.exp().sum().backward();
  same(w.grad(), exp(x));
}

TEST_CASE("methods: a shape prints as libtorch's sizes do", "[methods]") {
  std::ostringstream out;
  out << Tensor::zeros({2, 3}).shape() << " " << Shape{} << " " << Shape{7};
  REQUIRE(out.str() == "[2, 3] [] [7]");
}
