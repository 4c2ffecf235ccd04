// bf16 mixed precision: rounding to bfloat16, the portable and native GEMM paths, thread counts,
// and matmul/linear under a PrecisionGuard.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "tinygpt/autograd/detail/bf16_operands.h"
#include "tinygpt/autograd/graph.h"
#include "tinygpt/autograd/kernels/gemm.h"
#include "tinygpt/autograd/for_products.h"
#include "tinygpt/autograd/kernels/pack.h"
#include "tinygpt/autograd/kernels/simd.h"
#include "tinygpt/autograd/kernels/small_gemm.h"
#include "tinygpt/autograd/ops.h"
#include "tinygpt/autograd/threads.h"
#include "tinygpt/autograd/precision.h"
#include "first_difference.h"

using namespace tinygpt;
using tinygpt::testing::first_difference;

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

// Restores the default kernel choice (rounded) however a test ends.
struct DefaultKernelsAfter {
  ~DefaultKernelsAfter() { set_bf16_kernels(Bf16Kernels::rounded); }
};

// RowSums' order spelled out: k in chunks of row_sum_chunk(K), each summed from 0, then the chunks'
// sums added from 0.
float sum_in_chunks(int64_t K, const std::function<float(int64_t)>& value) {
  const int64_t chunk = row_sum_chunk(K);
  float total = 0.0f;
  for (int64_t k0 = 0; k0 < K; k0 += chunk) {
    float part = 0.0f;
    for (int64_t k = k0; k < std::min(K, k0 + chunk); ++k) part += value(k);
    total += part;
  }
  return total;
}

// The paths this machine has: the portable one always, the native one where the CPU has AVX512_BF16.
std::vector<int> bf16_paths() { return bf16_instructions() ? std::vector<int>{1, 2} : std::vector<int>{1}; }

// The largest |a[i] - b[i]|.
double max_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, double(std::abs(a[i] - b[i])));
  return worst;
}

// How far the native instruction may land from float sums of the rounded operands' exact products,
// for operands in [-1, 1] summed over k: it adds each pair of products its own way (and flushes
// subnormals), within a few float ulps of the sum's scale (AMD Zen 5: at most 4.4e-7 x sqrt(k)).
double native_tolerance(int64_t k) { return 2e-6 * std::sqrt(double(k)) + 1e-6; }

const Product kShapes[] = {{1, 1, 1, false, false},    {5, 7, 3, true, false},   {13, 33, 17, false, true},
                           {64, 65, 128, true, true},  {130, 70, 301, false, false}, {250, 257, 513, false, true},
                           {37, 90, 1100, true, false}, {300, 16, 40, false, false}, {100, 130, 2600, false, false},
                           // row bands over several depth blocks: each band through every block (B's
                           // pairs small), or every band through each block (B's pairs large); with two
                           // threads, each packs its own copy of B's pairs where it has 96 rows or more,
                           // else (the last two) the threads share them
                           {200, 48, 1100, false, true}, {400, 1600, 520, true, false}, {500, 800, 1100, false, true},
                           {150, 60, 1100, false, false}, {190, 180, 4100, false, true},
                           // a last row panel of 5 rows (a 65-token vocabulary's dW) and of 8 (by rows)
                           {65, 128, 768, true, false}, {92, 70, 130, false, false}};

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
  REQUIRE(round_to_bf16(0x1p-130f) == 0.0f);                                 // subnormals: zero of their sign,
  REQUIRE(std::signbit(round_to_bf16(-0x1p-130f)));                           // as vcvtneps2bf16 does
  REQUIRE(round_to_bf16(0x1p-126f) == 0x1p-126f);                             // the smallest normal stays
  REQUIRE(parse_precision("bf16") == Precision::bf16);
  REQUIRE_THROWS_WITH(parse_precision("fp16"), "precision 'fp16' is not fp32 or bf16");
}

