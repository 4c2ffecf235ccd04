#include <catch2/catch.hpp>

#include "gradcheck.h"
#include "tinygpt/nn/gpt.h"

using namespace tinygpt;
using namespace tinygpt::nn;

TEST_CASE("modules: Linear is x Wᵀ + b with W [out, in]", "[nn]") {
  Linear lin(3, 2);
  REQUIRE(lin.weight.shape() == Shape{2, 3});
  lin.weight.copy_from_(Tensor::from_vector({2, 3}, {1, 2, 3, 4, 5, 6}));
  lin.bias.copy_from_(Tensor::from_vector({2}, {10, 20}));
  REQUIRE(lin.forward(Tensor::from_vector({1, 3}, {1, 1, 1})).to_vector() == std::vector<float>{16, 35});
  Linear no_bias(3, 2, false);
  REQUIRE(no_bias.named_parameters().size() == 1);
}

TEST_CASE("modules: hierarchical names, counts, zero_grad and train/eval", "[nn]") {
  GPTConfig c{.vocab_size = 7, .block_size = 4, .n_layer = 2, .n_head = 2, .n_embd = 4};
  GPT model(c);
  auto named = model.named_parameters();
  std::vector<std::string> names;
  for (auto& [n, t] : named) names.push_back(n);
  const std::vector<std::string> block = {"ln_1.weight",        "ln_1.bias",        "attn.c_attn.weight",
                                          "attn.c_attn.bias",   "attn.c_proj.weight", "attn.c_proj.bias",
                                          "ln_2.weight",        "ln_2.bias",        "mlp.c_fc.weight",
                                          "mlp.c_fc.bias",      "mlp.c_proj.weight", "mlp.c_proj.bias"};
  std::vector<std::string> expected = {"transformer.wte.weight", "transformer.wpe.weight"};
  for (int i = 0; i < 2; ++i)
    for (auto& b : block) expected.push_back("transformer.h." + std::to_string(i) + "." + b);
  expected.push_back("transformer.ln_f.weight");
  expected.push_back("transformer.ln_f.bias");
  REQUIRE(names == expected);  // nanoGPT's state_dict names, without lm_head (tied)
  REQUIRE(named[2].second.shape() == Shape{4});
  REQUIRE(named[4].second.shape() == Shape{12, 4});

  std::vector<int32_t> ids = {1, 2, 3, 4}, targets = {2, 3, 4, 5};
  model.forward(ids, 1, 4, targets).loss.backward();
  for (const Tensor& p : model.parameters()) REQUIRE(p.has_grad());
  model.zero_grad();
  for (const Tensor& p : model.parameters()) REQUIRE_FALSE(p.has_grad());
  model.eval();
  REQUIRE_FALSE(model.h[1]->mlp.c_fc.training());
  model.train();
  REQUIRE(model.h[1]->mlp.c_fc.training());
}

TEST_CASE("modules: parameter count has the closed form", "[nn]") {
  // V C + block C + L (12 C^2 + 13 C) + 2 C: per block ln_1 2C, c_attn 3C^2+3C, c_proj C^2+C,
  // ln_2 2C, c_fc 4C^2+4C, mlp.c_proj 4C^2+C; ln_f 2C; lm_head tied.
  for (GPTConfig c : {GPTConfig{65, 64, 4, 4, 128}, GPTConfig{3, 2, 1, 1, 2},
                      GPTConfig{100, 16, 3, 2, 6}}) {
    const int64_t C = c.n_embd;
    GPT model(c);
    REQUIRE(model.parameter_count() == c.vocab_size * C + c.block_size * C + c.n_layer * (12 * C * C + 13 * C) + 2 * C);
  }
  int64_t gpt2_small = 0;  // counted from the shapes: no 500 MB model built and initialised
  for (const auto& [name, shape] : parameter_shapes(GPTConfig{50257, 1024, 12, 12, 768})) gpt2_small += numel(shape);
  REQUIRE(gpt2_small == 124439808);  // GPT-2 small, as published
}

TEST_CASE("modules: parameter_shapes lists a GPT's parameters without building one", "[nn]") {
  for (GPTConfig c : {GPTConfig{65, 64, 4, 4, 128}, GPTConfig{3, 2, 1, 1, 2}, GPTConfig{100, 16, 3, 2, 6}}) {
    GPT model(c);
    std::vector<std::pair<std::string, Shape>> built;
    for (const auto& [name, p] : model.named_parameters()) built.emplace_back(name, p.shape());
    REQUIRE(parameter_shapes(c) == built);
  }
  // The plan allocates no parameter: the largest model a config allows (4 TiB of wte alone) is listed.
  GPTConfig largest{kMaxVocab, kMaxBlock, kMaxLayers, 512, kMaxEmbd};
  largest.n_kv_head = 8;
  const auto shapes = parameter_shapes(llama_style(largest));
  REQUIRE(shapes.front() == std::pair<std::string, Shape>{"transformer.wte.weight", {kMaxVocab, kMaxEmbd}});
  REQUIRE(shapes.size() == 1 + kMaxLayers * 6 + 1);  // wte, 6 per block (no biases), ln_f; lm_head tied
}

TEST_CASE("modules: a model plan (Init::shapes) has shapes and refuses to be read", "[nn][errors]") {
  const Linear plan(4, 3, true, std::nullopt, Init::shapes);
  REQUIRE(plan.weight.shape() == Shape{3, 4});
  REQUIRE(plan.bias.shape() == Shape{3});
  REQUIRE_THROWS_WITH(plan.weight.data(), Catch::Contains("a tensor of shape [3, 4] has no values") &&
                                              Catch::Contains("model plan"));
  REQUIRE_THROWS_WITH(plan.forward(Tensor::ones({2, 4})), Catch::Contains("has no values"));
  REQUIRE_THROWS_WITH(plan.bias.fill_(0.0f), Catch::Contains("has no values"));
}

TEST_CASE("modules: invalid configs are rejected clearly", "[nn][errors]") {
  REQUIRE_THROWS_WITH(GPT(GPTConfig{65, 64, 4, 3, 128}), Catch::Contains("n_embd 128 is not divisible by n_head 3"));
  REQUIRE_THROWS_WITH(GPT(GPTConfig{0, 64, 4, 4, 128}), Catch::Contains("vocab_size must be at least 1 (got 0)"));
  REQUIRE_THROWS_WITH(GPT(GPTConfig{65, 64, 0, 4, 128}), Catch::Contains("n_layer must be at least 1 (got 0)"));
  REQUIRE_THROWS_WITH(GPT(GPTConfig{65, 64, 4, 4, 128, 1.5f}), Catch::Contains("dropout 1.5"));
  REQUIRE_THROWS_WITH(GPT(GPTConfig{65, 64, 300000, 4, 128}), Catch::Contains("n_layer must be at most 1024 (got 300000)"));
  REQUIRE_THROWS_WITH(GPT(GPTConfig{int64_t{1} << 40, 64, 4, 4, 128}), Catch::Contains("vocab_size must be at most"));
}
