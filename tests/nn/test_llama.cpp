// The GPT model with the Llama family's pieces: a plain-loop model in double (an independent
// implementation of SPEC.md's formulas) against the forward, finite differences on every
// parameter, the key/value-cache decoder against the forward, and the parameter list.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>

#include "gradcheck.h"
#include "random_ids.h"
#include "tinygpt/autograd/parallel.h"
#include "tinygpt/autograd/random.h"
#include "tinygpt/nn/gpt.h"
#include "tinygpt/nn/sampling.h"

using namespace tinygpt;
using namespace tinygpt::nn;
using tinygpt::testing::random_ids;

namespace {

using Matrix = std::vector<std::vector<double>>;  // [rows][cols]

// SPEC.md's model for one sequence, in double, from the parameters by name.
struct PlainModel {
  GPTConfig c;
  std::map<std::string, std::vector<float>> p;

  double at(const std::string& name, int64_t i) const { return p.at(name)[static_cast<size_t>(i)]; }
  bool has(const std::string& name) const { return p.count(name) > 0; }

  Matrix norm(const Matrix& x, const std::string& prefix) const {
    Matrix y = x;
    const auto C = static_cast<int64_t>(x[0].size());
    for (size_t t = 0; t < x.size(); ++t) {
      double mean = 0, square = 0;
      for (double v : x[t]) mean += v / C;
      if (c.norm == NormKind::rmsnorm) mean = 0;
      for (double v : x[t]) square += (v - mean) * (v - mean) / C;
      for (int64_t j = 0; j < C; ++j)
        y[t][j] = (x[t][j] - mean) / std::sqrt(square + c.norm_eps) * at(prefix + ".weight", j) +
                  (has(prefix + ".bias") ? at(prefix + ".bias", j) : 0.0);
    }
    return y;
  }
  Matrix linear(const Matrix& x, const std::string& prefix, int64_t out) const {
    const auto in = static_cast<int64_t>(x[0].size());
    Matrix y(x.size(), std::vector<double>(out));
    for (size_t t = 0; t < x.size(); ++t)
      for (int64_t o = 0; o < out; ++o) {
        double s = has(prefix + ".bias") ? at(prefix + ".bias", o) : 0.0;
        for (int64_t i = 0; i < in; ++i) s += at(prefix + ".weight", o * in + i) * x[t][i];
        y[t][o] = s;
      }
    return y;
  }
  // Pairs (2i, 2i+1) of a head starting at column `from` turned by pos theta^(-2i/hs).
  void rope(std::vector<double>& row, int64_t from, int64_t pos) const {
    const int64_t hs = c.head_size();
    for (int64_t i = 0; i < hs / 2; ++i) {
      const double a = double(pos) * std::pow(double(c.rope_theta), -2.0 * double(i) / double(hs));
      const double x0 = row[from + 2 * i], x1 = row[from + 2 * i + 1];
      row[from + 2 * i] = x0 * std::cos(a) - x1 * std::sin(a);
      row[from + 2 * i + 1] = x0 * std::sin(a) + x1 * std::cos(a);
    }
  }
  Matrix attention(const Matrix& x, const std::string& prefix) const {
    const int64_t T = static_cast<int64_t>(x.size()), nh = c.n_head, g = c.kv_heads(), hs = c.head_size();
    Matrix qkv = linear(x, prefix + ".c_attn", (nh + 2 * g) * hs);
    if (c.position == PositionKind::rope)
      for (int64_t t = 0; t < T; ++t)
        for (int64_t h = 0; h < nh + g; ++h) rope(qkv[t], h * hs, t);
    Matrix y(T, std::vector<double>(nh * hs, 0.0));
    for (int64_t h = 0; h < nh; ++h) {
      const int64_t kv = h / (nh / g), k0 = nh * hs + kv * hs, v0 = (nh + g) * hs + kv * hs;
      for (int64_t i = 0; i < T; ++i) {
        std::vector<double> w(i + 1);
        double most = -1e300, sum = 0;
        for (int64_t j = 0; j <= i; ++j) {
          double s = 0;
          for (int64_t d = 0; d < hs; ++d) s += qkv[i][h * hs + d] * qkv[j][k0 + d];
          w[j] = s / std::sqrt(double(hs));
          most = std::max(most, w[j]);
        }
        for (double& v : w) sum += (v = std::exp(v - most));
        for (int64_t j = 0; j <= i; ++j)
          for (int64_t d = 0; d < hs; ++d) y[i][h * hs + d] += w[j] / sum * qkv[j][v0 + d];
      }
    }
    return linear(y, prefix + ".c_proj", c.n_embd);
  }
  Matrix mlp(const Matrix& x, const std::string& prefix) const {
    const int64_t H = c.hidden();
    const bool swiglu = c.mlp == MlpKind::swiglu;
    const Matrix h = linear(x, prefix + ".c_fc", swiglu ? 2 * H : H);
    Matrix act(x.size(), std::vector<double>(H));
    for (size_t t = 0; t < x.size(); ++t)
      for (int64_t j = 0; j < H; ++j) {
        const double v = h[t][j];
        act[t][j] = swiglu ? v / (1 + std::exp(-v)) * h[t][H + j]
                           : 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
      }
    return linear(act, prefix + ".c_proj", c.n_embd);
  }
  Matrix logits(const std::vector<int32_t>& ids) const {
    const int64_t C = c.n_embd;
    Matrix x(ids.size(), std::vector<double>(C));
    for (size_t t = 0; t < ids.size(); ++t)
      for (int64_t j = 0; j < C; ++j)
        x[t][j] = at("transformer.wte.weight", ids[t] * C + j) +
                  (has("transformer.wpe.weight") ? at("transformer.wpe.weight", int64_t(t) * C + j) : 0.0);
    auto add = [](Matrix& a, const Matrix& b) {
      for (size_t t = 0; t < a.size(); ++t)
        for (size_t j = 0; j < a[t].size(); ++j) a[t][j] += b[t][j];
    };
    for (int64_t l = 0; l < c.n_layer; ++l) {
      const std::string b = "transformer.h." + std::to_string(l);
      add(x, attention(norm(x, b + ".ln_1"), b + ".attn"));
      add(x, mlp(norm(x, b + ".ln_2"), b + ".mlp"));
    }
    const Matrix f = norm(x, "transformer.ln_f");
    Matrix out(ids.size(), std::vector<double>(c.vocab_size));
    const std::string head = c.tie_embeddings ? "transformer.wte.weight" : "lm_head.weight";
    for (size_t t = 0; t < ids.size(); ++t)
      for (int64_t v = 0; v < c.vocab_size; ++v)
        for (int64_t j = 0; j < C; ++j) out[t][v] += at(head, v * C + j) * f[t][j];
    return out;
  }
};

// GPT-2, each Llama piece on its own, and llama2.c's whole set.
std::vector<std::pair<std::string, GPTConfig>> variants() {
  const GPTConfig base{.vocab_size = 11, .block_size = 8, .n_layer = 2, .n_head = 4, .n_embd = 16};
  auto with = [&](auto change) {
    GPTConfig c = base;
    change(c);
    return c;
  };
  return {{"gpt-2", base},
          {"rmsnorm", with([](GPTConfig& c) { c.norm = NormKind::rmsnorm; })},
          {"rope", with([](GPTConfig& c) { c.position = PositionKind::rope; c.rope_theta = 500.0f; })},
          {"swiglu", with([](GPTConfig& c) { c.mlp = MlpKind::swiglu; c.ffn_hidden = 24; })},
          {"2 key/value heads", with([](GPTConfig& c) { c.n_kv_head = 2; })},
          {"multi-query", with([](GPTConfig& c) { c.n_kv_head = 1; })},
          {"no bias", with([](GPTConfig& c) { c.bias = false; })},
          {"untied", with([](GPTConfig& c) { c.tie_embeddings = false; })},
          {"llama", with([](GPTConfig& c) { c = llama_style(c); c.n_kv_head = 2; c.norm_eps = 1e-6f; })}};
}

// Weights far from GPT-2's small init, so that every nonlinearity matters.
void spread(GPT& model, uint64_t seed) {
  NoGradGuard no_grad;
  for (Tensor& p : model.parameters()) p.copy_from_(p + Tensor::randn(p.shape(), ++seed, 0.3f));
}

}  // namespace