TEST_CASE("bf16: the vector rounding of the packers equals round_to_bf16 bit for bit", "[bf16]") {
  // Every kind of value: zeros, subnormals, normals near each rounding boundary and tie, the largest
  // finite, infinities and NaNs with payloads in either half; then a sweep of pseudo-random patterns,
  // and one of normal values below 2^112 with a tie in every fourth (long runs of them: AVX2 rounds
  // such blocks in the float adder), the ends of that range among them.
  std::vector<uint32_t> bits = {0x00000000u, 0x80000000u, 0x00000001u, 0x807FFFFFu, 0x00800000u, 0x80800000u,
                                0x3F808000u, 0x3F818000u, 0x3F807FFFu, 0x3F808001u, 0x7F7FFFFFu, 0x7F7F7FFFu,
                                0x7F800000u, 0xFF800000u, 0x7F800001u, 0x7FC00000u, 0xFF810000u, 0x7FFFFFFFu};
  for (uint32_t x = 12345u, i = 0; i < 100000; ++i) bits.push_back(x = x * 1664525u + 1013904223u);
  for (uint32_t x = 777u, i = 0; i < 60000; ++i) {
    x = x * 1664525u + 1013904223u;
    const uint32_t exponent = 1 + (x >> 8) % 238, low = i % 4 == 0 ? 0x8000u : x & 0xFFFFu;
    bits.push_back((x & 0x80000000u) | exponent << 23 | (x & 0x7F0000u) | low);
  }
  int64_t at = 1000;  // 160 apart: each in a block of four vectors of its own
  for (uint32_t b : {0x00800000u, 0x777FFFFFu, 0x77800000u, 0xF77F8000u, 0x80800000u, 0x3F7F8000u})
    bits.insert(bits.end() - (at += 160), b);
  std::vector<float> in(bits.size()), out(bits.size(), 1.0f);
  for (size_t i = 0; i < bits.size(); ++i) in[i] = std::bit_cast<float>(bits[i]);
  const int64_t n = static_cast<int64_t>(in.size()) - 3;  // a tail shorter than a vector
  simd::round_bf16(in.data(), n, out.data());
  for (int64_t i = 0; i < n; ++i) {
    INFO("input bits 0x" << std::hex << bits[i]);
    REQUIRE(std::bit_cast<uint32_t>(out[i]) == std::bit_cast<uint32_t>(round_to_bf16(in[i])));
  }
  for (int64_t i = n; i < static_cast<int64_t>(out.size()); ++i) REQUIRE(out[i] == 1.0f);  // past n: untouched
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
      REQUIRE(first_difference(product(p, a, b, path), exact) == "");
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
        if (path == 1) REQUIRE(first_difference(got, want) == "");  // the same float kernels on the same rounded panels
        REQUIRE(max_difference(got, want) <= native_tolerance(p.K));
        // Rounding happened: bf16 operands differ from float ones after the 8th significant bit.
        if (p.K >= 17) {
          const double diff = max_difference(got, unrounded);
          REQUIRE(diff > 1e-4);
          REQUIRE(diff < 0.02 * std::sqrt(double(p.K)));
        }
      }
    }
  }
}

TEST_CASE("bf16: measured, the native kernels serve bf16 products only where they pay", "[bf16][gemm]") {
  const DefaultKernelsAfter restore;
  REQUIRE_FALSE(bf16_native());  // the default: the float kernels on rounded operands, everywhere
  set_bf16_kernels(Bf16Kernels::measured);
  REQUIRE(bf16_native_speedup() == bf16_native_speedup());  // measured once, then the same answer
  if (!bf16_instructions()) {
    REQUIRE_FALSE(bf16_native());
    REQUIRE(bf16_native_speedup() == 0.0);
    REQUIRE_THAT(bf16_kernels_note(), Catch::Contains("no AVX512_BF16"));
  } else {
    REQUIRE(bf16_native_speedup() > 0.1);  // a measured ratio: vdpbf16ps runs at 0.5x to 2x FMA's rate
    REQUIRE(bf16_native() == (bf16_native_speedup() >= 1.15));
    REQUIRE_THAT(bf16_kernels_note(), Catch::Contains(fmt::format("{:.2f}x", bf16_native_speedup())));
  }
  // gemm's bf16 products are the chosen path's, bit for bit.
  const Product p{70, 90, 50, false, false};
  const std::vector<float> a = uniform(p.M * p.K, 3), b = uniform(p.K * p.N, 4);
  std::vector<float> c(p.M * p.N, 0.5f);
  gemm(p.M, p.N, p.K, {a.data(), p.K, 1}, {b.data(), p.N, 1}, c.data(), p.N, false, nullptr, Precision::bf16);
  REQUIRE(c == product(p, a, b, bf16_native() ? 2 : 1));
}

TEST_CASE("bf16: each path has the same bits with 1, 2 and 3 threads", "[bf16][gemm]") {
  // Row bands (B's pairs one copy per thread: 768, 512 and 500 rows; shared: 150); columns split
  // for a short, wide C, its A rounded whole or one depth block at a time.
  const Product shapes[] = {{768, 40, 30, false, false},   {4096 / 8, 384, 1152, false, true}, {384, 96, 700, true, false},
                            {256, 300, 768, false, true},  {120, 200, 2600, true, false},      {500, 800, 1100, false, true},
                            {150, 60, 1100, false, false}};
  for (const Product& p : shapes) {
    const std::vector<float> a = uniform(p.M * p.K, 1), b = uniform(p.K * p.N, 2);
    for (int path : bf16_paths()) {
      set_num_threads(1);
      const std::vector<float> one = product(p, a, b, path);
      for (int threads : {2, 3}) {
        set_num_threads(threads);
        INFO("path " << path << " threads " << threads << " M " << p.M);
        REQUIRE(first_difference(product(p, a, b, path), one) == "");
      }
    }
  }
  set_num_threads(0);
}

TEST_CASE("bf16: row sum chunks are 32 k or more in multiples of 8 and at most 16 to a row", "[bf16][gemm]") {
  REQUIRE(row_sum_chunk(1) == 32);
  REQUIRE(row_sum_chunk(512) == 32);
  REQUIRE(row_sum_chunk(700) == 48);  // 43.75 k a chunk, rounded up to 48
  REQUIRE(row_sum_chunk(768) == 48);
  REQUIRE(row_sum_chunk(4100) == 264);
}

