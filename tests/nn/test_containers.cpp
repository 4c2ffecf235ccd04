// Default initialization, nn::init, Sequential and ModuleList, activation modules, dropout, moving
// modules, and registration that cannot go unnoticed.
#include <catch2/catch.hpp>

#include <cmath>
#include <numeric>
#include <vector>

#include "tinygpt/nn/activations.h"
#include "tinygpt/nn/containers.h"
#include "tinygpt/nn/init.h"
#include "tinygpt/nn/layers.h"
#include "gradcheck.h"

using namespace tinygpt;
using namespace tinygpt::nn;

namespace {

struct Moments {
  double mean, std, lo, hi;
};
Moments moments(const Tensor& t) {
  const std::vector<float> v = t.to_vector();
  double s = 0, ss = 0, lo = v[0], hi = v[0];
  for (float x : v) s += x, ss += double(x) * x, lo = std::min(lo, double(x)), hi = std::max(hi, double(x));
  const double mean = s / v.size();
  return {mean, std::sqrt(ss / v.size() - mean * mean), lo, hi};
}

// A model as a user writes one: children made through add_module, so none can go unregistered.
class TwoLayer : public Module {
 public:
  TwoLayer() : fc1(add_module<Linear>("fc1", 3, 16)), act(add_module<Tanh>("act")), fc2(add_module<Linear>("fc2", 16, 1)) {}
  Tensor forward(const Tensor& x) const { return fc2.forward(act.forward(fc1.forward(x))); }
  Linear& fc1;
  Tanh& act;
  Linear& fc2;
};

// Members registered by reference, as the GPT's layers are.
class WithMembers : public Module {
 public:
  WithMembers() : ln(4), fc(4, 2) {
    register_module("ln", ln);
    register_module("fc", fc);
  }
  LayerNorm ln;
  Linear fc;
};

}  // namespace

TEST_CASE("init: PyTorch's defaults for Linear, Embedding and LayerNorm", "[nn][init]") {
  const Linear fc(400, 300);
  const Moments w = moments(fc.weight), b = moments(fc.bias);
  const double bound = 1 / std::sqrt(400.0);  // U(-1/sqrt(in), 1/sqrt(in)): std bound / sqrt(3)
  REQUIRE(w.lo >= -bound);
  REQUIRE(w.hi <= bound);
  REQUIRE(w.std == Approx(bound / std::sqrt(3.0)).epsilon(0.02));
  REQUIRE(b.hi <= bound);
  REQUIRE(b.std == Approx(bound / std::sqrt(3.0)).epsilon(0.15));
  const Moments e = moments(Embedding(300, 200).weight);
  REQUIRE(e.mean == Approx(0).margin(0.01));
  REQUIRE(e.std == Approx(1).epsilon(0.01));
  const LayerNorm ln(5);
  REQUIRE(ln.weight.to_vector() == std::vector<float>(5, 1.0f));
  REQUIRE(ln.bias.to_vector() == std::vector<float>(5, 0.0f));
  // The same seed, the same bits; another seed, other values.
  REQUIRE(Linear(8, 4, true, 3).weight.to_vector() == Linear(8, 4, true, 3).weight.to_vector());
  REQUIRE(Linear(8, 4, true, 3).weight.to_vector() != Linear(8, 4, true, 4).weight.to_vector());
}

