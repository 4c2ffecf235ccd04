#include <catch2/catch.hpp>

#include <functional>

#include "tinygpt/autograd/graph.h"
#include "tinygpt/autograd/ops.h"
#include "gradcheck.h"

using namespace tinygpt;

TEST_CASE("tensor: creation, shape, strides and element access", "[tensor]") {
  Tensor t = Tensor::from_vector({2, 3}, {1, 2, 3, 4, 5, 6});
  REQUIRE(t.shape() == Shape{2, 3});
  REQUIRE(t.strides() == Strides{3, 1});
  REQUIRE(t.numel() == 6);
  REQUIRE(t.is_contiguous());
  REQUIRE(t.at({1, 2}) == 6.0f);
  REQUIRE(Tensor::zeros({4}).to_vector() == std::vector<float>(4, 0.0f));
  REQUIRE(Tensor::full({2}, 7.0f).to_vector() == std::vector<float>{7, 7});
  REQUIRE_THROWS_WITH(Tensor::from_vector({2, 2}, {1, 2, 3}), Catch::Contains("3 values for shape [2, 2]"));
  REQUIRE_THROWS_WITH(t.at({2, 0}), Catch::Contains("out of range"));
  REQUIRE_THROWS_WITH(t.item(), Catch::Contains("[2, 3] has 6 elements"));
}

TEST_CASE("tensor: element counts that overflow or sizes below zero are errors, not wrapped numbers", "[tensor][errors]") {
  REQUIRE(numel(Shape{int64_t{1} << 31, int64_t{1} << 31}) == int64_t{1} << 62);
  REQUIRE_THROWS_WITH(numel(Shape{int64_t{1} << 32, int64_t{1} << 32}), Catch::Contains("more elements than"));
  REQUIRE_THROWS_WITH(Tensor::empty({int64_t{1} << 40, int64_t{1} << 40}), Catch::Contains("more elements than"));
  REQUIRE_THROWS_WITH(numel(Shape{3, -2}), Catch::Contains("[3, -2]: a negative size"));
}

TEST_CASE("tensor: seeded random tensors repeat bit for bit", "[tensor]") {
  REQUIRE(Tensor::randn({100}, 7).to_vector() == Tensor::randn({100}, 7).to_vector());
  REQUIRE(Tensor::randn({100}, 7).to_vector() != Tensor::randn({100}, 8).to_vector());
  std::vector<float> u = Tensor::uniform({1000}, 3, -2.0f, 5.0f).to_vector();
  for (float x : u) REQUIRE((x >= -2.0f && x < 5.0f));
  std::vector<float> n = Tensor::randn({20000}, 1).to_vector();
  double m = 0, v = 0;
  for (float x : n) m += x;
  m /= n.size();
  for (float x : n) v += (x - m) * (x - m);
  v /= n.size();
  REQUIRE(std::abs(m) < 0.03);
  REQUIRE(std::abs(v - 1.0) < 0.05);
}

TEST_CASE("autograd: gradients accumulate where a value feeds several ops", "[autograd]") {
  Tensor x = Tensor::from_vector({3}, {1, 2, 3}).set_requires_grad(true);
  // y = sum(x * x + 3 x): dy/dx = 2x + 3
  Tensor y = sum(x * x + x * 3.0f);
  y.backward();
  REQUIRE(x.grad().to_vector() == std::vector<float>{5, 7, 9});
  // A second backward adds to the leaf's gradient; zero_grad clears it.
  sum(x * 2.0f).backward();
  REQUIRE(x.grad().to_vector() == std::vector<float>{7, 9, 11});
  x.zero_grad();
  REQUIRE_FALSE(x.has_grad());
}

