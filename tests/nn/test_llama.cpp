// The GPT model with the Llama family's pieces: a plain-loop model in double (an independent
// implementation of docs/architectures.md's formulas) against the forward, finite differences on every
// parameter, the key/value-cache decoder against the forward, and the parameter list.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>

#include "gradcheck.h"
#include "reference/plain_model.h"
#include "random_ids.h"
#include "tinygpt/autograd/threads.h"
#include "tinygpt/autograd/random.h"
#include "tinygpt/nn/gpt.h"
#include "tinygpt/nn/sampling.h"
#include "threads.h"

using namespace tinygpt;
using namespace tinygpt::nn;
using tinygpt::testing::random_ids;
using tinygpt::testing::Matrix;
using tinygpt::testing::PlainModel;

namespace {

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
    for (int threads : {1, 2}) tinygpt::testing::with_threads(threads, [&] {
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
    });
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
  refused([&] { auto d = c; d.norm_eps = 0; return d; }(), "norm_eps 0 is not in (0, 1]");
  refused([&] { auto d = c; d.norm_eps = 2; return d; }(), "norm_eps 2 is not in (0, 1]");
  refused([&] { auto d = c; d.rope_theta = 1e13f; return d; }(), "rope_theta 1e+13 is not in (0, 1e+12]");
  refused([&] { auto d = c; d.rope_theta = NAN; return d; }(), "rope_theta nan");
  refused([&] { auto d = c; d.ffn_hidden = -2; return d; }(), "ffn_hidden must be at least 1");
  REQUIRE(parse_norm("rmsnorm") == NormKind::rmsnorm);
  REQUIRE_THROWS_WITH(parse_mlp("relu"), Catch::Contains("unknown mlp 'relu' (expected gelu or swiglu)"));
  REQUIRE(GPTConfig{}.gpt2_shaped());
  REQUIRE_FALSE(llama_style(GPTConfig{}).gpt2_shaped());
}

TEST_CASE("llama pieces: a tapped forward shows what it computes, in order, and the same logits",
          "[gpt][llama][tap]") {
  for (const auto& [label, c] : variants()) {
    INFO(label);
    GPT model(c, 5);
    spread(model, 50);
    const std::vector<int32_t> ids = random_ids(c.block_size, c.vocab_size, 6);
    NoGradGuard no_grad;
    const std::vector<float> plain = model.forward(ids, 1, c.block_size).logits.to_vector();
    std::vector<std::string> seen;
    Tensor logits, residual, added, last;
    const std::vector<float> tapped =
        model.forward(ids, 1, c.block_size, {}, [&](int64_t l, Tap tap, const Tensor& v) {
          seen.push_back(std::to_string(l) + name(tap));
          if (tap == Tap::embedding || tap == Tap::residual_attn) residual = v;
          if (tap == Tap::attn || tap == Tap::mlp) added = v;
          if (tap == Tap::residual_attn || tap == Tap::residual_mlp)  // each residual is what it adds
            REQUIRE(v.to_vector() == (last + added).to_vector());
          if (tap == Tap::embedding || tap == Tap::residual_attn || tap == Tap::residual_mlp) last = v;
          if (tap == Tap::logits) logits = v;
        }).logits.to_vector();
    REQUIRE(tapped == plain);
    REQUIRE(logits.to_vector() == plain);
    REQUIRE(seen.front() == "-1tok_emb");
    REQUIRE(seen.back() == "-1logits");
    // Every block shows its 12 intermediates.
    REQUIRE(seen.size() == static_cast<size_t>(2 + (c.position == PositionKind::learned) + 12 * c.n_layer + 2));
  }
}

TEST_CASE("llama pieces: past block_size a RoPE model's cache slides on, attending over the last block",
          "[gpt][llama][sample]") {
  for (auto [label, c] : variants()) {
    if (c.position != PositionKind::rope) continue;
    INFO(label);
    c.n_layer = 1;  // its keys are its tokens' own: no earlier layer mixes in the dropped token
    GPT model(c, 7);
    spread(model, 71);
    const std::vector<int32_t> ids = random_ids(c.block_size + 1, c.vocab_size, 9);
    NoGradGuard no_grad;
    Generator gen(model);
    REQUIRE(gen.slides());
    std::vector<float> last;
    for (const int32_t id : ids) last = gen.feed(id);
    // So the last logits are the forward pass's over the last block_size tokens (RoPE: relative).
    const std::vector<float> full =
        model.forward(std::span(ids).subspan(1), 1, c.block_size).logits.to_vector();
    for (int64_t v = 0; v < c.vocab_size; ++v)
      REQUIRE(last[v] == Approx(full[(c.block_size - 1) * c.vocab_size + v]).margin(1e-4));
  }
}