TEST_CASE("init: normal_, uniform_, xavier and kaiming from a seed", "[nn][init]") {
  const Tensor t = Tensor::empty({500, 300});
  init::xavier_uniform_(t, 1);
  const double xb = std::sqrt(6.0 / 800);
  REQUIRE(moments(t).hi <= xb);
  REQUIRE(moments(t).std == Approx(xb / std::sqrt(3.0)).epsilon(0.02));
  init::xavier_normal_(t, 2, 2.0f);
  REQUIRE(moments(t).std == Approx(2 * std::sqrt(2.0 / 800)).epsilon(0.02));
  init::kaiming_normal_(t, 3, 0.0f, init::Nonlinearity::relu);
  REQUIRE(moments(t).std == Approx(std::sqrt(2.0 / 300)).epsilon(0.02));
  init::kaiming_uniform_(t, 4, std::sqrt(5.0f));  // PyTorch's Linear default: bound 1/sqrt(fan_in)
  REQUIRE(moments(t).hi <= 1 / std::sqrt(300.0));
  init::normal_(t, 5, 3.0f, 0.5f);
  REQUIRE(moments(t).mean == Approx(3).epsilon(0.01));
  REQUIRE(moments(t).std == Approx(0.5).epsilon(0.02));
  init::uniform_(t, 6, 2.0f, 4.0f);
  REQUIRE(moments(t).lo >= 2.0);
  REQUIRE(moments(t).hi < 4.0);
  init::constant_(t, 0.25f);
  REQUIRE(moments(t).lo == 0.25);
  REQUIRE(init::gain(init::Nonlinearity::tanh) == Approx(5.0 / 3));
  REQUIRE_THROWS_WITH(init::xavier_uniform_(Tensor::empty({5}), 1), Catch::Contains("2 or more axes"));
}