TEST_CASE("bf16: gemm's row sums of A are float sums in chunks of k, on every path, for any thread count",
          "[bf16][gemm]") {
  // The native GEMM adds them up as it rounds A, its depth blocks ending inside chunks (4100: 9 blocks
  // of 456 k, chunks of 264); fp32 and the portable path in a pass of their own.
  std::vector<Product> shapes(std::begin(kShapes), std::end(kShapes));
  shapes.push_back({384, 96, 700, true, false});  // columns split for a short C, A rounded a block at a time
  shapes.push_back({768, 40, 30, false, false});  // each thread its own copy of B's pairs
  shapes.push_back({2100, 8, 70, true, false});   // dY 2100 wide: two blocks of columns for each chunk
  for (const Product& p : shapes) {
    const std::vector<float> a = uniform(p.M * p.K, 21), b = uniform(p.K * p.N, 22);
    const MatrixView av = p.ta ? MatrixView{a.data(), 1, p.M} : MatrixView{a.data(), p.K, 1};
    const MatrixView bv = p.tb ? MatrixView{b.data(), 1, p.K} : MatrixView{b.data(), p.N, 1};
    std::vector<float> start = uniform(p.M, 23), want_fresh(p.M), want_added(p.M);
    for (int64_t i = 0; i < p.M; ++i) {
      const float s = sum_in_chunks(p.K, [&](int64_t k) { return a[p.ta ? k * p.M + i : i * p.K + k]; });
      want_fresh[i] = s, want_added[i] = start[i] + s;
    }
    // Each path forced in turn: the measured choice may differ from one run (and load) to the next.
    const DefaultKernelsAfter restore;
    for (int path : {0, 1, 2}) {
      if (path == 2 && !bf16_instructions()) continue;
      const Precision precision = path == 0 ? Precision::fp32 : Precision::bf16;
      if (path > 0) set_bf16_kernels(path == 1 ? Bf16Kernels::rounded : Bf16Kernels::native);
      set_num_threads(1);
      const std::vector<float> product_alone = product(p, a, b, path);
      for (int threads : {1, 2, 3}) {
        set_num_threads(threads);
        for (bool accumulate : {false, true}) {
          INFO("M " << p.M << " N " << p.N << " K " << p.K << " path " << path << " threads " << threads
                    << " accumulate " << accumulate);
          std::vector<float> c(p.M * p.N, 0.5f), sums = accumulate ? start : std::vector<float>(p.M, 9.0f);
          gemm(p.M, p.N, p.K, av, bv, c.data(), p.N, false, nullptr, precision, RowSums{sums.data(), accumulate});
          REQUIRE(first_difference(c, product_alone) == "");
          REQUIRE(first_difference(sums, accumulate ? want_added : want_fresh) == "");
        }
      }
    }
  }
  set_num_threads(0);
}

