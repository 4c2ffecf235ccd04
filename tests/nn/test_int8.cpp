// int8 weights (inference.h, GPT::use_int8_weights): the quantization's bounds, the int8
// matrix-vector product against the float one over the same weights, bit for bit and for any
// thread count, and a model's key/value-cache decoding against its own forward pass.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "tinygpt/autograd/graph.h"
#include "tinygpt/autograd/inference.h"
#include "tinygpt/autograd/threads.h"
#include "tinygpt/nn/gpt.h"
#include "tinygpt/nn/sampling.h"
#include "threads.h"

using namespace tinygpt;

namespace {
std::vector<float> values(int64_t n, uint64_t seed, float scale = 1.0f) {
  return Tensor::randn({n}, seed, scale).to_vector();
}
}  // namespace

TEST_CASE("int8: each weight within half a step of its group's scale, the scale the group's largest / 127", "[int8]") {
  const int64_t out = 5, in = 200, group = 64;  // 4 groups a row, the last of 8
  std::vector<float> w = values(out * in, 3);
  for (int64_t j = 64; j < 128; ++j) w[2 * in + j] = 0;  // a group of zeros
  w[1 * in + 199] = 40;                                   // a large value alone in a short group
  const Int8Matrix m = quantize_int8(w.data(), out, in, group);
  REQUIRE(m.groups_per_row() == 4);
  REQUIRE(m.scales.size() == 20);
  std::vector<float> back(w.size());
  dequantize_int8(m, back.data());
  for (int64_t o = 0; o < out; ++o)
    for (int64_t g = 0; g < 4; ++g) {
      float largest = 0;
      for (int64_t j = g * group; j < std::min(in, (g + 1) * group); ++j) largest = std::max(largest, std::fabs(w[o * in + j]));
      const float scale = m.scales[o * 4 + g];
      REQUIRE(scale == largest / 127.0f);
      for (int64_t j = g * group; j < std::min(in, (g + 1) * group); ++j) {
        REQUIRE(std::abs(m.q[o * in + j]) <= 127);
        REQUIRE(std::fabs(back[o * in + j] - w[o * in + j]) <= 0.5f * scale * 1.0001f);
        REQUIRE(back[o * in + j] == float(m.q[o * in + j]) * scale);
      }
    }
  REQUIRE(m.scales[2 * 4 + 1] == 0);
  REQUIRE(m.q[1 * in + 199] == 127);
  REQUIRE_THROWS_WITH(quantize_int8(w.data(), out, in, 48), Catch::Contains("group size 48"));
  REQUIRE_THROWS_WITH(quantize_int8(w.data(), out, in, 16), Catch::Contains("power of two from 32"));
  w[7] = NAN;
  REQUIRE_THROWS_WITH(quantize_int8(w.data(), out, in, group), Catch::Contains("not finite"));
}

TEST_CASE("int8: the product equals the float product over the dequantized weights, bit for bit, any threads",
          "[int8]") {
  for (int64_t group : {32, 64, 256})
    for (int64_t in : {1, 7, 16, 31, 32, 33, 47, 64, 100, 129, 768}) {
      const int64_t out = 11;  // two blocks of four rows and three alone
      INFO("group " << group << ", in " << in);
      const std::vector<float> w = values(out * in, 5 + in), x = values(in, 7), b = values(out, 9);
      const Int8Matrix m = quantize_int8(w.data(), out, in, group);
      std::vector<float> deq(w.size()), expected(out), got(out);
      dequantize_int8(m, deq.data());
      matvec(deq.data(), b.data(), x.data(), expected.data(), out, in);
      for (int threads : {1, 2, 3})
        tinygpt::testing::with_threads(threads, [&] {
          matvec_int8(m, b.data(), x.data(), got.data());
          REQUIRE(got == expected);
        });
    }
}

TEST_CASE("int8: a model's decoding equals its own forward pass, and stays near the float model", "[int8]") {
  for (const bool tied : {true, false}) {
    INFO("tied " << tied);
    nn::GPTConfig c{.vocab_size = 37, .block_size = 8, .n_layer = 2, .n_head = 2, .n_embd = 64};
    c.tie_embeddings = tied;
    nn::GPT fp32(c, 5), int8(c, 5);
    int8.use_int8_weights(32);
    REQUIRE(int8.weight_format() == nn::WeightFormat::int8);
    REQUIRE((tied ? int8.wte.weight : int8.lm_head->weight).to_vector() != fp32.output_weight().to_vector());
    NoGradGuard no_grad;
    const std::vector<int32_t> ids = {3, 36, 0, 17, 8, 2};
    const std::vector<float> full = int8.forward(ids, 1, 6).logits.to_vector(), reference = fp32.forward(ids, 1, 6).logits.to_vector();
    nn::Generator gen(int8);
    double largest = 0, off = 0;
    for (int64_t t = 0; t < 6; ++t) {
      const std::vector<float>& step = gen.feed(ids[t]);
      for (int64_t v = 0; v < 37; ++v) {
        REQUIRE(step[v] == Approx(full[t * 37 + v]).margin(1e-5));
        largest = std::max(largest, std::fabs(double(reference[t * 37 + v])));
        off = std::max(off, std::fabs(double(full[t * 37 + v]) - reference[t * 37 + v]));
      }
    }
    REQUIRE(off > 0);
    REQUIRE(off < 0.02 * largest);  // 8 bits: within a few percent of the float logits
  }
}
