// bf16 mixed precision: rounding to bfloat16, the portable and native GEMM paths, thread counts,
// and matmul/linear under a PrecisionGuard.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "tinygpt/autograd/graph.h"
#include "tinygpt/autograd/kernels/gemm.h"
#include "tinygpt/autograd/ops.h"
#include "tinygpt/autograd/parallel.h"
#include "tinygpt/autograd/precision.h"

using namespace tinygpt;

namespace {

struct Product {
  int64_t M, N, K;
  bool ta, tb;  // A stored as [K, M], B as [N, K]
};

// C = A B (+ C) by `path` (0: fp32 gemm, 1: portable bf16, 2: native bf16), from the same data.
std::vector<float> product(const Product& p, const std::vector<float>& a, const std::vector<float>& b, int path,
                           bool accumulate = false, const float* bias = nullptr) {
  const MatrixView av = p.ta ? MatrixView{a.data(), 1, p.M} : MatrixView{a.data(), p.K, 1};
  const MatrixView bv = p.tb ? MatrixView{b.data(), 1, p.K} : MatrixView{b.data(), p.N, 1};
  std::vector<float> c(p.M * p.N, 0.5f);
  if (path == 0) gemm(p.M, p.N, p.K, av, bv, c.data(), p.N, accumulate, bias);
  else if (path == 1) gemm_bf16_portable(p.M, p.N, p.K, av, bv, c.data(), p.N, accumulate, bias);
  else gemm_bf16_native(p.M, p.N, p.K, av, bv, c.data(), p.N, accumulate, bias);
  return c;
}

std::vector<float> uniform(int64_t n, uint64_t seed) { return Tensor::uniform({n}, seed, -1, 1).to_vector(); }

// The paths this machine has: the portable one always, the native one where the CPU has AVX512_BF16.
std::vector<int> bf16_paths() { return bf16_native() ? std::vector<int>{1, 2} : std::vector<int>{1}; }

const Product kShapes[] = {{1, 1, 1, false, false},    {5, 7, 3, true, false},   {13, 33, 17, false, true},
                           {64, 65, 128, true, true},  {130, 70, 301, false, false}, {250, 257, 513, false, true},
                           {37, 90, 1100, true, false}, {300, 16, 40, false, false}};

}  // namespace

TEST_CASE("bf16: rounding to nearest even, infinities and NaN", "[bf16]") {
  REQUIRE(round_to_bf16(1.0f) == 1.0f);
  REQUIRE(round_to_bf16(1.0f + 0x1p-8f) == 1.0f);                           // halfway: to the even 1.0
  REQUIRE(round_to_bf16(1.0f + 3 * 0x1p-8f) == 1.0f + 0x1p-6f);             // halfway: to the even 1 + 2^-6
  REQUIRE(round_to_bf16(1.0f + 0x1p-8f + 0x1p-20f) == 1.0f + 0x1p-7f);      // past halfway: up
  REQUIRE(round_to_bf16(-(1.0f + 0x1p-8f + 0x1p-20f)) == -(1.0f + 0x1p-7f));
  REQUIRE(round_to_bf16(3.14159265f) == 3.140625f);
  REQUIRE(round_to_bf16(std::numeric_limits<float>::max()) == std::numeric_limits<float>::infinity());
  REQUIRE(round_to_bf16(-std::numeric_limits<float>::infinity()) == -std::numeric_limits<float>::infinity());
  REQUIRE(std::isnan(round_to_bf16(std::numeric_limits<float>::quiet_NaN())));
  REQUIRE(std::isnan(round_to_bf16(std::bit_cast<float>(0x7F800001u))));    // a NaN whose payload would round to inf
  REQUIRE(round_to_bf16(0x1p-130f) == 0x1p-130f);                            // subnormals keep their leading bits
  REQUIRE(parse_precision("bf16") == Precision::bf16);
  REQUIRE_THROWS_WITH(parse_precision("fp16"), "precision 'fp16' is not fp32 or bf16");
}

TEST_CASE("bf16: integer products are exact on every path", "[bf16][gemm]") {
  // Integers up to 64 are bfloat16 exactly, and sums of their products stay below 2^24: every path
  // must give the exact integer result, whatever its order of additions.
  for (const Product& p : kShapes) {
    std::vector<float> a(p.M * p.K), b(p.K * p.N);
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(static_cast<int>(i * 7 % 129) - 64);
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(static_cast<int>(i * 5 % 17) - 8);
    const std::vector<float> exact = product(p, a, b, 0);
    for (int path : bf16_paths()) {
      INFO("path " << path << " M " << p.M << " N " << p.N << " K " << p.K);
      REQUIRE(product(p, a, b, path) == exact);
    }
  }
}