TEST_CASE("bf16: operands with neither stride 1 are gathered, then rounded like contiguous ones", "[bf16][gemm]") {
  // Every other element of a larger matrix: A[M, K] at a[2 * (i * K + k)], B[K, N] at b[2 * (k * N + j)].
  const int64_t M = 29, N = 45, K = 67;
  const std::vector<float> a = uniform(2 * M * K, 11), b = uniform(2 * K * N, 12);
  std::vector<float> ar(M * K), br(K * N);
  for (int64_t i = 0; i < M * K; ++i) ar[i] = round_to_bf16(a[2 * i]);
  for (int64_t i = 0; i < K * N; ++i) br[i] = round_to_bf16(b[2 * i]);
  std::vector<float> want(M * N);
  gemm(M, N, K, {ar.data(), K, 1}, {br.data(), N, 1}, want.data(), N, false);
  for (int path : bf16_paths()) {
    INFO("path " << path);
    std::vector<float> got(M * N);
    const MatrixView av{a.data(), 2 * K, 2}, bv{b.data(), 2 * N, 2};
    if (path == 1) gemm_bf16_portable(M, N, K, av, bv, got.data(), N, false);
    else gemm_bf16_native(M, N, K, av, bv, got.data(), N, false);
    REQUIRE(max_difference(got, want) <= native_tolerance(K));
  }
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

TEST_CASE("bf16: a Linear's bias gradient is the float column sums of dy, as in fp32, for 1 and 2 threads", "[bf16]") {
  // 700 rows: two depth blocks of dyᵀ for dW, 15 chunks of 48 rows for the sums; 40 outputs: a
  // short C (dW [40, 50]) whose columns the threads split. fp32, then bf16 on each kind of kernel.
  DefaultKernelsAfter restore;
  struct Mode {
    Precision precision;
    Bf16Kernels kernels;
  };
  std::vector<Mode> modes{{Precision::fp32, Bf16Kernels::measured}, {Precision::bf16, Bf16Kernels::rounded}};
  if (bf16_instructions()) modes.push_back({Precision::bf16, Bf16Kernels::native});
  for (int64_t outputs : {40, 400}) {
    Tensor x = Tensor::uniform({700, 50}, 4, -1, 1), w = Tensor::uniform({outputs, 50}, 5, -1, 1);
    Tensor bias = Tensor::uniform({outputs}, 6, -1, 1), dy = Tensor::uniform({700, outputs}, 7, -1, 1);
    w.set_requires_grad(true), bias.set_requires_grad(true);
    std::vector<float> want(outputs), in_order(outputs, 0.0f);  // RowSums' chunks, and rows one by one
    const std::vector<float> g = dy.to_vector();
    for (int64_t o = 0; o < outputs; ++o) want[o] = sum_in_chunks(700, [&](int64_t r) { return g[r * outputs + o]; });
    for (int64_t r = 0; r < 700; ++r)
      for (int64_t o = 0; o < outputs; ++o) in_order[o] += g[r * outputs + o];
    REQUIRE(first_difference(want, in_order) != "");  // the orders differ in some bits: the test tells them apart
    for (const Mode& mode : modes) {
      for (int threads : {1, 2}) {
        set_num_threads(threads);
        set_bf16_kernels(mode.kernels);
        for (int pass = 0; pass < 2; ++pass) {  // the second adds to the first's gradient
          INFO("outputs " << outputs << " " << to_string(mode.precision) << " on " << name(mode.kernels)
                          << " threads " << threads << " pass " << pass);
          if (pass == 0) w.zero_grad(), bias.zero_grad();
          {
            PrecisionGuard guard(mode.precision);
            linear(x, w, bias).backward(dy);
          }
          std::vector<float> expect = want;
          for (float& v : expect) v = pass == 0 ? v : v + v;
          REQUIRE(first_difference(bias.grad().to_vector(), expect) == "");
        }
      }
    }
  }
  set_num_threads(0);
}

TEST_CASE("bf16: a Linear on the float kernels equals fp32 on rounded x and w and dy, bit for bit", "[bf16]") {
  // The rounded form rounds x as it reads it, and dy once for both dx and dW (in the pass that sums
  // it for the bias gradient, or alone without a bias); the bias gradient still sums dy as it is.
  // 300 rows: several row bands; 50 outputs: dW a short C.
  struct Restore {
    ~Restore() { set_bf16_kernels(Bf16Kernels::rounded), set_num_threads(0); }
  } restore;
  set_bf16_kernels(Bf16Kernels::rounded);
  const Tensor x0 = Tensor::uniform({300, 70}, 11, -1, 1), w0 = Tensor::uniform({50, 70}, 12, -1, 1);
  const Tensor b0 = Tensor::uniform({50}, 13, -1, 1), dy = Tensor::uniform({300, 50}, 14, -1, 1);
  auto rounded = [](const Tensor& t) {
    std::vector<float> v = t.to_vector();
    for (float& e : v) e = round_to_bf16(e);
    return Tensor::from_vector(t.shape(), v);
  };
  // {y, dx, dw, db} of one Linear's forward and backward (db empty without a bias).
  auto run = [](Precision precision, Tensor x, Tensor w, Tensor b, const Tensor& seed) {
    x = x.clone().detach().set_requires_grad(true), w = w.clone().detach().set_requires_grad(true);
    if (b.defined()) b = b.clone().detach().set_requires_grad(true);
    PrecisionGuard guard(precision);
    Tensor y = linear(x, w, b);
    y.backward(seed);
    return std::vector<std::vector<float>>{y.to_vector(), x.grad().to_vector(), w.grad().to_vector(),
                                           b.defined() ? b.grad().to_vector() : std::vector<float>{}};
  };
  for (const Tensor& b : {b0, Tensor()}) {
    const auto on_rounded = run(Precision::fp32, rounded(x0), rounded(w0), b, rounded(dy));
    const auto bias_grad = run(Precision::fp32, x0, w0, b, dy)[3];
    for (int threads : {1, 2}) {
      set_num_threads(threads);
      const auto got = run(Precision::bf16, x0, w0, b, dy);
      for (size_t part = 0; part < 3; ++part) {
        INFO("bias " << b.defined() << " threads " << threads << " part " << part << " (y, dx, dw)");
        REQUIRE(first_difference(got[part], on_rounded[part]) == "");
      }
      REQUIRE(first_difference(got[3], bias_grad) == "");
    }
  }
}

TEST_CASE("bf16: a Linear rounds a dy that another gradient shares into a copy", "[bf16]") {
  // out = h + linear(h), h a view of x: the add hands one gradient buffer to h and to the Linear's
  // y, so the Linear must leave it as it is (alone, it rounds its dy in place). h's gradient is
  // then the seed as it is plus the Linear's dx, and x's is h's.
  DefaultKernelsAfter restore;
  set_bf16_kernels(Bf16Kernels::rounded);
  const Tensor x0 = Tensor::uniform({40, 24}, 31, -1, 1), w = Tensor::uniform({24, 24}, 32, -1, 1);
  const Tensor b = Tensor::uniform({24}, 33, -1, 1), seed = Tensor::uniform({40, 24}, 34, -1, 1);
  auto x_grad = [&](bool residual) {
    Tensor x = x0.clone().detach().set_requires_grad(true);
    PrecisionGuard guard(Precision::bf16);
    const Tensor h = x.reshape({40, 24});
    const Tensor y = linear(h, w, b);
    (residual ? h + y : y).backward(seed);
    return x.grad().to_vector();
  };
  const std::vector<float> alone = x_grad(false), with_residual = x_grad(true), s = seed.to_vector();
  std::vector<float> want(s.size());
  for (size_t i = 0; i < s.size(); ++i) want[i] = s[i] + alone[i];
  REQUIRE(first_difference(with_residual, want) == "");
  REQUIRE(std::any_of(s.begin(), s.end(), [](float v) { return v != round_to_bf16(v); }));  // rounding would show
}

TEST_CASE("bf16: operands marked bfloat16-exact are read as they are", "[bf16][gemm]") {
  // Marked rounded operands give the unmarked product's bits; a marked operand that is not
  // bfloat16 is multiplied as it is, which shows the mark is what skips the rounding.
  struct Restore {
    ~Restore() { set_bf16_kernels(Bf16Kernels::rounded); }
  } restore;
  set_bf16_kernels(Bf16Kernels::rounded);
  for (const Product& p : kShapes) {
    std::vector<float> a = uniform(p.M * p.K, p.M + 21), b = uniform(p.K * p.N, p.N + 22);
    std::vector<float> ar(a), br(b);
    for (float& x : ar) x = round_to_bf16(x);
    for (float& x : br) x = round_to_bf16(x);
    auto bf16_product = [&](const std::vector<float>& av, const std::vector<float>& bv, bool exact) {
      MatrixView A = p.ta ? MatrixView{av.data(), 1, p.M} : MatrixView{av.data(), p.K, 1};
      MatrixView B = p.tb ? MatrixView{bv.data(), 1, p.K} : MatrixView{bv.data(), p.N, 1};
      A.bf16_exact = B.bf16_exact = exact;
      std::vector<float> c(p.M * p.N, 0.0f);
      gemm(p.M, p.N, p.K, A, B, c.data(), p.N, false, nullptr, Precision::bf16);
      return c;
    };
    INFO("M " << p.M << " N " << p.N << " K " << p.K);
    REQUIRE(first_difference(bf16_product(ar, br, true), bf16_product(a, b, false)) == "");
    if (p.K >= 17) REQUIRE(first_difference(bf16_product(a, b, true), product(p, a, b, 0)) == "");
  }
}

namespace {

// One small product's operands: A [m, k] in the walk given by its strides, B [k, n] as stored.
struct SmallCase {
  int64_t m, n, k;
  int a_walk;    // 0: rows along k (a_col 1), 1: down columns (a_row 1), 2: both strides > 1
  int b_layout;  // 0: row-major, 1: transposed (columns along k), 2: both strides > 1
};

// C = alpha A B (+ C) by small_gemm with B packed in `form`; A and B optionally rounded first.
std::vector<float> small_product(const SmallCase& s, const std::vector<float>& a, const std::vector<float>& b,
                                 SmallForm form, bool round_first, float alpha, bool accumulate) {
  std::vector<float> ar(a), br(b);
  if (round_first)
    for (auto* v : {&ar, &br})
      for (float& x : *v) x = round_to_bf16(x);
  // A and B live in buffers twice as wide and tall, so that the strided layouts have room.
  const int64_t a_row = s.a_walk == 0 ? s.k : s.a_walk == 1 ? 1 : 2 * s.k;
  const int64_t a_col = s.a_walk == 0 ? 1 : s.a_walk == 1 ? s.m : 2;
  std::vector<float> a_store(4 * s.m * s.k, 7.0f);
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t p = 0; p < s.k; ++p) a_store[i * a_row + p * a_col] = ar[i * s.k + p];
  const MatrixView bv = s.b_layout == 0 ? MatrixView{nullptr, s.n, 1}
                        : s.b_layout == 1 ? MatrixView{nullptr, 1, s.k} : MatrixView{nullptr, 2 * s.n, 2};
  std::vector<float> b_store(4 * s.k * s.n, 7.0f);
  for (int64_t p = 0; p < s.k; ++p)
    for (int64_t j = 0; j < s.n; ++j) b_store[p * bv.row_stride + j * bv.col_stride] = br[p * s.n + j];
  std::vector<float> panels(packed_b_size(s.k, s.n) + 64);
  const SmallB packed_b = packed({b_store.data(), bv.row_stride, bv.col_stride}, s.k, s.n, panels.data() + 1, form);  // + 1: panels need no alignment
  std::vector<float> c(s.m * s.n, 0.5f);
  small_gemm({s.m, s.n, s.k, a_store.data(), a_row, a_col, packed_b, c.data(), s.n, alpha, accumulate});
  return c;
}

}  // namespace

