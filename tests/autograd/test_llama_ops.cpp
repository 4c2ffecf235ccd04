// The Llama family's ops (RMSNorm, RoPE, SwiGLU, SiLU) against plain loops in double, their
// gradients against finite differences, and their row functions against the ops bit for bit.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "gradcheck.h"
#include "tinygpt/autograd/inference.h"

using namespace tinygpt;
using tinygpt::testing::check_gradients;
using tinygpt::testing::require_close;

namespace {

std::vector<float> rms_norm_double(const Tensor& x, const Tensor& w, double eps) {
  const int64_t C = x.shape().back(), rows = x.numel() / C;
  const std::vector<float> xv = x.to_vector(), wv = w.to_vector();
  std::vector<float> y(xv.size());
  for (int64_t r = 0; r < rows; ++r) {
    double ss = 0;
    for (int64_t j = 0; j < C; ++j) ss += double(xv[r * C + j]) * xv[r * C + j];
    const double s = 1.0 / std::sqrt(ss / C + eps);
    for (int64_t j = 0; j < C; ++j) y[r * C + j] = static_cast<float>(xv[r * C + j] * s * wv[j]);
  }
  return y;
}

// x [B, T, D]: the first `heads` heads of hs rotated, pairs (2i, 2i+1), angle (start + t) theta^(-2i/hs).
std::vector<float> rope_double(const Tensor& x, int64_t hs, int64_t heads, double theta, int64_t start) {
  const int64_t T = x.size(1), D = x.size(2), rows = x.numel() / D;
  std::vector<float> y = x.to_vector();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < hs / 2; ++i) {
        const double a = double(start + r % T) * std::pow(theta, -2.0 * double(i) / double(hs));
        float* p = y.data() + r * D + h * hs + 2 * i;
        const double x0 = p[0], x1 = p[1];
        p[0] = static_cast<float>(x0 * std::cos(a) - x1 * std::sin(a));
        p[1] = static_cast<float>(x0 * std::sin(a) + x1 * std::cos(a));
      }
  return y;
}

}  // namespace

TEST_CASE("rms_norm: plain loops in double, known values, gradients", "[llama][rmsnorm]") {
  // Row [1, 2, 3, 4]: mean square 7.5.
  const float s = 1.0f / std::sqrt(7.5f + 1e-5f);
  require_close(rms_norm(Tensor::from_vector({1, 4}, {1, 2, 3, 4}), Tensor::ones({4})).to_vector(),
                {s, 2 * s, 3 * s, 4 * s});
  const Tensor x = Tensor::randn({3, 5, 37}, 1, 2.0f), w = Tensor::uniform({37}, 2, 0.5f, 1.5f);
  require_close(rms_norm(x, w, 1e-6f).to_vector(), rms_norm_double(x, w, 1e-6), 2e-6);
  check_gradients([](const std::vector<Tensor>& in) { return rms_norm(in[0], in[1]); },
                  {Tensor::uniform({2, 3, 6}, 3, -2, 2), Tensor::uniform({6}, 4, 0.5, 1.5)});
  // More rows than one gradient chunk, groups of four and rows alone, a strided input.
  check_gradients([](const std::vector<Tensor>& in) { return rms_norm(in[0].transpose(0, 1), in[1]); },
                  {Tensor::uniform({5, 70}, 5, -2, 2), Tensor::uniform({5}, 6, 0.5, 1.5)}, {1e-2, 1e-2, 2e-2});
  REQUIRE_THROWS_WITH(rms_norm(Tensor::ones({2, 4}), Tensor::ones({3})),
                      Catch::Contains("rms_norm: input [2, 4] needs weight [4], got [3]"));
}

TEST_CASE("rope: pairs turned as plain loops in double, values untouched, gradients", "[llama][rope]") {
  // 3 heads of 8 in a row of 4 heads: the first three turn (queries and keys), the last (values) not.
  const Tensor x = Tensor::randn({2, 7, 32}, 7);
  for (int64_t start : {0, 5}) {
    INFO("start " << start);
    const std::vector<float> got = rope(x, 8, 3, 10000.0f, start).to_vector();
    require_close(got, rope_double(x, 8, 3, 10000.0, start), 1e-6);
    for (int64_t r = 0; r < 14; ++r)  // the fourth head exactly as it was
      for (int64_t j = 24; j < 32; ++j) REQUIRE(got[r * 32 + j] == x.data()[r * 32 + j]);
  }
  // Position 0 is the identity; a turn keeps each pair's length.
  const std::vector<float> first = rope(x, 8, 4).to_vector();
  for (int64_t j = 0; j < 32; ++j) REQUIRE(first[j] == x.data()[j]);
  require_close(rope(x, 16, 2, 500.0f).to_vector(), rope_double(x, 16, 2, 500.0, 0), 1e-6);
  // Queries and keys at positions m and n: their product depends on m - n only.
  const Tensor q = Tensor::randn({1, 1, 8}, 8), k = Tensor::randn({1, 1, 8}, 9);
  auto dot = [&](int64_t m, int64_t n) {
    const std::vector<float> a = rope(q, 8, 1, 10000.0f, m).to_vector(), b = rope(k, 8, 1, 10000.0f, n).to_vector();
    double s = 0;
    for (int j = 0; j < 8; ++j) s += double(a[j]) * b[j];
    return s;
  };
  REQUIRE(dot(7, 3) == Approx(dot(4, 0)).epsilon(1e-5));
  check_gradients([](const std::vector<Tensor>& in) { return rope(in[0], 4, 2, 100.0f, 3); },
                  {Tensor::uniform({2, 5, 12}, 10, -2, 2)});
  REQUIRE_THROWS_WITH(rope(x, 7, 1), Catch::Contains("rope: input [2, 7, 32]"));
  REQUIRE_THROWS_WITH(rope(x, 8, 5), Catch::Contains("cannot rotate 5 heads of size 8"));
}

