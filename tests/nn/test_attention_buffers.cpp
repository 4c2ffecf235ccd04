// MultiheadAttention against the four steps written out with plain loops, Flatten, buffers and
// state_dict, and Dropouts that take their seeds from their places.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "gradcheck.h"
#include "tinygpt/nn/activations.h"
#include "tinygpt/nn/attention.h"
#include "tinygpt/nn/containers.h"

using namespace tinygpt;
using namespace tinygpt::nn;

namespace {
// y[b, i, :] for one head's slice, softmax(q kᵀ / sqrt(d)) v in double; mask: causal or keys to skip.
std::vector<double> reference_heads(const Tensor& q, const Tensor& k, const Tensor& v, int64_t heads, bool causal,
                                    const std::vector<int>& skip_key) {
  const int64_t B = q.size(0), Tq = q.size(1), Tk = k.size(1), E = q.size(2), d = E / heads;
  std::vector<double> y(static_cast<size_t>(B * Tq * E), 0.0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < Tq; ++i) {
        std::vector<double> w(Tk, 0.0);
        double top = -INFINITY, total = 0;
        for (int64_t j = 0; j < Tk; ++j) {
          if ((causal && j > i) || (!skip_key.empty() && skip_key[b * Tk + j])) { w[j] = -INFINITY; continue; }
          for (int64_t c = 0; c < d; ++c) w[j] += double(q.at({b, i, h * d + c})) * k.at({b, j, h * d + c});
          w[j] /= std::sqrt(double(d));
          top = std::max(top, w[j]);
        }
        for (double& x : w) total += x == -INFINITY ? 0 : (x = std::exp(x - top));
        for (int64_t j = 0; j < Tk; ++j)
          if (w[j] != -INFINITY)
            for (int64_t c = 0; c < d; ++c) y[(b * Tq + i) * E + h * d + c] += w[j] / total * v.at({b, j, h * d + c});
      }
  return y;
}
}  // namespace

TEST_CASE("MultiheadAttention: the heads' four steps, causal or with padding", "[nn][attention]") {
  const int64_t B = 2, T = 5, E = 8, H = 2;
  const Tensor x = Tensor::uniform({B, T, E}, 31, -1, 1), mem = Tensor::uniform({B, 3, E}, 32, -1, 1);
  for (bool causal : {false, true}) {
    MultiheadAttention mha(E, H, {.causal = causal});
    const Tensor q = mha.q_proj.forward(x), k = mha.k_proj.forward(x), v = mha.v_proj.forward(x);
    const std::vector<double> heads = reference_heads(q, k, v, H, causal, {});
    std::vector<float> merged(heads.begin(), heads.end());
    const Tensor want = mha.out_proj.forward(Tensor::from_vector({B, T, E}, merged));
    testing::require_close(mha.forward(x).y.to_vector(), want.to_vector(), 2e-5);
  }
  // Cross-attention with padded keys.
  MultiheadAttention cross(E, H, {}, 7);
  const std::vector<int> skip{0, 0, 1, 1, 0, 0};
  const Tensor mask = Tensor::from_vector({B, 3}, {0, 0, 1, 1, 0, 0});
  const Tensor q = cross.q_proj.forward(x), k = cross.k_proj.forward(mem), v = cross.v_proj.forward(mem);
  const std::vector<double> heads = reference_heads(q, k, v, H, false, skip);
  const Tensor want = cross.out_proj.forward(Tensor::from_vector({B, T, E}, std::vector<float>(heads.begin(), heads.end())));
  const AttentionResult r = cross.forward(x, mem, mem, mask);
  testing::require_close(r.y.to_vector(), want.to_vector(), 2e-5);
  REQUIRE(r.weights.shape() == Shape{B, H, T, 3});
  REQUIRE(r.weights.at({0, 1, 4, 2}) == 0.0f);
  // Four projections of distinct initial values, and gradients through all of them.
  REQUIRE(cross.named_parameters().size() == 8);
  REQUIRE(cross.q_proj.weight.to_vector() != cross.k_proj.weight.to_vector());
  MultiheadAttention small(4, 2, {.causal = true}, 3);
  const Tensor input = Tensor::uniform({1, 3, 4}, 33, -1, 1);
  testing::check_gradients([&](const std::vector<Tensor>& in) { return small.forward(in[0]).y; }, {input});
  REQUIRE_THROWS_WITH(MultiheadAttention(6, 4), Catch::Contains("embed_dim 6 is not a positive multiple of num_heads 4"));
  REQUIRE_THROWS_WITH(small.forward(input, Tensor::zeros({1, 2, 4}), Tensor::zeros({1, 2, 4})),
                      Catch::Contains("causal attention needs queries and keys of one length"));
  REQUIRE_THROWS_WITH(small.forward(Tensor::zeros({1, 3, 5})), Catch::Contains("want [B, Tq, 4]"));
}

