#include <catch2/catch.hpp>

#include <cmath>

#include "gradcheck.h"
#include "tinygpt/autograd/threads.h"

using namespace tinygpt;
using tinygpt::testing::check_gradients;
using tinygpt::testing::require_close;

namespace {
// Attention spelled out with the unfused ops: the independent yardstick for the fused kernel.
Tensor unfused_attention(const Tensor& q, const Tensor& k, const Tensor& v) {
  const int64_t T = q.size(2), hs = q.size(3);
  std::vector<float> mask(T * T, 0.0f);
  for (int64_t i = 0; i < T; ++i)
    for (int64_t j = i + 1; j < T; ++j) mask[i * T + j] = -1e9f;
  Tensor scores = matmul(q, k.transpose(2, 3)) * (1.0f / std::sqrt(float(hs))) + Tensor::from_vector({T, T}, mask);
  return matmul(softmax(scores), v);
}
}  // namespace

TEST_CASE("attention: matches the unfused composition", "[attention]") {
  for (int64_t T : {1, 2, 7}) {
    Tensor q = Tensor::uniform({2, 3, T, 4}, 1, -1, 1), k = Tensor::uniform({2, 3, T, 4}, 2, -1, 1),
           v = Tensor::uniform({2, 3, T, 4}, 3, -1, 1);
    require_close(causal_attention(q, k, v).y.to_vector(), unfused_attention(q, k, v).to_vector(), 1e-5);
  }
}

TEST_CASE("attention: weights are causal and rows sum to one", "[attention]") {
  const int64_t T = 6;
  Tensor q = Tensor::uniform({1, 2, T, 8}, 4, -2, 2);
  AttentionResult r = causal_attention(q, q, q);
  REQUIRE(r.weights.shape() == Shape{1, 2, T, T});
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t i = 0; i < T; ++i) {
      double s = 0;
      for (int64_t j = 0; j < T; ++j) {
        if (j > i) REQUIRE(r.weights.at({0, h, i, j}) == 0.0f);
        s += r.weights.at({0, h, i, j});
      }
      REQUIRE(s == Approx(1.0).epsilon(1e-6));
    }
  // The first query sees only itself; with T = 1 the output is v.
  REQUIRE(r.weights.at({0, 0, 0, 0}) == 1.0f);
  Tensor v1 = Tensor::uniform({1, 1, 1, 3}, 5, -1, 1);
  REQUIRE(causal_attention(v1, v1, v1).y.to_vector() == v1.to_vector());
}

TEST_CASE("attention: gradients for T = 1 and T > 1, from strided q, k, v", "[attention][grad]") {
  auto attn = [](const std::vector<Tensor>& in) { return causal_attention(in[0], in[1], in[2]).y; };
  for (int64_t T : {1, 5}) {
    INFO("T = " << T);
    check_gradients(attn, {Tensor::uniform({2, 2, T, 3}, 1, -1, 1), Tensor::uniform({2, 2, T, 3}, 2, -1, 1),
                           Tensor::uniform({2, 2, T, 3}, 3, -1, 1)});
  }
  // The GPT path: q, k, v are slices of one qkv [B, T, 3C] viewed as heads, never copied.
  const int64_t B = 2, T = 4, nh = 2, hs = 3, C = nh * hs;
  check_gradients(
      [&](const std::vector<Tensor>& in) {
        auto parts = split(in[0], C, 2);
        auto heads = [&](const Tensor& t) { return t.view({B, T, nh, hs}).transpose(1, 2); };
        return causal_attention(heads(parts[0]), heads(parts[1]), heads(parts[2])).y.transpose(1, 2).reshape({B, T, C});
      },
      {Tensor::uniform({B, T, 3 * C}, 4, -1, 1)});
}

TEST_CASE("attention: gradients where q, k and v are one tensor, and where qkv feeds other ops too",
          "[attention][grad]") {
  // The backward with kept weights writes a fresh gradient buffer instead of adding to it: the other
  // uses of the same tensor must still add their shares, whichever runs first.
  const int64_t B = 2, nh = 2, hs = 3, C = nh * hs, T = 5;
  for (AttentionMemory memory : {AttentionMemory::weights, AttentionMemory::tiled}) {
    INFO("tiled " << (memory == AttentionMemory::tiled));
    check_gradients([&](const std::vector<Tensor>& in) { return causal_attention(in[0], in[0], in[0], memory).y; },
                    {Tensor::uniform({B, nh, T, hs}, 8, -1, 1)});
    auto attend = [&](const Tensor& qkv) { return causal_self_attention(qkv, nh, memory).y; };
    check_gradients([&](const std::vector<Tensor>& in) { return attend(in[0]) + split(in[0], C, 2)[1]; },
                    {Tensor::uniform({B, T, 3 * C}, 9, -1, 1)});
    check_gradients([&](const std::vector<Tensor>& in) { return split(in[0], C, 2)[2] * attend(in[0]); },
                    {Tensor::uniform({B, T, 3 * C}, 10, -1, 1)});
  }
}