TEST_CASE("llama pieces: the forward equals a plain-loop model in double", "[gpt][llama]") {
  for (const auto& [label, c] : variants()) {
    INFO(label);
    GPT model(c, 5);
    spread(model, 40);
    PlainModel plain{c, {}};
    for (const auto& [name, p] : model.named_parameters()) plain.p[name] = p.to_vector();
    const std::vector<int32_t> ids = random_ids(c.block_size, c.vocab_size, 6);
    NoGradGuard no_grad;
    const std::vector<float> got = model.forward(ids, 1, c.block_size).logits.to_vector();
    const Matrix want = plain.logits(ids);
    for (int64_t t = 0; t < c.block_size; ++t)
      for (int64_t v = 0; v < c.vocab_size; ++v)
        REQUIRE(got[t * c.vocab_size + v] == Approx(want[t][v]).margin(1e-4).epsilon(1e-4));
  }
}

TEST_CASE("gpt and llama pieces: whole-model gradients match finite differences", "[gpt][llama][grad]") {
  for (const auto& [label, c0] : variants()) {
    INFO(label);
    GPTConfig c = c0;
    c.n_layer = 2, c.n_embd = 8, c.n_head = 4, c.vocab_size = 7;
    if (c.ffn_hidden) c.ffn_hidden = 12;
    GPT model(c, 3);
    spread(model, 100);
    const int64_t B = 2, T = 5;
    const auto ids = random_ids(B * T, c.vocab_size, 1), targets = random_ids(B * T, c.vocab_size, 2);
    model.forward(ids, B, T, targets).loss.backward();
    std::vector<std::string> names;
    std::vector<Tensor> params;
    for (auto& [name, p] : model.named_parameters()) names.push_back(name), params.push_back(p);
    auto loss = [&] {
      NoGradGuard no_grad;
      return static_cast<double>(model.forward(ids, B, T, targets).loss.item());
    };
    tinygpt::testing::check_against_finite_differences(loss, params, names, {.eps = 1e-2, .atol = 1e-3, .rtol = 2e-2});
  }
}

