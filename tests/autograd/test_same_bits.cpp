// Every build computes the same bits: the kernels against scalar loops written in the order the
// kernels document (no vectors, so no vector width), bit for bit, on 1 and 2 threads, and in the
// portable build with its AVX2+FMA copies and with its plain ones. A build whose kernels pass these
// computes what every other build computes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "tinygpt/autograd/elementary.h"
#include "tinygpt/autograd/inference.h"
#include "tinygpt/autograd/kernels/blocking.h"
#include "tinygpt/autograd/kernels/gemm.h"
#include "tinygpt/autograd/kernels/pack.h"
#include "tinygpt/autograd/kernels/small_gemm.h"
#include "tinygpt/autograd/machine.h"
#include "tinygpt/autograd/tensor.h"
#include "tinygpt/autograd/threads.h"
#include "first_difference.h"
#include "threads.h"

using namespace tinygpt;
using tinygpt::testing::first_difference;

namespace {

// gemm's order: each C element sums each depth block (DepthBlocks) in one chain of fmas from 0 in k
// order; the first block's sum is added to C's old value (accumulate) or has the bias added, and
// each later block's sum is added to C.
void gemm_in_order(int64_t M, int64_t N, int64_t K, MatrixView A, MatrixView B, float* C, int64_t ldc,
                   bool accumulate, const float* bias) {
  const DepthBlocks blocks(std::max<int64_t>(K, 1));
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float c = C[i * ldc + j];
      if (K == 0) c = accumulate ? c : bias ? bias[j] : 0.0f;
      for (int64_t block = 0; block < (K > 0 ? blocks.count : 0); ++block) {
        float sum = 0.0f;
        for (int64_t k = block * blocks.most; k < block * blocks.most + blocks.depth(block); ++k)
          sum = std::fma(A.data[i * A.row_stride + k * A.col_stride], B.data[k * B.row_stride + j * B.col_stride], sum);
        c = block > 0 || accumulate ? c + sum : bias ? sum + bias[j] : sum;
      }
      C[i * ldc + j] = c;
    }
}

// matvec's order: a row's terms j go to lane j mod 16 while whole steps of 16 remain, each lane one
// chain of fmas; the lanes added as a tree (j + 8 onto j, then j + 4, j + 2, j + 1); the columns
// past the last whole step fused on.
float dot_in_order(const float* w, const float* x, int64_t in) {
  float lanes[16] = {};
  const int64_t whole = in / 16 * 16;
  for (int64_t j = 0; j < whole; ++j) lanes[j % 16] = std::fma(w[j], x[j], lanes[j % 16]);
  for (int half = 8; half >= 1; half /= 2)
    for (int j = 0; j < half; ++j) lanes[j] += lanes[j + half];
  float s = lanes[0];
  for (int64_t j = whole; j < in; ++j) s = std::fma(w[j], x[j], s);
  return s;
}

// The settings under which each kernel runs here: threads 1 and 2, and in the portable build both
// of its copies (elsewhere the copies setting does nothing, and the second pass repeats the first).
template <class Check>
void in_every_setting(const Check& check) {
  for (bool avx2_fma : {true, false})
    for (int threads : {1, 2}) {
      set_avx2_fma_copies(avx2_fma);
      INFO("threads " << threads << ", the portable build's AVX2+FMA copies " << (avx2_fma ? "on" : "off"));
      tinygpt::testing::with_threads(threads, check);
    }
  set_avx2_fma_copies(true);
}

}  // namespace

TEST_CASE("same bits: gemm is its documented order of fmas on every path", "[same-bits]") {
  // Edge tiles, narrow panels, short and tall C, several depth blocks (768 = two of 384, 1100 =
  // three), transposed operands, accumulate and bias.
  const int64_t shapes[][3] = {{1, 1, 1},   {5, 7, 3},     {6, 16, 8},   {13, 33, 17},  {64, 65, 128},
                               {130, 70, 768}, {250, 257, 513}, {7, 300, 1}, {1, 100, 260}, {37, 90, 1100},
                               {200, 3, 40}, {2, 2, 0}};
  in_every_setting([&] {
    for (auto& s : shapes)
      for (bool ta : {false, true})
        for (bool tb : {false, true})
          for (int start : {0, 1, 2}) {  // zero, accumulate, bias
            const int64_t M = s[0], N = s[1], K = s[2];
            const Tensor a = Tensor::uniform({M * K + 1}, M + 3 * K, -1, 1), b = Tensor::uniform({K * N + 1}, N + 7 * K, -1, 1);
            const MatrixView av = ta ? MatrixView{a.data(), 1, M} : MatrixView{a.data(), K, 1};
            const MatrixView bv = tb ? MatrixView{b.data(), 1, K} : MatrixView{b.data(), N, 1};
            const Tensor bias = Tensor::uniform({N}, 5, -1, 1);
            std::vector<float> got = Tensor::uniform({M * N}, 99, -1, 1).to_vector(), want = got;
            const float* b0 = start == 2 ? bias.data() : nullptr;
            gemm(M, N, K, av, bv, got.data(), N, start == 1, b0);
            gemm_in_order(M, N, K, av, bv, want.data(), N, start == 1, b0);
            INFO("M " << M << " N " << N << " K " << K << " ta " << ta << " tb " << tb << " start " << start);
            REQUIRE(first_difference(got, want) == "");
          }
  });
}