TEST_CASE("Flatten keeps the batch axis", "[nn]") {
  Sequential net;
  net.add<Flatten>();
  net.add<Linear>(12, 2);
  REQUIRE(net.forward(Tensor::zeros({5, 3, 4})).shape() == Shape{5, 2});
  REQUIRE(Flatten(0).forward(Tensor::zeros({5, 3, 4})).shape() == Shape{60});
}

namespace {
struct Normalizer : Module {  // a user's module with a buffer: a fixed mean, saved but not trained
  Normalizer() {
    scale = register_parameter("scale", Tensor::ones({3}));
    center = register_buffer("center", Tensor::from_vector({3}, {1, 2, 3}));
  }
  Tensor forward(const Tensor& x) const { return (x - center) * scale; }
  Tensor scale, center;
};
struct Holder : Module {
  Holder() { register_module("norm", norm); }
  Normalizer norm;
};
}  // namespace

TEST_CASE("buffers: named, in state_dict, not trained, loaded back by name", "[nn][buffers]") {
  Holder h;
  REQUIRE(h.named_buffers().size() == 1);
  REQUIRE(h.named_buffers()[0].first == "norm.center");
  REQUIRE(h.named_parameters().size() == 1);
  const auto state = h.state_dict();
  REQUIRE(state.size() == 2);
  REQUIRE(state[1].first == "norm.center");
  REQUIRE_FALSE(h.norm.center.requires_grad());
  Holder other;
  other.norm.center.fill_(0.0f);
  other.norm.scale.fill_(5.0f);
  other.load_state_dict(h.state_dict());
  REQUIRE(other.norm.center.to_vector() == std::vector<float>{1, 2, 3});
  REQUIRE(other.norm.scale.to_vector() == std::vector<float>{1, 1, 1});
  auto wrong = h.state_dict();
  wrong[1].second = Tensor::zeros({4});
  REQUIRE_THROWS_WITH(other.load_state_dict(wrong), Catch::Contains("'norm.center' has shape [4], the module's is [3]"));
  REQUIRE_THROWS_WITH(other.load_state_dict({wrong[0]}), Catch::Contains("'norm.center' is missing"));
  auto extra = h.state_dict();
  extra.emplace_back("norm.other", Tensor::zeros({1}));
  REQUIRE_THROWS_WITH(other.load_state_dict(extra), Catch::Contains("'norm.other' is not in the module"));
}

TEST_CASE("Dropout: siblings without seeds draw different masks, a seed keeps its own", "[nn][dropout]") {
  Sequential net;
  net.add<Dropout>(0.5f);
  net.add<Dropout>(0.5f);
  const Tensor x = Tensor::ones({64});
  const std::vector<float> a = net.at<Dropout>(0).forward(x).to_vector();
  const std::vector<float> b = net.at<Dropout>(1).forward(x).to_vector();
  REQUIRE(a != b);
  Dropout seeded(0.5f, 11), again(0.5f, 11);
  REQUIRE(seeded.forward(x).to_vector() == again.forward(x).to_vector());
  // Resuming: the call count set back gives the next mask again.
  const uint64_t calls = seeded.calls();
  const std::vector<float> next = seeded.forward(x).to_vector();
  seeded.set_calls(calls);
  REQUIRE(seeded.forward(x).to_vector() == next);
}