TEST_CASE("llama pieces: the key/value cache gives the forward's logits", "[gpt][llama][sample]") {
  for (const auto& [label, c] : variants()) {
    INFO(label);
    GPT model(c, 7);
    spread(model, 70);
    const std::vector<int32_t> ids = random_ids(c.block_size, c.vocab_size, 8);
    NoGradGuard no_grad;
    const std::vector<float> full = model.forward(ids, 1, c.block_size).logits.to_vector();
    Generator gen(model);
    for (int64_t t = 0; t < c.block_size; ++t) {
      const std::vector<float>& step = gen.feed(ids[t]);
      for (int64_t v = 0; v < c.vocab_size; ++v) REQUIRE(step[v] == Approx(full[t * c.vocab_size + v]).margin(1e-4));
    }
  }
}

TEST_CASE("llama pieces: parameters, their names and the same bits on any thread count", "[gpt][llama]") {
  for (const auto& [label, c] : variants()) {
    INFO(label);
    GPT model(c, 9);
    std::vector<std::pair<std::string, Shape>> built;
    for (const auto& [name, p] : model.named_parameters()) built.emplace_back(name, p.shape());
    REQUIRE(built == parameter_shapes(c));
    std::vector<std::vector<float>> grads;
    for (int threads : {1, 2}) {
      set_num_threads(threads);
      GPT m(c, 9);
      m.zero_grad();
      const auto ids = random_ids(2 * 8, c.vocab_size, 3);
      m.forward(ids, 2, 8, random_ids(2 * 8, c.vocab_size, 4)).loss.backward();
      std::vector<float> all;
      for (const Tensor& p : m.parameters()) {
        const std::vector<float> g = p.grad().to_vector();
        all.insert(all.end(), g.begin(), g.end());
      }
      grads.push_back(all);
    }
    set_num_threads(0);
    REQUIRE(grads[0] == grads[1]);
  }
  // llama2.c's stories260K: 5 layers of 64, 8 heads, 4 key/value heads, hidden 172, no wpe.
  GPTConfig s = llama_style({.vocab_size = 512, .block_size = 512, .n_layer = 5, .n_head = 8, .n_embd = 64}, 4);
  s.n_kv_head = 4;
  REQUIRE(s.hidden() == 172);
  REQUIRE(llama_hidden(288) == 768);  // stories15M's width with multiple_of 32
  const auto shapes = parameter_shapes(s);
  REQUIRE(shapes[1] == std::make_pair(std::string("transformer.h.0.ln_1.weight"), Shape{64}));
  REQUIRE(shapes[2] == std::make_pair(std::string("transformer.h.0.attn.c_attn.weight"), Shape{(8 + 2 * 4) * 8, 64}));
  REQUIRE(shapes[5] == std::make_pair(std::string("transformer.h.0.mlp.c_fc.weight"), Shape{2 * 172, 64}));
  REQUIRE(GPT(s).parameter_count() == 512 * 64 + 5 * (64 + 128 * 64 + 64 * 64 + 64 + 344 * 64 + 64 * 172) + 64);
}

TEST_CASE("llama pieces: invalid settings are refused with the reason", "[gpt][llama][errors]") {
  auto refused = [](GPTConfig c, const char* reason) { REQUIRE_THROWS_WITH(c.validate(), Catch::Contains(reason)); };
  GPTConfig c{.n_head = 4, .n_embd = 16};
  refused([&] { auto d = c; d.n_kv_head = 3; return d; }(), "n_kv_head 3 does not divide n_head 4");
  refused([&] { auto d = c; d.n_embd = 12; d.n_head = 4; d.position = PositionKind::rope; d.n_embd = 20; return d; }(),
          "head size n_embd / n_head = 5 is odd");
  refused([&] { auto d = c; d.norm_eps = 0; return d; }(), "norm_eps 0 is not a positive number");
  refused([&] { auto d = c; d.rope_theta = NAN; return d; }(), "rope_theta nan");
  refused([&] { auto d = c; d.ffn_hidden = -2; return d; }(), "ffn_hidden must be at least 1");
  REQUIRE(parse_norm("rmsnorm") == NormKind::rmsnorm);
  REQUIRE_THROWS_WITH(parse_mlp("relu"), Catch::Contains("unknown mlp 'relu' (expected gelu or swiglu)"));
  REQUIRE(GPTConfig{}.gpt2_shaped());
  REQUIRE_FALSE(llama_style(GPTConfig{}).gpt2_shaped());
}
