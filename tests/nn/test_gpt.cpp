#include <catch2/catch.hpp>

#include <cmath>

#include "tinygpt/autograd/random.h"
#include "gradcheck.h"
#include "random_ids.h"
#include "tinygpt/nn/gpt.h"

using namespace tinygpt;
using namespace tinygpt::nn;

using tinygpt::testing::random_ids;

// Whole-model gradients against finite differences: tests/nn/test_llama.cpp, for GPT-2 and each Llama piece.

TEST_CASE("gpt: logits at position t do not depend on later tokens (bitwise)", "[gpt]") {
  GPTConfig c{.vocab_size = 13, .block_size = 16, .n_layer = 2, .n_head = 4, .n_embd = 16};
  GPT model(c);
  NoGradGuard no_grad;
  const int64_t T = 16;
  auto ids = random_ids(T, c.vocab_size, 5);
  const std::vector<float> before = model.forward(ids, 1, T).logits.to_vector();
  for (int64_t t = 0; t + 1 < T; ++t) {
    auto changed = ids;
    for (int64_t j = t + 1; j < T; ++j) changed[j] = (changed[j] + 1 + j) % c.vocab_size;
    const std::vector<float> after = model.forward(changed, 1, T).logits.to_vector();
    const int64_t upto = (t + 1) * c.vocab_size;
    REQUIRE(std::equal(before.begin(), before.begin() + upto, after.begin()));
    REQUIRE_FALSE(std::equal(before.begin() + upto, before.end(), after.begin() + upto));
  }
}

TEST_CASE("gpt: attention weights are readable per layer and head, causal and normalized", "[gpt]") {
  GPTConfig c{.vocab_size = 13, .block_size = 8, .n_layer = 2, .n_head = 2, .n_embd = 8};
  GPT model(c);
  const int64_t B = 3, T = 7;
  model.forward(random_ids(B * T, c.vocab_size, 6), B, T);
  for (int64_t layer = 0; layer < c.n_layer; ++layer) {
    const Tensor& w = model.attention_weights(layer);
    REQUIRE(w.shape() == Shape{B, c.n_head, T, T});
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < c.n_head; ++h)
        for (int64_t i = 0; i < T; ++i) {
          double s = 0;
          for (int64_t j = 0; j < T; ++j) {
            if (j > i) REQUIRE(w.at({b, h, i, j}) == 0.0f);
            s += w.at({b, h, i, j});
          }
          REQUIRE(s == Approx(1.0).epsilon(1e-6));
        }
  }
  REQUIRE_THROWS_WITH(model.attention_weights(2), Catch::Contains("layer 2 out of range for n_layer 2"));
}

TEST_CASE("gpt: a fresh model predicts uniformly, loss near ln(vocab_size)", "[gpt]") {
  for (int64_t vocab : {65, 500}) {
    GPTConfig c{.vocab_size = vocab, .block_size = 32, .n_layer = 2, .n_head = 2, .n_embd = 32};
    GPT model(c, 7);
    NoGradGuard no_grad;
    const float loss = model.forward(random_ids(4 * 32, vocab, 1), 4, 32, random_ids(4 * 32, vocab, 2)).loss.item();
    REQUIRE(std::abs(loss - std::log(static_cast<double>(vocab))) < 0.1);
  }
}

TEST_CASE("gpt: GPT-2 initialization statistics", "[gpt]") {
  GPTConfig c{.vocab_size = 200, .block_size = 64, .n_layer = 8, .n_head = 4, .n_embd = 128};
  GPT model(c, 11);
  auto std_of = [](const Tensor& t) {
    double s = 0, s2 = 0;
    for (float v : t.to_vector()) s += v, s2 += double(v) * v;
    const double m = s / t.numel();
    return std::sqrt(s2 / t.numel() - m * m);
  };
  REQUIRE(std_of(model.wte.weight) == Approx(0.02).epsilon(0.05));
  REQUIRE(std_of(model.h[3]->mlp.c_fc.weight) == Approx(0.02).epsilon(0.05));
  REQUIRE(std_of(model.h[3]->attn.c_proj.weight) == Approx(0.02 / 4.0).epsilon(0.05));  // 0.02 / sqrt(2 * 8)
  REQUIRE(std_of(model.h[3]->mlp.c_proj.weight) == Approx(0.02 / 4.0).epsilon(0.05));
  REQUIRE(model.h[0]->ln_1.weight.to_vector() == std::vector<float>(128, 1.0f));
  REQUIRE(model.h[0]->attn.c_attn.bias.to_vector() == std::vector<float>(384, 0.0f));
}