TEST_CASE("bf16: both paths compute the product of the rounded operands, with a bias or accumulating", "[bf16][gemm]") {
  for (const Product& p : kShapes) {
    const std::vector<float> a = uniform(p.M * p.K, p.M + 3), b = uniform(p.K * p.N, p.N + 5), bias = uniform(p.N, 9);
    std::vector<float> ar(a), br(b);
    for (float& x : ar) x = round_to_bf16(x);
    for (float& x : br) x = round_to_bf16(x);
    for (bool accumulate : {false, true}) {
      const float* bias_or_none = accumulate ? nullptr : bias.data();
      const std::vector<float> want = product(p, ar, br, 0, accumulate, bias_or_none);  // float sums of exact products
      const std::vector<float> unrounded = product(p, a, b, 0, accumulate, bias_or_none);
      for (int path : bf16_paths()) {
        INFO("path " << path << " M " << p.M << " N " << p.N << " K " << p.K << " accumulate " << accumulate);
        const std::vector<float> got = product(p, a, b, path, accumulate, bias_or_none);
        if (path == 1) REQUIRE(got == want);  // the same float kernels on the same rounded panels
        // The native instruction adds each pair of products its own way (and flushes subnormals):
        // within a few float ulps of the sum's scale (AMD Zen 5: at most 4.4e-7 x sqrt(K) here for
        // operands in [-1, 1], against 2e-6 x sqrt(K) allowed).
        double worst = 0;
        for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, double(std::abs(got[i] - want[i])));
        REQUIRE(worst <= 2e-6 * std::sqrt(double(p.K)) + 1e-6);
        // Rounding happened: bf16 operands differ from float ones after the 8th significant bit.
        if (p.K >= 17) {
          double diff = 0;
          for (size_t i = 0; i < got.size(); ++i) diff = std::max(diff, double(std::abs(got[i] - unrounded[i])));
          REQUIRE(diff > 1e-4);
          REQUIRE(diff < 0.02 * std::sqrt(double(p.K)));
        }
      }
    }
  }
}

TEST_CASE("bf16: each path has the same bits with 1, 2 and 3 threads", "[bf16][gemm]") {
  const Product shapes[] = {{768, 40, 30, false, false}, {4096 / 8, 384, 1152, false, true}, {384, 96, 700, true, false}};
  for (const Product& p : shapes) {
    const std::vector<float> a = uniform(p.M * p.K, 1), b = uniform(p.K * p.N, 2);
    for (int path : bf16_paths()) {
      set_num_threads(1);
      const std::vector<float> one = product(p, a, b, path);
      for (int threads : {2, 3}) {
        set_num_threads(threads);
        INFO("path " << path << " threads " << threads << " M " << p.M);
        REQUIRE(product(p, a, b, path) == one);
      }
    }
  }
  set_num_threads(0);
}

TEST_CASE("bf16: matmul and linear under a PrecisionGuard, forward and backward", "[bf16]") {
  Tensor x = Tensor::uniform({6, 40}, 1, -1, 1), w = Tensor::uniform({24, 40}, 2, -1, 1), bias = Tensor::uniform({24}, 3, -1, 1);
  x.set_requires_grad(true), w.set_requires_grad(true), bias.set_requires_grad(true);
  auto run = [&](Precision precision) {
    x.zero_grad(), w.zero_grad(), bias.zero_grad();
    Tensor y;
    {
      PrecisionGuard guard(precision);
      REQUIRE(matmul_precision() == precision);
      y = linear(x, w, bias);
    }
    REQUIRE(matmul_precision() == Precision::fp32);  // the guard restores
    sum(mul(y, y)).backward();                       // backward outside the guard: still as forward
    return std::vector<std::vector<float>>{y.to_vector(), x.grad().to_vector(), w.grad().to_vector()};
  };
  const auto f32 = run(Precision::fp32), b16 = run(Precision::bf16);
  // Forward: the product of the rounded operands, plus the bias in float.
  std::vector<float> xr = x.to_vector(), wr = w.to_vector();
  for (float& v : xr) v = round_to_bf16(v);
  for (float& v : wr) v = round_to_bf16(v);
  for (int i = 0; i < 6; ++i)
    for (int o = 0; o < 24; ++o) {
      double s = bias.to_vector()[o];
      for (int k = 0; k < 40; ++k) s += double(xr[i * 40 + k]) * wr[o * 40 + k];
      REQUIRE(b16[0][i * 24 + o] == Approx(s).margin(1e-5));
    }
  for (size_t part = 0; part < 3; ++part) {
    REQUIRE(b16[part] != f32[part]);  // rounded
    double scale = 0, worst = 0;  // bfloat16's 8 significant bits: about 2^-8 of the values' scale
    for (size_t i = 0; i < f32[part].size(); ++i)
      scale = std::max(scale, double(std::abs(f32[part][i]))), worst = std::max(worst, double(std::abs(b16[part][i] - f32[part][i])));
    REQUIRE(worst < 0.02 * scale);
  }
}