TEST_CASE("bf16: attention's small products round both operands, in either form", "[bf16][gemm]") {
  // k = 300 runs past one rounded block of A (kSmallDepth); 13 x 33 leaves partial tiles.
  const SmallCase cases[] = {{1, 1, 1, 0, 0},     {5, 7, 3, 1, 1},    {13, 33, 17, 2, 2}, {24, 64, 256, 0, 1},
                             {24, 40, 300, 1, 0}, {30, 16, 2, 0, 2}, {25, 70, 301, 2, 1}};
  std::vector<SmallForm> forms{SmallForm::rounded};
  if (bf16_instructions()) forms.push_back(SmallForm::pairs);
  for (const SmallCase& s : cases)
    for (bool accumulate : {false, true}) {
      const std::vector<float> a = uniform(s.m * s.k, s.m + 1), b = uniform(s.k * s.n, s.n + 2);
      const float alpha = accumulate ? 1.0f : 0.125f;
      const std::vector<float> want = small_product(s, a, b, SmallForm::floats, true, alpha, accumulate);
      const std::vector<float> unrounded = small_product(s, a, b, SmallForm::floats, false, alpha, accumulate);
      for (SmallForm form : forms) {
        INFO("form " << int(form) << " m " << s.m << " n " << s.n << " k " << s.k << " walk " << s.a_walk);
        const std::vector<float> got = small_product(s, a, b, form, false, alpha, accumulate);
        // The rounded form runs the float kernels on rounded operands: the same bits while A fits
        // one block; past it, C takes the blocks' sums one after another.
        if (form == SmallForm::rounded && s.k <= kSmallDepth) REQUIRE(got == want);
        REQUIRE(max_difference(got, want) <= native_tolerance(s.k));
        if (s.k >= 17) REQUIRE(max_difference(got, unrounded) > 1e-4 * alpha);  // rounding happened
      }
    }
}