TEST_CASE("same bits: small_gemm is alpha times one chain of fmas per element", "[same-bits]") {
  const int64_t shapes[][3] = {{4, 16, 8}, {16, 32, 64}, {7, 19, 5}, {33, 50, 70}, {1, 1, 1}, {5, 64, 256}};
  in_every_setting([&] {
    for (auto& s : shapes)
      for (bool accumulate : {false, true}) {
        const int64_t M = s[0], N = s[1], K = s[2];
        const Tensor a = Tensor::uniform({M * K}, M + K, -1, 1), b = Tensor::uniform({K * N}, N + K, -1, 1);
        std::vector<float> panels(packed_b_size(K, N));
        const SmallB sb = packed({b.data(), N, 1}, K, N, panels.data());
        std::vector<float> got = Tensor::uniform({M * N}, 5, -1, 1).to_vector(), want = got;
        small_gemm({M, N, K, a.data(), K, 1, sb, got.data(), N, 0.125f, accumulate});
        for (int64_t i = 0; i < M; ++i)
          for (int64_t j = 0; j < N; ++j) {
            float sum = 0.0f;
            for (int64_t k = 0; k < K; ++k) sum = std::fma(a.data()[i * K + k], b.data()[k * N + j], sum);
            want[i * N + j] = accumulate ? want[i * N + j] + sum * 0.125f : sum * 0.125f;
          }
        INFO("M " << M << " N " << N << " K " << K << " acc " << accumulate);
        REQUIRE(first_difference(got, want) == "");
      }
  });
}

TEST_CASE("same bits: matvec sums in 16 lanes whatever the vector width, fp32 and int8", "[same-bits]") {
  in_every_setting([&] {
    for (int64_t in : {1, 15, 16, 17, 31, 32, 33, 64, 100, 768, 1000})
      for (int64_t out : {1, 3, 4, 9, 17}) {
        const Tensor W = Tensor::randn({out, in}, in + out), x = Tensor::randn({in}, 7), b = Tensor::randn({out}, 8);
        std::vector<float> got(out);
        matvec(W.data(), b.data(), x.data(), got.data(), out, in);
        std::vector<float> want(out);
        for (int64_t o = 0; o < out; ++o) want[o] = dot_in_order(W.data() + o * in, x.data(), in) + b.data()[o];
        INFO("out " << out << " in " << in);
        REQUIRE(first_difference(got, want) == "");
        if (in % 32 != 0) continue;  // int8 rows are whole groups here
        const Int8Matrix q = quantize_int8(W.data(), out, in, 32);
        std::vector<float> dequantized(out * in);
        dequantize_int8(q, dequantized.data());
        matvec_int8(q, nullptr, x.data(), got.data());
        for (int64_t o = 0; o < out; ++o) want[o] = dot_in_order(dequantized.data() + o * in, x.data(), in);
        REQUIRE(first_difference(got, want) == "");
      }
  });
}

TEST_CASE("same bits: the elementary functions are + - * / in a written order", "[same-bits]") {
  // Values computed by this build's functions, checked against values written down once: any build
  // or CPU whose functions compute other bits fails here. (Each is also within a few ulp of the
  // true value: test_elementwise.)
  REQUIRE(vector_exp(1.0f) == 2.71828175f);
  REQUIRE(vector_exp(-3.5f) == 0.0301973838f);
  REQUIRE(vector_log(10.0f) == 2.30258512f);
  REQUIRE(vector_log(0.001f) == -6.90775537f);
  REQUIRE(vector_tanh(0.3f) == 0.291312635f);
  REQUIRE(vector_log1p(1e-3f) == 0.000999500277f);
  REQUIRE(exp_double(1.0) == 2.7182818284590455);
  REQUIRE(log_double(10.0) == 2.3025850929940459);
  REQUIRE(cos_sin_double(1.0).cos == 0.54030230586813977);
  REQUIRE(cos_sin_double(1000.0).sin == 0.82687954053200263);
  REQUIRE(whole_power(0.999, 1000) == 0.36769542477096695);
}