TEST_CASE("attention from qkv: gradients, and the same bits as the split-and-view path", "[attention][grad]") {
  const int64_t B = 2, nh = 2, hs = 3, C = nh * hs;
  for (int64_t T : {1, 4, 37}) {
    INFO("T = " << T);
    check_gradients([&](const std::vector<Tensor>& in) { return causal_self_attention(in[0], nh).y; },
                    {Tensor::uniform({B, T, 3 * C}, 5, -1, 1)});
  }
  const int64_t T = 40;
  for (AttentionMemory memory : {AttentionMemory::weights, AttentionMemory::tiled}) {
    Tensor fused_in = Tensor::uniform({B, T, 3 * C}, 6, -2, 2).set_requires_grad(true);
    Tensor split_in = Tensor::uniform({B, T, 3 * C}, 6, -2, 2).set_requires_grad(true);
    const Tensor seed = Tensor::uniform({B, T, C}, 7, -1, 1);
    AttentionResult fused = causal_self_attention(fused_in, nh, memory);
    auto parts = split(split_in, C, 2);
    auto heads = [&](const Tensor& t) { return t.view({B, T, nh, hs}).transpose(1, 2); };
    AttentionResult apart = causal_attention(heads(parts[0]), heads(parts[1]), heads(parts[2]), memory);
    const Tensor merged = apart.y.transpose(1, 2).reshape({B, T, C});
    REQUIRE(fused.y.shape() == Shape{B, T, C});
    REQUIRE(fused.y.to_vector() == merged.to_vector());
    REQUIRE(fused.weights.defined() == (memory == AttentionMemory::weights));
    if (fused.weights.defined()) {
      REQUIRE(fused.weights.to_vector() == apart.weights.to_vector());
      const std::vector<float> w = fused.weights.to_vector();  // the future is 0, past the row blocks too
      for (int64_t head = 0; head < B * nh; ++head)
        for (int64_t i = 0; i < T; ++i)
          for (int64_t j = i + 1; j < T; ++j) REQUIRE(w[(head * T + i) * T + j] == 0.0f);
    }
    fused.y.backward(seed);
    merged.backward(seed);
    REQUIRE(fused_in.grad().to_vector() == split_in.grad().to_vector());  // written in place, same sums
  }
  REQUIRE_THROWS_WITH(causal_self_attention(Tensor::ones({1, 2, 7}), 1), Catch::Contains("causal_self_attention") &&
                                                                               Catch::Contains("[1, 2, 7]"));
}

TEST_CASE("grouped-query attention: key/value heads shared by groups of query heads", "[attention][gqa][grad]") {
  const int64_t B = 2, nh = 4, hs = 3, T = 9;
  for (int64_t g : {1, 2}) {
    INFO("key/value heads: " << g);
    // Against ordinary attention on key/value heads repeated for each query head of their group.
    const Tensor q = Tensor::uniform({B, nh, T, hs}, 1, -1, 1), k = Tensor::uniform({B, g, T, hs}, 2, -1, 1),
                 v = Tensor::uniform({B, g, T, hs}, 3, -1, 1);
    auto repeated = [&](const Tensor& t) {
      std::vector<Tensor> heads;
      for (int64_t h = 0; h < nh; ++h) heads.push_back(t.slice(1, h / (nh / g), h / (nh / g) + 1));
      return concat(heads, 1);
    };
    require_close(causal_attention(q, k, v).y.to_vector(), unfused_attention(q, repeated(k), repeated(v)).to_vector(),
                  1e-5);
    for (AttentionMemory memory : {AttentionMemory::weights, AttentionMemory::tiled})
      for (int64_t t : {int64_t{1}, int64_t{5}, int64_t{37}}) {
        INFO("T = " << t);
        check_gradients([&](const std::vector<Tensor>& in) { return causal_self_attention(in[0], nh, g, memory).y; },
                        {Tensor::uniform({1, t, (nh + 2 * g) * hs}, 4, -1, 1)});
      }
    // The fused layout reads the same heads as the separate tensors, to the bit, and the shared
    // heads' gradients do not depend on the number of threads.
    const Tensor qkv = Tensor::uniform({B, T, (nh + 2 * g) * hs}, 5, -2, 2);
    auto parts = [&](const Tensor& t, int64_t at, int64_t heads) {
      return t.slice(2, at * hs, (at + heads) * hs).contiguous().view({B, T, heads, hs}).transpose(1, 2);
    };
    const std::vector<float> fused = causal_self_attention(qkv, nh, g).y.to_vector();
    const Tensor apart = causal_attention(parts(qkv, 0, nh), parts(qkv, nh, g), parts(qkv, nh + g, g)).y;
    REQUIRE(fused == apart.transpose(1, 2).reshape({B, T, nh * hs}).to_vector());
    std::vector<std::vector<float>> grads;
    for (int threads : {1, 2}) {
      set_num_threads(threads);
      Tensor in = Tensor::uniform({B, T, (nh + 2 * g) * hs}, 5, -2, 2).set_requires_grad(true);
      causal_self_attention(in, nh, g).y.backward(Tensor::uniform({B, T, nh * hs}, 6, -1, 1));
      grads.push_back(in.grad().to_vector());
    }
    set_num_threads(0);
    REQUIRE(grads[0] == grads[1]);
  }
  REQUIRE_THROWS_WITH(causal_self_attention(Tensor::ones({1, 2, 21}), 4, 3),
                      Catch::Contains("n_kv_head dividing n_head") && Catch::Contains("[1, 2, 21]"));
  REQUIRE_THROWS_WITH(causal_attention(Tensor::ones({1, 4, 3, 2}), Tensor::ones({1, 3, 3, 2}), Tensor::ones({1, 3, 3, 2})),
                      Catch::Contains("g dividing nh"));
}