TEST_CASE("autograd: a diamond-shaped graph is visited once per node", "[autograd]") {
  Tensor x = Tensor::from_vector({2}, {0.5f, -1.0f}).set_requires_grad(true);
  Tensor a = tinygpt::exp(x);
  Tensor b = a * a;           // uses a twice
  Tensor c = a + b;           // and a again
  tinygpt::testing::check_gradients([](const std::vector<Tensor>& in) {
    Tensor e = tinygpt::exp(in[0]);
    return e + e * e;
  }, {Tensor::from_vector({2}, {0.5f, -1.0f})});
  sum(c).backward();
  // d/dx (e^x + e^2x) = e^x + 2 e^2x
  REQUIRE(x.grad().at({0}) == Approx(std::exp(0.5) + 2 * std::exp(1.0)).epsilon(1e-6));
}

TEST_CASE("autograd: a gradient handed on without a copy is copied before it is added into", "[autograd]") {
  // z = s + d, s = a + b, b = 3d, d = 5a, a = 2x, so z = 42x. The adds hand their gradient on
  // whole: s, d, a and b first share one buffer; b's backward then adds into d's gradient and d's
  // into a's, each of which must be copied first or a would see b's share twice.
  Tensor x = Tensor::from_vector({3}, {1, -2, 0.5f}).set_requires_grad(true);
  Tensor a = x * 2.0f, d = a * 5.0f;
  Tensor z = (a + d * 3.0f) + d;
  sum(z).backward();
  REQUIRE(x.grad().to_vector() == std::vector<float>(3, 42.0f));
  // The same through reshapes, which hand on their gradient too.
  Tensor h = x * 2.0f;
  sum(h.reshape({3, 1}).reshape({3}) + h * h).backward();  // 42 + 2 (1 + 2h)
  REQUIRE(x.grad().to_vector() == std::vector<float>{42 + 2 * (1 + 4.0f), 42 + 2 * (1 - 8.0f), 42 + 2 * (1 + 2.0f)});
  // Leaves never share: a + b gives each its own buffer, and writing one leaves the other alone.
  Tensor p = Tensor::ones({3}).set_requires_grad(true), q = Tensor::ones({3}).set_requires_grad(true);
  sum(p + q).backward();
  p.grad().data()[0] = 5.0f;
  REQUIRE(q.grad().to_vector() == std::vector<float>{1, 1, 1});
}

TEST_CASE("autograd: no-grad scope records nothing", "[autograd]") {
  Tensor x = Tensor::ones({2}).set_requires_grad(true);
  {
    NoGradGuard guard;
    REQUIRE_FALSE(grad_enabled());
    Tensor y = x * 2.0f;
    REQUIRE_FALSE(y.requires_grad());
  }
  REQUIRE(grad_enabled());
  REQUIRE((x * 2.0f).requires_grad());
}

TEST_CASE("autograd: the graph is freed after backward", "[autograd]") {
  Tensor x = Tensor::ones({4}).set_requires_grad(true);
  Tensor hidden = x * 3.0f;
  std::weak_ptr<TensorImpl> watch = hidden.impl_ptr();
  Tensor y = sum(hidden);
  hidden = Tensor();
  REQUIRE_FALSE(watch.expired());  // kept alive by y's node
  y.backward();
  REQUIRE(watch.expired());        // backward released the node that held it
  REQUIRE(x.grad().to_vector() == std::vector<float>(4, 3.0f));
  REQUIRE_THROWS_WITH(y.backward(), Catch::Contains("freed by an earlier backward"));
}

TEST_CASE("autograd: bad backward calls raise clear errors", "[autograd][errors]") {
  Tensor x = Tensor::ones({2, 3}).set_requires_grad(true);
  Tensor y = x * 2.0f;
  REQUIRE_THROWS_WITH(y.backward(), Catch::Contains("backward") && Catch::Contains("[2, 3]") &&
                                        Catch::Contains("seed"));
  REQUIRE_THROWS_WITH(y.backward(Tensor::ones({3})), Catch::Contains("seed gradient of shape [3]"));
  y.backward(Tensor::ones({2, 3}));  // an explicit seed of the right shape works
  REQUIRE(x.grad().to_vector() == std::vector<float>(6, 2.0f));
  REQUIRE_THROWS_WITH(Tensor::ones({1}).backward(), Catch::Contains("does not require a gradient"));
}