TEST_CASE("gpt: long contexts train with tiled attention, weights kept only on request", "[gpt]") {
  const int64_t T = kTiledAttentionFrom + 8;
  GPTConfig c{.vocab_size = 11, .block_size = T, .n_layer = 1, .n_head = 2, .n_embd = 8};
  GPT tiled(c, 5), kept(c, 5);
  kept.set_attention_memory(AttentionMemory::weights);
  const auto ids = random_ids(T, 11, 1), targets = random_ids(T, 11, 2);
  Tensor loss_tiled = tiled.forward(ids, 1, T, targets).loss, loss_kept = kept.forward(ids, 1, T, targets).loss;
  REQUIRE(loss_tiled.item() == loss_kept.item());  // the forward is the same arithmetic
  REQUIRE_THROWS_WITH(tiled.attention_weights(0), Catch::Contains("set_attention_memory"));
  REQUIRE(kept.attention_weights(0).shape() == Shape{1, 2, T, T});
  loss_tiled.backward();
  loss_kept.backward();
  auto pt = tiled.named_parameters(), pk = kept.named_parameters();
  for (size_t i = 0; i < pt.size(); ++i) {
    INFO(pt[i].first);
    tinygpt::testing::require_close(pt[i].second.grad().to_vector(), pk[i].second.grad().to_vector(), 1e-5);
  }
}

TEST_CASE("gpt: the same seed gives the same parameters and the same loss", "[gpt]") {
  GPTConfig c{.vocab_size = 17, .block_size = 8, .n_layer = 2, .n_head = 2, .n_embd = 8};
  GPT a(c, 42), b(c, 42), other(c, 43);
  auto pa = a.parameters(), pb = b.parameters(), po = other.parameters();
  for (size_t i = 0; i < pa.size(); ++i) REQUIRE(pa[i].to_vector() == pb[i].to_vector());
  REQUIRE(pa[0].to_vector() != po[0].to_vector());
  const auto ids = random_ids(16, 17, 1), targets = random_ids(16, 17, 2);
  REQUIRE(a.forward(ids, 2, 8, targets).loss.item() == b.forward(ids, 2, 8, targets).loss.item());
}

TEST_CASE("gpt: dropout is seeded, active only in training, and recorded by a counter", "[gpt]") {
  GPTConfig c{.vocab_size = 17, .block_size = 8, .n_layer = 1, .n_head = 2, .n_embd = 8, .dropout = 0.2f};
  GPT a(c, 1), b(c, 1);
  const auto ids = random_ids(8, 17, 1), targets = random_ids(8, 17, 2);
  const float first = a.forward(ids, 1, 8, targets).loss.item();
  REQUIRE(a.dropout_counter() > 0);
  REQUIRE(a.forward(ids, 1, 8, targets).loss.item() != first);  // a new mask each step
  b.set_dropout_counter(a.dropout_counter());                    // resume at the same place
  REQUIRE(a.forward(ids, 1, 8, targets).loss.item() == b.forward(ids, 1, 8, targets).loss.item());
  a.eval();
  b.eval();
  REQUIRE(a.forward(ids, 1, 8, targets).loss.item() == b.forward(ids, 1, 8, targets).loss.item());
}

TEST_CASE("gpt: bad input raises clear errors", "[gpt][errors]") {
  GPTConfig c{.vocab_size = 10, .block_size = 4, .n_layer = 1, .n_head = 1, .n_embd = 4};
  GPT model(c);
  REQUIRE_THROWS_WITH(model.forward(random_ids(5, 10, 1), 1, 5), Catch::Contains("sequence length 5 exceeds block_size 4"));
  std::vector<int32_t> bad = {1, 2, 10, 3};
  REQUIRE_THROWS_WITH(model.forward(bad, 1, 4), Catch::Contains("token id 10 at position 2 is out of range for vocab_size 10"));
  REQUIRE_THROWS_WITH(model.forward(bad, 2, 4), Catch::Contains("4 token ids for a batch of B=2 rows of T=4"));
  std::vector<int32_t> ids = {1, 2, 3, 4}, short_targets = {1, 2};
  REQUIRE_THROWS_WITH(model.forward(ids, 1, 4, short_targets), Catch::Contains("2 targets for 4 positions"));
}