TEST_CASE("swiglu and silu: plain loops in double, gradients", "[llama][swiglu]") {
  const Tensor x = Tensor::randn({3, 4, 2 * 19}, 11, 3.0f);
  const std::vector<float> got = swiglu(x).to_vector();
  REQUIRE(got.size() == 3 * 4 * 19);
  std::vector<float> want(got.size()), silu_want(x.numel());
  for (int64_t r = 0; r < 12; ++r)
    for (int64_t j = 0; j < 19; ++j) {
      const double g = x.data()[r * 38 + j], u = x.data()[r * 38 + 19 + j];
      want[r * 19 + j] = static_cast<float>(g / (1.0 + std::exp(-g)) * u);
    }
  for (int64_t i = 0; i < x.numel(); ++i) silu_want[i] = static_cast<float>(x.data()[i] / (1.0 + std::exp(-double(x.data()[i]))));
  require_close(got, want, 2e-6);
  require_close(silu(x).to_vector(), silu_want, 2e-6);
  REQUIRE(silu(Tensor::from_vector({2}, {-200.0f, 200.0f})).to_vector() == std::vector<float>{-0.0f, 200.0f});
  check_gradients([](const std::vector<Tensor>& in) { return swiglu(in[0]); }, {Tensor::uniform({2, 3, 10}, 12, -3, 3)});
  check_gradients([](const std::vector<Tensor>& in) { return silu(in[0]); }, {Tensor::uniform({2, 9}, 13, -4, 4)});
  REQUIRE_THROWS_WITH(swiglu(Tensor::ones({2, 5})), Catch::Contains("swiglu: input [2, 5] needs a last axis of 2H"));
}

TEST_CASE("layer_norm without a bias is layer_norm with a zero bias", "[llama][layernorm]") {
  const Tensor x = Tensor::randn({4, 9}, 14), w = Tensor::uniform({9}, 15, 0.5f, 1.5f);
  REQUIRE(layer_norm(x, w, Tensor()).to_vector() == layer_norm(x, w, Tensor::zeros({9})).to_vector());
  check_gradients([](const std::vector<Tensor>& in) { return layer_norm(in[0], in[1], Tensor()); },
                  {Tensor::uniform({3, 6}, 16, -2, 2), Tensor::uniform({6}, 17, 0.5, 1.5)});
}

TEST_CASE("inference: rms_norm_row, rope_row and swiglu_row are the ops' rows, bit for bit", "[llama][inference]") {
  NoGradGuard no_grad;
  const int64_t T = 6, C = 53, hs = 8, heads = 3;
  const Tensor x = Tensor::randn({1, T, C}, 18, 3.0f), w = Tensor::randn({C}, 19);
  const std::vector<float> rn = rms_norm(x, w).to_vector();
  const Tensor qk = Tensor::randn({1, T, heads * hs}, 20);
  const std::vector<float> turned = rope(qk, hs, heads, 10000.0f, 11).to_vector();
  const Tensor gu = Tensor::randn({1, T, 2 * C}, 21);
  const std::vector<float> sw = swiglu(gu).to_vector();
  std::vector<float> row(2 * C), angles(hs);
  for (int64_t t = 0; t < T; ++t) {
    rms_norm_row(x.data() + t * C, C, w.data(), 1e-5f, row.data());
    REQUIRE(std::vector<float>(row.begin(), row.begin() + C) == std::vector<float>(rn.begin() + t * C, rn.begin() + (t + 1) * C));
    std::copy_n(qk.data() + t * heads * hs, heads * hs, row.begin());
    rope_row(row.data(), heads, hs, 11 + t, 10000.0f, angles.data());
    REQUIRE(std::vector<float>(row.begin(), row.begin() + heads * hs) ==
            std::vector<float>(turned.begin() + t * heads * hs, turned.begin() + (t + 1) * heads * hs));
    swiglu_row(gu.data() + t * 2 * C, C, row.data());
    REQUIRE(std::vector<float>(row.begin(), row.begin() + C) == std::vector<float>(sw.begin() + t * C, sw.begin() + (t + 1) * C));
  }
}