TEST_CASE("attention, tiled: gradients for T = 1, 5 and 37 (several partial row blocks)", "[attention][grad]") {
  auto attn = [](const std::vector<Tensor>& in) {
    return causal_attention(in[0], in[1], in[2], AttentionMemory::tiled).y;
  };
  for (int64_t T : {1, 5, 37}) {
    INFO("T = " << T);
    check_gradients(attn, {Tensor::uniform({1, 2, T, 3}, 1, -1, 1), Tensor::uniform({1, 2, T, 3}, 2, -1, 1),
                           Tensor::uniform({1, 2, T, 3}, 3, -1, 1)});
  }
}

TEST_CASE("attention, tiled: the same output bits and gradients as with kept weights, no weights kept",
          "[attention]") {
  const int64_t B = 2, nh = 3, T = 70, hs = 8;
  auto run = [&](AttentionMemory memory) {
    Tensor q = Tensor::uniform({B, nh, T, hs}, 1, -2, 2).set_requires_grad(true);
    Tensor k = Tensor::uniform({B, nh, T, hs}, 2, -2, 2).set_requires_grad(true);
    Tensor v = Tensor::uniform({B, nh, T, hs}, 3, -2, 2).set_requires_grad(true);
    AttentionResult r = causal_attention(q, k, v, memory);
    r.y.backward(Tensor::uniform(r.y.shape(), 4, -1, 1));
    return std::make_tuple(r, q.grad().to_vector(), k.grad().to_vector(), v.grad().to_vector());
  };
  auto [kept, dq_kept, dk_kept, dv_kept] = run(AttentionMemory::weights);
  auto [tiled, dq_tiled, dk_tiled, dv_tiled] = run(AttentionMemory::tiled);
  REQUIRE(kept.weights.defined());
  REQUIRE_FALSE(tiled.weights.defined());
  REQUIRE(tiled.y.to_vector() == kept.y.to_vector());  // the same strips, computed by the same code
  REQUIRE(dq_tiled == dq_kept);                         // dQ sums the same way; dK, dV in another order
  require_close(dk_tiled, dk_kept, 1e-5);
  require_close(dv_tiled, dv_kept, 1e-5);
}

TEST_CASE("attention: long contexts go tiled by themselves", "[attention]") {
  Tensor q = Tensor::uniform({1, 1, kTiledAttentionFrom - 1, 4}, 1, -1, 1);
  REQUIRE(causal_attention(q, q, q).weights.defined());
  Tensor longer = Tensor::uniform({1, 1, kTiledAttentionFrom, 4}, 1, -1, 1);
  REQUIRE_FALSE(causal_attention(longer, longer, longer).weights.defined());
}

TEST_CASE("attention: merging heads back is a free view", "[attention]") {
  Tensor q = Tensor::uniform({2, 3, 4, 5}, 1, -1, 1);
  Tensor y = causal_attention(q, q, q).y.transpose(1, 2);  // [B, T, nh, hs]
  REQUIRE(y.is_contiguous());
}

TEST_CASE("attention: mismatched shapes raise errors", "[attention][errors]") {
  REQUIRE_THROWS_WITH(causal_attention(Tensor::ones({1, 2, 3, 4}), Tensor::ones({1, 2, 3, 5}), Tensor::ones({1, 2, 3, 4})),
                      Catch::Contains("causal_attention") && Catch::Contains("[1, 2, 3, 5]"));
  REQUIRE_THROWS_WITH(causal_attention(Tensor::ones({2, 3, 4}), Tensor::ones({2, 3, 4}), Tensor::ones({2, 3, 4})),
                      Catch::Contains("[B, nh, T, hs]"));
}