namespace {
// y, dq, dk and dv of causal attention over random q, k, v [B, nh, T, hs] (hs 16: the scale 1/4
// is exact), fused or spelled out as scores, mask, softmax and weights times values.
std::vector<std::vector<float>> attention_outputs(Shape shape, Precision precision, bool fused,
                                                  AttentionMemory memory) {
  const int64_t T = shape[2];
  Tensor q = Tensor::uniform(shape, 1, -2, 2).set_requires_grad(true);
  Tensor k = Tensor::uniform(shape, 2, -2, 2).set_requires_grad(true);
  Tensor v = Tensor::uniform(shape, 3, -2, 2).set_requires_grad(true);
  Tensor y;
  {
    PrecisionGuard guard(precision);
    if (fused) {
      y = causal_attention(q, k, v, memory).y;
    } else {
      const Tensor scores = matmul(q, k.transpose(2, 3)) * 0.25f;
      y = matmul(softmax(masked_fill(scores, triu(Tensor::ones({T, T}), 1), -INFINITY)), v);
    }
  }
  y.backward(Tensor::uniform(y.shape(), 4, -1, 1));
  return {y.to_vector(), q.grad().to_vector(), k.grad().to_vector(), v.grad().to_vector()};
}
}  // namespace

TEST_CASE("bf16: attention in bf16 rounds its products as the unfused ops do, the same bits for 1 and 2 threads",
          "[bf16][attention]") {
  auto run = [](Precision precision, bool fused, AttentionMemory memory) {
    return attention_outputs({2, 3, 37, 16}, precision, fused, memory);  // 37: partial row blocks
  };
  const auto fp32 = run(Precision::fp32, true, AttentionMemory::weights);
  const auto bf16 = run(Precision::bf16, true, AttentionMemory::weights);
  const auto unfused = run(Precision::bf16, false, AttentionMemory::weights);
  const auto tiled = run(Precision::bf16, true, AttentionMemory::tiled);
  set_num_threads(1);
  const auto one_thread = run(Precision::bf16, true, AttentionMemory::weights);
  set_num_threads(2);
  const auto two_threads = run(Precision::bf16, true, AttentionMemory::weights);
  set_num_threads(0);
  REQUIRE(one_thread == two_threads);
  REQUIRE(tiled[0] == bf16[0]);  // the same strips, computed by the same code
  for (size_t part = 0; part < 4; ++part) {
    INFO("part " << part << " (y, dq, dk, dv)");
    double scale = 0, from_fp32 = 0, from_unfused = 0, from_tiled = 0;
    for (size_t i = 0; i < fp32[part].size(); ++i) {
      scale = std::max(scale, double(std::abs(fp32[part][i])));
      from_fp32 = std::max(from_fp32, double(std::abs(bf16[part][i] - fp32[part][i])));
      from_unfused = std::max(from_unfused, double(std::abs(bf16[part][i] - unfused[part][i])));
      from_tiled = std::max(from_tiled, double(std::abs(bf16[part][i] - tiled[part][i])));
    }
    CAPTURE(scale, from_fp32, from_unfused, from_tiled);
    REQUIRE(from_fp32 > 1e-3 * scale);   // the products were rounded
    REQUIRE(from_fp32 < 0.03 * scale);   // to bfloat16's 8 significant bits, no further
    REQUIRE(from_unfused < 0.1 * from_fp32);  // where the unfused ops round too
    REQUIRE(from_tiled < 1e-5 * scale);
  }
}

TEST_CASE("bf16: attention on the float kernels with rounded operands equals the unfused ops' rounding",
          "[bf16][attention]") {
  // The form a CPU takes where native bf16 does not pay: dS is rounded as it is made and read in
  // place; T = 300 runs the products past one rounded block of A.
  struct Restore {
    ~Restore() { set_bf16_kernels(Bf16Kernels::rounded); }
  } restore;
  set_bf16_kernels(Bf16Kernels::rounded);
  for (const int64_t T : {37, 300}) {
    auto run = [T](Precision precision, bool fused, AttentionMemory memory) {
      return attention_outputs({1, 2, T, 16}, precision, fused, memory);
    };
    const auto fp32 = run(Precision::fp32, true, AttentionMemory::weights);
    const auto fused = run(Precision::bf16, true, AttentionMemory::weights);
    const auto tiled = run(Precision::bf16, true, AttentionMemory::tiled);
    const auto unfused = run(Precision::bf16, false, AttentionMemory::weights);
    for (size_t part = 0; part < 4; ++part) {
      INFO("T " << T << " part " << part << " (y, dq, dk, dv)");
      const double from_fp32 = max_difference(fused[part], fp32[part]);
      REQUIRE(from_fp32 > 0);  // rounded
      REQUIRE(max_difference(fused[part], unfused[part]) < 0.1 * from_fp32);
      REQUIRE(max_difference(fused[part], tiled[part]) < 0.1 * from_fp32);
    }
  }
}