TEST_CASE("Sequential: children in order, named 0, 1, ..., each starting differently", "[nn][containers]") {
  Sequential net(7);
  Linear& first = net.add<Linear>(4, 4);
  net.add<ReLU>();
  Linear& last = net.add<Linear>(4, 4);
  net.add<Sigmoid>();
  REQUIRE(net.size() == 4);
  std::vector<std::string> names;
  for (const auto& [name, p] : net.named_parameters()) names.push_back(name);
  REQUIRE(names == std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"});
  REQUIRE(first.weight.to_vector() != last.weight.to_vector());  // same shape, different start
  const Tensor x = Tensor::uniform({2, 4}, 1, -1, 1);
  const Tensor by_hand = sigmoid(last.forward(relu(first.forward(x))));
  REQUIRE(net.forward(x).to_vector() == by_hand.to_vector());
  REQUIRE(&net[2] == &last);
  REQUIRE_THROWS_WITH(Sequential().forward(x), Catch::Contains("no modules"));
  // The same seed builds the same network.
  Sequential again(7);
  again.add<Linear>(4, 4);
  REQUIRE(again.named_parameters()[0].second.to_vector() == first.weight.to_vector());
}

namespace {
// Three projections of one shape, added in the order given: a libtorch user's attention.
class Projections : public Module {
 public:
  explicit Projections(const std::vector<std::string>& order) {
    for (const std::string& name : order) add_module<Linear>(name, 8, 8);
  }
  std::vector<float> weight(const std::string& name) const {
    for (const auto& [n, p] : named_parameters())
      if (n == name + ".weight") return p.to_vector();
    return {};
  }
};
class TwoBlocks : public Module {
 public:
  TwoBlocks() {
    add_module<Projections>("block0", std::vector<std::string>{"q", "k", "v"});
    add_module<Sequential>("mlp0").add<Linear>(8, 8);
    add_module<Sequential>("mlp1").add<Linear>(8, 8);
    add_module<Projections>("block1", std::vector<std::string>{"q", "k", "v"});
  }
};
std::vector<std::vector<float>> all_values(const Module& m) {
  std::vector<std::vector<float>> out;
  for (const auto& [name, p] : m.named_parameters()) out.push_back(p.to_vector());
  return out;
}
}  // namespace

TEST_CASE("init: without seeds, every layer starts from its place: siblings differ, order does not matter",
          "[nn][init]") {
  const Projections qkv({"q", "k", "v"}), vkq({"v", "k", "q"});
  REQUIRE(qkv.weight("q") != qkv.weight("k"));  // same shape, different start
  REQUIRE(qkv.weight("k") != qkv.weight("v"));
  REQUIRE(qkv.weight("q") == vkq.weight("q"));  // the same layer whatever order the model was built in
  // Nested: the same child names under different parents start different, and the whole tree
  // equals the same model reset_parameters(0)'d.
  TwoBlocks model;
  const auto built = all_values(model);
  const auto params = model.named_parameters();
  auto value = [&](const std::string& name) {
    for (size_t i = 0; i < params.size(); ++i)
      if (params[i].first == name) return built[i];
    return std::vector<float>{};
  };
  REQUIRE(value("block0.q.weight") != value("block1.q.weight"));
  REQUIRE(value("mlp0.0.weight") != value("mlp1.0.weight"));
  model.reset_parameters(0);
  REQUIRE(all_values(model) == built);
  REQUIRE(all_values(TwoBlocks()) == built);  // reproducible
  // A layer given a seed keeps its values wherever it is put.
  Sequential explicit_seed;
  Linear& seeded = explicit_seed.add<Linear>(8, 8, true, 42);
  REQUIRE(seeded.weight.to_vector() == Linear(8, 8, true, 42).weight.to_vector());
}

TEST_CASE("ModuleList keeps modules for a forward of one's own", "[nn][containers]") {
  ModuleList heads;
  for (int i = 0; i < 3; ++i) heads.add<Linear>(6, 2);
  REQUIRE(heads.size() == 3);
  REQUIRE(heads.parameter_count() == 3 * (12 + 2));
  REQUIRE(heads.at<Linear>(0).weight.to_vector() != heads.at<Linear>(1).weight.to_vector());
  REQUIRE_THROWS_AS(heads.at<LayerNorm>(0), std::bad_cast);
  // Iterated in order, as torch's ModuleList.
  std::vector<const Module*> seen;
  for (Module& m : heads) seen.push_back(&m);
  REQUIRE(seen == std::vector<const Module*>{&heads[0], &heads[1], &heads[2]});
}

TEST_CASE("named_modules: the module and everything below it, parents first, by dotted name", "[nn][containers]") {
  ModuleList net;
  net.add<Linear>(4, 3);
  Sequential& inner = net.add<Sequential>();
  Linear& deep = inner.add<Linear>(3, 2);
  net.add<ReLU>();
  std::vector<std::string> names;
  for (const auto& [name, m] : net.named_modules()) names.push_back(name);
  REQUIRE(names == std::vector<std::string>{"", "0", "1", "1.0", "2"});
  REQUIRE(net.named_modules()[3].second == &deep);
  REQUIRE(net.named_modules()[0].second == &net);
}

TEST_CASE("activations and dropout as modules", "[nn][containers]") {
  const Tensor x = Tensor::from_vector({4}, {-2, -0.5f, 0.5f, 2});
  REQUIRE(ReLU().forward(x).to_vector() == relu(x).to_vector());
  REQUIRE(GELU().forward(x).to_vector() == gelu(x).to_vector());
  REQUIRE(Tanh().forward(x).to_vector() == tinygpt::tanh(x).to_vector());
  REQUIRE(Sigmoid().forward(x).to_vector() == sigmoid(x).to_vector());
  REQUIRE(SiLU().forward(x).to_vector() == silu(x).to_vector());
  REQUIRE(LeakyReLU(0.2f).forward(x).to_vector() == leaky_relu(x, 0.2f).to_vector());
  REQUIRE(Identity().forward(x).same_as(x));
  REQUIRE(SwiGLU().forward(x).to_vector() == swiglu(x).to_vector());  // silu(-2, -0.5) * (0.5, 2)
  REQUIRE(SwiGLU().forward(x).shape() == Shape{2});
  // The norms as modules: RMSNorm, and LayerNorm without a bias (one parameter, weight).
  const Tensor rows = Tensor::randn({3, 5}, 4);
  RMSNorm rms(5, 1e-6f);
  REQUIRE(rms.forward(rows).to_vector() == rms_norm(rows, Tensor::ones({5}), 1e-6f).to_vector());
  REQUIRE(rms.named_parameters().size() == 1);
  LayerNorm plain(5, 1e-5f, false);
  REQUIRE(plain.named_parameters().size() == 1);
  REQUIRE(plain.forward(rows).to_vector() == layer_norm(rows, Tensor::ones({5}), Tensor::zeros({5})).to_vector());
  Dropout drop(0.5f, 11);
  const Tensor ones = Tensor::ones({1000});
  const std::vector<float> a = drop.forward(ones).to_vector(), b = drop.forward(ones).to_vector();
  REQUIRE(a != b);  // a new mask each call
  const size_t kept = static_cast<size_t>(std::count(a.begin(), a.end(), 2.0f));
  REQUIRE(kept + static_cast<size_t>(std::count(a.begin(), a.end(), 0.0f)) == a.size());
  REQUIRE(kept == Approx(500).margin(60));
  Dropout same(0.5f, 11);
  REQUIRE(same.forward(ones).to_vector() == a);  // the same seed repeats
  drop.eval();
  REQUIRE(drop.forward(ones).to_vector() == ones.to_vector());
  REQUIRE_THROWS_WITH(Dropout(1.0f), Catch::Contains("p 1 is not in [0, 1)"));
}

TEST_CASE("modules move with their parameters and children", "[nn][containers]") {
  std::vector<Linear> layers;
  for (int i = 0; i < 5; ++i) layers.push_back(Linear(3, 3, true, static_cast<uint64_t>(i)));  // moved in
  REQUIRE(layers[4].named_parameters()[0].second.same_as(layers[4].weight));
  TwoLayer a;
  const std::vector<float> before = a.fc1.weight.to_vector();
  TwoLayer b(std::move(a));
  REQUIRE(b.fc1.weight.to_vector() == before);
  REQUIRE(b.parameter_count() == 3 * 16 + 16 + 16 + 1);
  REQUIRE(b.named_parameters()[0].second.same_as(b.fc1.weight));
  WithMembers m;
  WithMembers moved(std::move(m));  // members registered by reference follow the move
  REQUIRE(moved.named_parameters().size() == 4);
  REQUIRE(moved.named_parameters()[2].second.same_as(moved.fc.weight));
  moved.eval();
  REQUIRE_FALSE(moved.fc.training());
  Sequential net;
  net.add<Linear>(2, 2);
  Sequential net2 = std::move(net);
  REQUIRE(net2.forward(Tensor::ones({1, 2})).shape() == Shape{1, 2});
}

TEST_CASE("registration: children cannot be forgotten or misplaced", "[nn][containers]") {
  struct Outside : Module {
    explicit Outside(Module& elsewhere) { register_module("elsewhere", elsewhere); }
  };
  std::vector<Linear> layers;  // modules kept in a vector live on the heap, apart from any module
  layers.push_back(Linear(2, 2));
  REQUIRE_THROWS_WITH(Outside{layers[0]}, Catch::Contains("not a member of this module") &&
                                              Catch::Contains("add_module"));
  struct BadName : Module {
    BadName() { register_parameter("a/b", Tensor::zeros({1})); }
  };
  REQUIRE_THROWS_WITH(BadName(), Catch::Contains("without '/'"));
  // reset_parameters draws every child again, each from its own seed.
  TwoLayer net;
  const std::vector<float> w = net.fc1.weight.to_vector();
  net.reset_parameters(99);
  REQUIRE(net.fc1.weight.to_vector() != w);
  TwoLayer other;
  other.reset_parameters(99);
  REQUIRE(other.fc1.weight.to_vector() == net.fc1.weight.to_vector());
  REQUIRE(other.fc2.weight.to_vector() != std::vector<float>(16, other.fc2.weight.to_vector()[0]));
}

TEST_CASE("a small network learns through Sequential", "[nn][containers]") {
  // y = 2 x0 - x1, fitted by plain gradient descent on a Linear inside a Sequential.
  Sequential net;
  Linear& fc = net.add<Linear>(2, 1);
  const Tensor x = Tensor::uniform({64, 2}, 3, -1, 1);
  const Tensor y = matmul(x, Tensor::from_vector({2, 1}, {2, -1}));
  for (int step = 0; step < 300; ++step) {
    net.zero_grad();
    Tensor loss = mse_loss(net.forward(x), y);
    loss.backward();
    for (const Tensor& p : net.parameters())
      for (int64_t i = 0; i < p.numel(); ++i) p.data()[i] -= 0.3f * p.grad().data()[i];
  }
  REQUIRE(fc.weight.at({0, 0}) == Approx(2).margin(1e-3));
  REQUIRE(fc.weight.at({0, 1}) == Approx(-1).margin(1e-3));
}