TEST_CASE("tensor: an undefined tensor given to an op is an error naming the op, never a crash", "[tensor][errors]") {
  const Tensor x = Tensor::ones({2, 4}), none;
  auto refused = [](const std::function<Tensor()>& op, const std::string& name) {
    INFO(name);
    REQUIRE_THROWS_AS(op(), std::invalid_argument);
    REQUIRE_THROWS_WITH(op(), Catch::Contains("undefined tensor"));
  };
  refused([&] { return add(none, x); }, "add");
  refused([&] { return add(x, none); }, "add, second");
  refused([&] { return mul(x, none); }, "mul");
  refused([&] { return exp(none); }, "exp");
  refused([&] { return gelu(none); }, "gelu");
  refused([&] { return silu(none); }, "silu");
  refused([&] { return matmul(x, none); }, "matmul");
  refused([&] { return linear(x, none, Tensor()); }, "linear");
  refused([&] { return softmax(none); }, "softmax");
  refused([&] { return sum(none); }, "sum");
  refused([&] { return layer_norm(none, Tensor::ones({4}), Tensor()); }, "layer_norm");
  refused([&] { return rms_norm(x, none); }, "rms_norm");
  refused([&] { return swiglu(none); }, "swiglu");
  refused([&] { return cross_entropy(none, std::vector<int32_t>{0, 1}); }, "cross_entropy");
  refused([&] { return concat({x, none}, 0); }, "concat");
  refused([&] { return none.transpose(0, 1); }, "transpose");
  refused([&] { return none.contiguous(); }, "contiguous");
  REQUIRE_THROWS_WITH(gelu(none), Catch::StartsWith("gelu: an undefined tensor"));
  REQUIRE_THROWS_WITH(none.data(), Catch::Contains("undefined tensor"));
  REQUIRE_FALSE(none.defined());
}

TEST_CASE("tensor: an input changed in place between forward and backward is an error naming the op",
          "[tensor][errors]") {
  Tensor x = Tensor::from_vector({2}, {1, 2}).set_requires_grad(true);
  Tensor w = Tensor::from_vector({2}, {3, 4}).set_requires_grad(true);
  Tensor y = sum(mul(x, w));
  const uint64_t before = w.version();
  w.fill_(100.0f);  // the gradient of x is w as mul read it: 3 and 4, not 100
  REQUIRE(w.version() == before + 1);
  REQUIRE_THROWS_WITH(y.backward(), Catch::Contains("mul: input 1 was changed in place") &&
                                        Catch::Contains("after mul read it and before backward"));
  // A view shares its storage's version: changing the view is changing the tensor.
  Tensor a = Tensor::from_vector({2, 2}, {1, 2, 3, 4}).set_requires_grad(true);
  Tensor z = sum(exp(a));
  const Tensor copy = a.transpose(0, 1).contiguous();  // a copy: changing it leaves a alone
  copy.fill_(0.0f);
  REQUIRE(a.version() == 0);
  a.detach().slice(0, 1, 2).copy_from_(Tensor::zeros({1, 2}));  // a view of a's storage: a changed
  REQUIRE_THROWS_WITH(z.backward(), Catch::Contains("exp: input 0 was changed in place"));
  // Changed after backward: nothing to refuse.
  Tensor p = Tensor::from_vector({1}, {2}).set_requires_grad(true);
  Tensor q = sum(mul(p, p));
  q.backward();
  p.fill_(5.0f);
  REQUIRE(p.grad().to_vector() == std::vector<float>{4});
}