namespace {

// The ops that store an output for products (for_products.h), each on its own inputs: a
// [2, 37, 48] x (37 rows: a last partial block of attention rows), read by a Linear [48 -> 20]
// (swiglu halves it: 24 in).
struct ForProducts {
  const char* name;
  int64_t width;  // the output's last axis, the Linear's input
  std::function<Tensor(const Tensor& x, Readers readers)> op;
};
std::vector<ForProducts> for_products(const Tensor& ln_w, const Tensor& ln_b) {
  const Tensor lin_w = Tensor::uniform({40, 48}, 13, -0.3f, 0.3f), lin_b = Tensor::uniform({40}, 14, -0.1f, 0.1f);
  return {{"layer_norm", 48, [&](const Tensor& x, Readers r) { return layer_norm(x, ln_w, ln_b, 1e-5f, r); }},
          {"linear", 40, [lin_w, lin_b](const Tensor& x, Readers r) { return linear(x, lin_w, lin_b, r); }},
          {"rms_norm", 48, [&](const Tensor& x, Readers r) { return rms_norm(x, ln_w, 1e-5f, r); }},
          {"gelu", 48, [](const Tensor& x, Readers r) { return gelu(x, r); }},
          {"swiglu", 24, [](const Tensor& x, Readers r) { return swiglu(x, r); }},
          {"attention", 24, [](const Tensor& x, Readers r) {
             return causal_self_attention(x, 2, 1, AttentionMemory::automatic, r).y;  // 2 heads of 12, 1 k/v head
           }}};
}

}  // namespace

TEST_CASE("bf16: an output for products is stored rounded and marked only on the float kernels", "[bf16]") {
  DefaultKernelsAfter restore;
  const Tensor ln_w = Tensor::uniform({48}, 7, 0.5f, 1.5f), ln_b = Tensor::uniform({48}, 8, -0.5f, 0.5f);
  const Tensor x = Tensor::uniform({2, 37, 48}, 9, -2, 2);
  std::vector<Bf16Kernels> kernels{Bf16Kernels::rounded};
  if (bf16_instructions()) kernels.push_back(Bf16Kernels::native);
  for (const ForProducts& op : for_products(ln_w, ln_b))
    for (Bf16Kernels k : kernels)
      for (Precision precision : {Precision::fp32, Precision::bf16}) {
        set_bf16_kernels(k);
        PrecisionGuard guard(precision);
        const Tensor plain = op.op(x, Readers::anyone), stored = op.op(x, Readers::products);
        const bool rounds = precision == Precision::bf16 && k == Bf16Kernels::rounded;
        INFO(op.name << " kernels " << name(k) << " precision " << to_string(precision));
        std::vector<float> want = plain.to_vector();
        if (rounds)
          for (float& v : want) v = round_to_bf16(v);
        REQUIRE(first_difference(stored.to_vector(), want) == "");
        REQUIRE((plain.to_vector() != stored.to_vector()) == rounds);
        REQUIRE(detail::bf16_exact(stored) == rounds);
        REQUIRE_FALSE(detail::bf16_exact(plain));
      }
}

TEST_CASE("bf16: a Linear reading an output stored for products has the bits of one reading it plain",
          "[bf16]") {
  // The forward reads the rounded output in place, dW packs it without rounding: the same operands
  // as rounding the plain output, so y and every gradient keep their bits, for 1 and 2 threads.
  DefaultKernelsAfter restore;
  set_bf16_kernels(Bf16Kernels::rounded);
  const Tensor ln_w = Tensor::uniform({48}, 7, 0.5f, 1.5f).set_requires_grad(true);
  const Tensor ln_b = Tensor::uniform({48}, 8, -0.5f, 0.5f).set_requires_grad(true);
  for (const ForProducts& op : for_products(ln_w, ln_b))
    for (int threads : {1, 2}) {
      set_num_threads(threads);
      auto run = [&](Readers readers) {
        Tensor x = Tensor::uniform({2, 37, 48}, 9, -2, 2).set_requires_grad(true);
        Tensor w = Tensor::uniform({20, op.width}, 10, -0.3f, 0.3f).set_requires_grad(true);
        Tensor b = Tensor::uniform({20}, 11, -0.1f, 0.1f).set_requires_grad(true);
        Tensor y;
        {
          PrecisionGuard guard(Precision::bf16);
          y = linear(op.op(x, readers), w, b);
        }
        y.backward(Tensor::uniform(y.shape(), 12, -1, 1));
        std::vector<std::vector<float>> out{y.to_vector(), x.grad().to_vector(), w.grad().to_vector(),
                                            b.grad().to_vector()};
        for (Tensor p : {ln_w, ln_b})
          if (p.has_grad()) {
            out.push_back(p.grad().to_vector());
            p.zero_grad();
          }
        return out;
      };
      const auto plain = run(Readers::anyone), stored = run(Readers::products);
      set_num_threads(0);
      INFO(op.name << " threads " << threads);
      REQUIRE(plain.size() == stored.size());
      for (size_t i = 0; i < plain.size(); ++i) REQUIRE(first_difference(stored[i], plain[i]) == "");
    }
}

TEST_CASE("bf16: attention reading q, k and v stored for products has the bits of one reading them plain",
          "[bf16]") {
  // A Linear's output for products (rounded, marked) is packed as it is, and the queries read in
  // place: the same operands as rounding the plain output, so y and every gradient keep their bits,
  // with the weights kept and tiled, fused and unfused, for 1 and 2 threads.
  DefaultKernelsAfter restore;
  set_bf16_kernels(Bf16Kernels::rounded);
  for (AttentionMemory memory : {AttentionMemory::weights, AttentionMemory::tiled})
    for (bool fused : {true, false})
      for (int threads : {1, 2}) {
        set_num_threads(threads);
        auto run = [&](Readers readers) {
          Tensor x = Tensor::uniform({2, 37, 16}, 21, -2, 2).set_requires_grad(true);
          Tensor w = Tensor::uniform({48, 16}, 22, -0.5f, 0.5f).set_requires_grad(true);
          Tensor b = Tensor::uniform({48}, 23, -0.1f, 0.1f).set_requires_grad(true);
          Tensor y;
          {
            PrecisionGuard guard(Precision::bf16);
            const Tensor qkv = linear(x, w, b, readers);  // [2, 37, 3 x 2 heads of 8]
            auto heads = [&](int64_t at) {  // a view of qkv: it keeps the mark
              const Tensor h = qkv.slice(2, at, at + 16).view({2, 37, 2, 8}).transpose(1, 2);
              REQUIRE(detail::bf16_exact(h) == (readers == Readers::products));
              return h;
            };
            y = fused ? causal_self_attention(qkv, 2, 2, memory).y
                      : causal_attention(heads(0), heads(16), heads(32), memory).y;
          }
          y.backward(Tensor::uniform(y.shape(), 24, -1, 1));
          return std::vector<std::vector<float>>{y.to_vector(), x.grad().to_vector(), w.grad().to_vector(),
                                                 b.grad().to_vector()};
        };
        const auto plain = run(Readers::anyone), stored = run(Readers::products);
        set_num_threads(0);
        INFO("memory " << int(memory) << " fused " << fused << " threads " << threads);
        for (size_t i = 0; i < plain.size(); ++i) REQUIRE(first_difference(stored[i], plain[i]) == "");
      }
}

TEST_CASE("bf16: an in-place change takes the bfloat16 mark off the storage", "[bf16]") {
  DefaultKernelsAfter restore;
  set_bf16_kernels(Bf16Kernels::rounded);
  PrecisionGuard guard(Precision::bf16);
  const Tensor y = gelu(Tensor::uniform({4, 8}, 1, -1, 1), Readers::products);
  REQUIRE(detail::bf16_exact(y));
  REQUIRE(detail::bf16_exact(y.view({32})));  // the mark is the storage's: every view has it
  y.fill_(0.3f);                              // 0.3 is no bfloat16
  REQUIRE_FALSE(detail::bf16_exact(y));
}

TEST_CASE("bf16: the kernels are rounded unless asked, and native needs the instructions", "[bf16][gemm]") {
  REQUIRE(bf16_kernels() == Bf16Kernels::rounded);
  REQUIRE_THAT(bf16_kernels_note(), Catch::Contains("the same bits on every machine"));
  REQUIRE(parse_bf16_kernels("rounded") == Bf16Kernels::rounded);
  REQUIRE_THROWS_WITH(parse_bf16_kernels("fast"), Catch::Contains("'fast'"));
  const Product p{70, 90, 50, false, false};
  const std::vector<float> a = uniform(p.M * p.K, 5), b = uniform(p.K * p.N, 6);
  auto bf16_gemm = [&] {
    std::vector<float> c(p.M * p.N, 0.0f);
    gemm(p.M, p.N, p.K, {a.data(), p.K, 1}, {b.data(), p.N, 1}, c.data(), p.N, false, nullptr, Precision::bf16);
    return c;
  };
  struct Restore {
    ~Restore() { set_bf16_kernels(Bf16Kernels::rounded); }
  } restore;  // the default choice again for the other tests, whatever fails here
  set_bf16_kernels(Bf16Kernels::rounded);
  REQUIRE_FALSE(bf16_native());
  REQUIRE_THAT(bf16_kernels_note(), Catch::Contains("float kernels on rounded operands"));
  REQUIRE(bf16_gemm() == product(p, a, b, 1));
  if (bf16_instructions()) {
    set_bf16_kernels(Bf16Kernels::native);
    REQUIRE(bf16_native());
    REQUIRE(bf16_gemm() == product(p, a, b, 2));
  } else {
    REQUIRE_THROWS_WITH(set_bf16_kernels(Bf16Kernels::native), Catch::Contains("AVX512_BF16"));
  }
  set_bf16_kernels(Bf16Kernels::rounded);
  REQUIRE(bf16_native() == (bf16_instructions() && bf16_native_speedup() >= 1.15));
}