TEST_CASE("tensor: an op's output changed in place before backward is an error naming both ops", "[tensor][errors]") {
  // exp, sigmoid, tanh and softmax read their output in backward: e^0.5, not 7, is exp's slope.
  const std::vector<std::pair<const char*, std::function<Tensor(const Tensor&)>>> ops = {
      {"exp", [](const Tensor& a) { return exp(a); }},
      {"sigmoid", [](const Tensor& a) { return sigmoid(a); }},
      {"tanh", [](const Tensor& a) { return tanh(a); }},
      {"softmax", [](const Tensor& a) { return softmax(a); }},
      {"add", [](const Tensor& a) { return a + a; }}};  // one that reads no output: the change is still not in the graph
  for (const auto& [name, op] : ops) {
    INFO(name);
    Tensor a = Tensor::from_vector({1, 2}, {0.5f, -1.0f}).set_requires_grad(true);
    Tensor y = op(a);
    y.fill_(7.0f);
    REQUIRE_THROWS_WITH(sum(y).backward(), Catch::Contains(std::string(name) + ": its output was changed in place by "
                                                                                 "fill_ after " + name + " made it"));
    REQUIRE_FALSE(a.has_grad());
  }
  // Through a view of the output's storage, by copy_from_, read afterwards through another view.
  Tensor a = Tensor::from_vector({2, 2}, {1, 2, 3, 4}).set_requires_grad(true);
  Tensor y = exp(a);
  y.detach().slice(0, 0, 1).copy_from_(Tensor::zeros({1, 2}));
  REQUIRE_THROWS_WITH(sum(y.transpose(0, 1)).backward(), Catch::Contains("exp: its output was changed in place by copy_from_"));
  // Changed after an op read it: that op's input check speaks first.
  Tensor y2 = exp(a);
  Tensor z2 = sum(y2);
  y2.fill_(1.0f);
  REQUIRE_THROWS_WITH(z2.backward(), Catch::Contains("input 0 was changed in place by fill_ after"));
  // A change made before the next op reads it is that op's input, as it was: nothing refused.
  Tensor b = Tensor::from_vector({2}, {1, 2}).set_requires_grad(true);
  Tensor c = b.detach().clone();
  c.fill_(3.0f);
  Tensor d = sum(mul(b, c));
  d.backward();
  REQUIRE(b.grad().to_vector() == std::vector<float>{3, 3});
}

TEST_CASE("tensor: a backward through a graph an earlier backward freed fails, from any root", "[tensor][errors]") {
  Tensor a = Tensor::from_vector({2}, {0.5f, 1.0f}).set_requires_grad(true);
  Tensor b = exp(a);
  Tensor c = sum(b * 2.0f), d = sum(b * 3.0f);
  c.backward();
  const std::vector<float> after_first = a.grad().to_vector();
  REQUIRE_THROWS_WITH(d.backward(), Catch::Contains("backward: mul_scalar reads a tensor whose graph an earlier backward "
                                                    "freed; run the forward pass again"));
  REQUIRE(a.grad().to_vector() == after_first);  // nothing written
  REQUIRE_THROWS_WITH(c.backward(), Catch::Contains("freed by an earlier backward"));
  // The same losses, summed first: one backward, each gradient counted once.
  Tensor a2 = Tensor::from_vector({2}, {0.5f, 1.0f}).set_requires_grad(true);
  Tensor b2 = exp(a2);
  (sum(b2 * 2.0f) + sum(b2 * 3.0f)).backward();
  REQUIRE(a2.grad().to_vector()[0] == Approx(5 * std::exp(0.5)));
}

TEST_CASE("tensor: an optimizer step between forward and backward is an error naming the step", "[tensor][errors]") {
  Tensor w = Tensor::from_vector({2}, {1, 2}).set_requires_grad(true);
  Tensor x = Tensor::from_vector({2}, {3, 4});
  sum(mul(w, x)).backward();  // a gradient for the step
  Tensor loss = sum(mul(w, w));  // reads w as it is now
  w.mark_changed("AdamW::step");  // what every optimizer's step does after writing through data()
  REQUIRE_THROWS_WITH(loss.backward(), Catch::Contains("mul: input 0 was changed in place by AdamW::step"));
}
