// The vectorized, blocked gemm against the plain-loop reference, over shapes that hit every edge:
// partial micro-tiles, partial tiles, several depth blocks, transposed operands (each with its own
// packing path), accumulation.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>

#include "tinygpt/autograd/kernels/gemm.h"
#include "tinygpt/autograd/kernels/pack.h"
#include "tinygpt/autograd/kernels/small_gemm.h"
#include "tinygpt/autograd/threads.h"
#include "first_difference.h"
#include "gradcheck.h"

using namespace tinygpt;
using tinygpt::testing::first_difference;

namespace {
void compare(int64_t M, int64_t N, int64_t K, bool ta, bool tb, bool accumulate, bool with_bias = false) {
  // Store A as [M, K] or, transposed, as [K, M]; likewise B.
  Tensor a = Tensor::uniform({M * K}, M + 3 * K, -1, 1), b = Tensor::uniform({K * N}, N + 7 * K, -1, 1);
  MatrixView av = ta ? MatrixView{a.data(), 1, M} : MatrixView{a.data(), K, 1};
  MatrixView bv = tb ? MatrixView{b.data(), 1, K} : MatrixView{b.data(), N, 1};
  Tensor start = Tensor::uniform({M * N}, 99, -1, 1);
  Tensor fast = start.contiguous(), ref = Tensor::empty({M * N});
  ref.copy_from_(start);
  Tensor bias = Tensor::uniform({N}, 5, -1, 1);
  const float* b0 = with_bias ? bias.data() : nullptr;
  gemm(M, N, K, av, bv, fast.data(), N, accumulate, b0);
  gemm_reference(M, N, K, av, bv, ref.data(), N, accumulate, b0);
  INFO("M " << M << " N " << N << " K " << K << " ta " << ta << " tb " << tb << " acc " << accumulate << " bias "
            << with_bias);
  tinygpt::testing::require_close(fast.to_vector(), ref.to_vector(), 2e-5 * std::sqrt(double(K)) + 1e-6);
}
}  // namespace

TEST_CASE("gemm: matches the reference on edge shapes and layouts", "[gemm]") {
  const int64_t shapes[][3] = {{1, 1, 1},   {5, 7, 3},   {6, 16, 8},     {13, 33, 17}, {64, 65, 128},
                               {130, 70, 300}, {250, 257, 513}, {7, 300, 1}, {1, 100, 260}, {37, 90, 1100},
                               {7, 4100, 1100}};  // B packed two depth blocks at a time, then one
  for (auto& s : shapes)
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (bool acc : {false, true}) compare(s[0], s[1], s[2], ta, tb, acc, !acc);
}

TEST_CASE("gemm: a bias row added in the product's store equals adding it after", "[gemm]") {
  for (auto [M, N, K] : {std::array<int64_t, 3>{13, 37, 600}, {6, 16, 8}, {5, 3, 0}}) {  // tile edges, 2 blocks, K = 0
    Tensor a = Tensor::uniform({M * K}, 1, -1, 1), b = Tensor::uniform({K * N}, 2, -1, 1);
    Tensor bias = Tensor::uniform({N}, 3, -1, 1);
    Tensor fused = Tensor::empty({M * N}), after = Tensor::empty({M * N});
    gemm(M, N, K, {a.data(), K, 1}, {b.data(), N, 1}, fused.data(), N, false, bias.data());
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) after.data()[i * N + j] = bias.data()[j];
    gemm(M, N, K, {a.data(), K, 1}, {b.data(), N, 1}, after.data(), N, true);
    REQUIRE(first_difference(fused.to_vector(), after.to_vector()) == "");  // the same bits: one addition, either order
  }
}

TEST_CASE("gemm: a short C (columns split, B packed as used) has the bits of a tall one's rows", "[gemm]") {
  // 192 rows go the short way, 200 the tiled way; both split K = 1100 into the same depth blocks.
  const int64_t tall = 200, rows = 192, N = 90, K = 1100;
  Tensor a = Tensor::uniform({tall * K}, 1, -1, 1), b = Tensor::uniform({K * N}, 2, -1, 1);
  for (bool ta : {false, true}) {
    const MatrixView av = ta ? MatrixView{a.data(), 1, tall} : MatrixView{a.data(), K, 1};
    for (int threads : {1, 2}) {
      set_num_threads(threads);
      Tensor whole = Tensor::empty({tall * N}), part = Tensor::empty({rows * N});
      gemm(tall, N, K, av, {b.data(), N, 1}, whole.data(), N, false);
      gemm(rows, N, K, av, {b.data(), N, 1}, part.data(), N, false);
      std::vector<float> head = whole.to_vector();
      head.resize(rows * N);
      INFO("transposed A " << ta << ", threads " << threads);
      REQUIRE(first_difference(part.to_vector(), head) == "");
    }
  }
  set_num_threads(0);
}

TEST_CASE("gemm: row bands evened out over 2 and 3 threads match the reference and one thread", "[gemm]") {
  // 768 rows by size alone are 7 bands (a single column tile here): 8 bands for 2 threads, 9 for 3.
  const int64_t M = 768, N = 40, K = 30;
  Tensor a = Tensor::uniform({M * K}, 1, -1, 1), b = Tensor::uniform({K * N}, 2, -1, 1);
  Tensor ref = Tensor::empty({M * N}), one = Tensor::empty({M * N});
  gemm_reference(M, N, K, {a.data(), K, 1}, {b.data(), N, 1}, ref.data(), N, false);
  set_num_threads(1);
  gemm(M, N, K, {a.data(), K, 1}, {b.data(), N, 1}, one.data(), N, false);
  for (int threads : {2, 3}) {
    set_num_threads(threads);
    Tensor many = Tensor::empty({M * N});
    gemm(M, N, K, {a.data(), K, 1}, {b.data(), N, 1}, many.data(), N, false);
    INFO("threads " << threads);
    REQUIRE(first_difference(many.to_vector(), one.to_vector()) == "");
    tinygpt::testing::require_close(many.to_vector(), ref.to_vector(), 2e-5 * std::sqrt(double(K)) + 1e-6);
  }
  set_num_threads(0);
}

TEST_CASE("gemm: K = 0 gives zeros or leaves C alone", "[gemm]") {
  float c[4] = {1, 2, 3, 4};
  float dummy = 0;
  gemm(2, 2, 0, {&dummy, 0, 1}, {&dummy, 2, 1}, c, 2, true);
  REQUIRE(c[3] == 4.0f);
  gemm(2, 2, 0, {&dummy, 0, 1}, {&dummy, 2, 1}, c, 2, false);
  REQUIRE(c[3] == 0.0f);
}

TEST_CASE("small_gemm: the register-tiled kernel matches the reference, edges and strided A and B included",
          "[gemm]") {
  const int64_t shapes[][3] = {{4, 16, 8}, {16, 32, 64}, {7, 19, 5}, {33, 50, 70}, {1, 1, 1}, {5, 64, 256}};
  enum { rows, transposed, every_other };  // A stored row by row, column by column, or every other float
  for (auto& s : shapes)
    for (int layout : {rows, transposed, every_other})
      for (bool transposed_b : {false, true})
        for (bool accumulate : {false, true}) {
          const int64_t M = s[0], N = s[1], K = s[2];
          const Tensor a = Tensor::uniform({2 * M * K}, M + K, -1, 1), b = Tensor::uniform({K * N}, N + K, -1, 1);
          const MatrixView av = layout == rows         ? MatrixView{a.data(), K, 1}
                                : layout == transposed ? MatrixView{a.data(), 1, M}
                                                       : MatrixView{a.data(), 2 * K, 2};
          const MatrixView bv = transposed_b ? MatrixView{b.data(), 1, K} : MatrixView{b.data(), N, 1};
          std::vector<float> panels(packed_b_size(K, N), -1.0f);
          const SmallB sb = packed(bv, K, N, panels.data());
          const std::vector<float> c0 = Tensor::uniform({M * N}, 5, -1, 1).to_vector();
          Tensor fast = Tensor::from_vector({M * N}, c0), product = Tensor::empty({M * N});
          small_gemm({M, N, K, av.data, av.row_stride, av.col_stride, sb, fast.data(), N, 0.5f, accumulate});
          gemm_reference(M, N, K, av, bv, product.data(), N, false);
          std::vector<float> expected = product.to_vector();  // (accumulate ? c0 : 0) + 0.5 A·B
          for (size_t i = 0; i < expected.size(); ++i) expected[i] = (accumulate ? c0[i] : 0.0f) + 0.5f * expected[i];
          INFO("M " << M << " N " << N << " K " << K << " A layout " << layout << " transposed B "
                    << transposed_b << " acc " << accumulate);
          tinygpt::testing::require_close(fast.to_vector(), expected, 2e-5 * std::sqrt(double(K)) + 1e-6);
        }
}

TEST_CASE("small_gemm: packed B read from row p on is B without its first p rows", "[gemm]") {
  const int64_t M = 7, N = 21, K = 9, skip = 4;
  const Tensor a = Tensor::uniform({M * K}, 1, -1, 1), b = Tensor::uniform({(K + skip) * N}, 2, -1, 1);
  std::vector<float> panels(packed_b_size(K + skip, N));
  const SmallB whole = packed({b.data(), N, 1}, K + skip, N, panels.data());
  std::vector<float> fast(M * N), expected(M * N);
  small_gemm({M, N, K, a.data(), K, 1, whole.from_row(skip), fast.data(), N});
  gemm_reference(M, N, K, {a.data(), K, 1}, {b.data() + skip * N, N, 1}, expected.data(), N, false);
  tinygpt::testing::require_close(fast, expected, 1e-5);
}

TEST_CASE("small_gemm: A read from the packing of its rows has the bits of A read in place", "[gemm]") {
  // Attention's dP = dY Vᵀ reads dY from the panels dV packs it into; k past one panel (NR) walks
  // panel after panel into the same sums; rows from i0 on start part way down the panels.
  for (const int64_t K : {5, simd::NR, 2 * simd::NR + 3})
    for (SmallForm form : {SmallForm::floats, SmallForm::rounded}) {
      const int64_t rows = 37, M = 30, N = 19, i0 = rows - M;
      const Tensor a = Tensor::uniform({rows * K}, 3, -1, 1), b = Tensor::uniform({K * N}, 4, -1, 1);
      std::vector<float> a_panels(packed_b_size(rows, K), -1.0f), b_panels(packed_b_size(K, N), -1.0f);
      const SmallB a_rows = packed({a.data(), K, 1}, rows, K, a_panels.data(), form);
      const SmallB sb = packed({b.data(), N, 1}, K, N, b_panels.data(), form);
      const SmallA from_panels = packed_rows(a_rows, i0);
      std::vector<float> got(M * N, 2.0f), want(M * N, 2.0f);
      small_gemm({M, N, K, from_panels.a, from_panels.a_row, from_panels.a_col, sb, got.data(), N, 0.5f, true,
                  form == SmallForm::rounded, from_panels.a_panel});
      small_gemm({M, N, K, a.data() + i0 * K, K, 1, sb, want.data(), N, 0.5f, true});
      INFO("K " << K << " form " << int(form));
      REQUIRE(got == want);
    }
}

TEST_CASE("gemm: C stored rounded is the rounding of C stored as it is", "[gemm]") {
  // Short C and tall, whole register tiles and edges (N = 40), one depth block and two (K = 700:
  // only the last rounds), with a bias, accumulating, and K = 0; fp32 and the rounded bf16 form.
  struct Restore {
    ~Restore() { set_bf16_kernels(Bf16Kernels::measured); }
  } restore;
  set_bf16_kernels(Bf16Kernels::rounded);
  for (int64_t M : {74, 800})
    for (int64_t K : {0, 48, 700})
      for (Precision precision : {Precision::fp32, Precision::bf16})
        for (int start : {0, 1, 2}) {  // zero, bias, accumulate
          const int64_t N = 40;
          const std::vector<float> a = Tensor::uniform({M * K}, 7, -1, 1).to_vector(),
                                   b = Tensor::uniform({K * N}, 8, -1, 1).to_vector(),
                                   bias = Tensor::uniform({N}, 9, -1, 1).to_vector(),
                                   c0 = Tensor::uniform({M * N}, 10, -1, 1).to_vector();
          std::vector<float> got = c0, want = c0;
          auto run = [&](std::vector<float>& c, StoreC store) {
            gemm(M, N, K, {a.data(), K, 1}, {b.data(), N, 1}, c.data(), N, start == 2, start == 1 ? bias.data() : nullptr,
                 precision, {}, store);
          };
          run(got, StoreC::rounded);
          run(want, StoreC::as_is);
          INFO("M " << M << " K " << K << " " << to_string(precision) << " start " << start);
          if (K > 0 || start > 0)  // else C is all zeros
            REQUIRE(std::any_of(want.begin(), want.end(), [](float v) { return v != round_to_bf16(v); }));
          for (float& v : want) v = round_to_bf16(v);
          REQUIRE(got == want);
        }
  if (bf16_instructions()) {  // the native kernels store C as it is, and say so
    set_bf16_kernels(Bf16Kernels::native);
    std::vector<float> a(4, 1.0f), c(4);
    REQUIRE_THROWS_WITH(gemm(2, 2, 2, {a.data(), 2, 1}, {a.data(), 2, 1}, c.data(), 2, false, nullptr, Precision::bf16,
                             {}, StoreC::rounded),
                        Catch::Contains("native bf16 kernels store C as it is"));
  }
}

TEST_CASE("small_gemm: C stored rounded is the rounding of C stored as it is", "[gemm]") {
  // Rounded C: the final values only; K past kSmallDepth: the rounded form adds its blocks of A's
  // depth into C one after another, and rounds after the last. Partial tiles: 37 x 19.
  for (const int64_t K : {int64_t{9}, kSmallDepth + 20})
    for (SmallForm form : {SmallForm::floats, SmallForm::rounded})
      for (bool accumulate : {false, true}) {
        const int64_t M = 37, N = 19;
        const Tensor a = Tensor::uniform({M * K}, 5, -1, 1), b = Tensor::uniform({K * N}, 6, -1, 1);
        std::vector<float> panels(packed_b_size(K, N), -1.0f);
        const SmallB sb = packed({b.data(), N, 1}, K, N, panels.data(), form);
        std::vector<float> got(M * N, 0.3f), want(M * N, 0.3f);
        small_gemm({M, N, K, a.data(), K, 1, sb, got.data(), N, 0.5f, accumulate, false, 0, true});
        small_gemm({M, N, K, a.data(), K, 1, sb, want.data(), N, 0.5f, accumulate});
        INFO("K " << K << " form " << int(form) << " accumulate " << accumulate);
        REQUIRE(std::any_of(want.begin(), want.end(), [](float v) { return v != round_to_bf16(v); }));
        for (float& v : want) v = round_to_bf16(v);
        REQUIRE(got == want);
      }
}

TEST_CASE("gemm: A stored transposed and read in place has the bits of the same A stored by rows", "[gemm]") {
  // dW = dYᵀ X reads dYᵀ down its columns where the rows fill whole kernels (M % MR of 0, MR / 3 or
  // 2 MR / 3); else it is packed. By rows, A is read in place (K <= 512) or packed (K = 700: two
  // depth blocks). Short C (gemm_short) and tall (gemm_tiled); N = 37: a last panel of 5 columns,
  // N = 36: of 4, which needs packed panels.
  constexpr int64_t mr = simd::MR;
  for (int64_t M : {4 * mr, 4 * mr + mr / 3, 4 * mr + 2 * mr / 3, 4 * mr + 1, 40 * mr + 2 * mr / 3})
    for (int64_t N : {48, 37, 36})
      for (int64_t K : {300, 700}) {
        Tensor a = Tensor::uniform({M * K}, M + K, -1, 1), b = Tensor::uniform({K * N}, N, -1, 1);
        Tensor a_t = a.view({M, K}).transpose(0, 1).contiguous();  // [K, M]: the same A, stored transposed
        Tensor by_columns = Tensor::empty({M * N}), by_rows = Tensor::empty({M * N}), ref = Tensor::empty({M * N});
        gemm(M, N, K, {a_t.data(), 1, M}, {b.data(), N, 1}, by_columns.data(), N, false);
        gemm(M, N, K, {a.data(), K, 1}, {b.data(), N, 1}, by_rows.data(), N, false);
        gemm_reference(M, N, K, {a.data(), K, 1}, {b.data(), N, 1}, ref.data(), N, false);
        INFO("M " << M << " N " << N << " K " << K);
        REQUIRE(first_difference(by_columns.to_vector(), by_rows.to_vector()) == "");
        tinygpt::testing::require_close(by_columns.to_vector(), ref.to_vector(), 2e-5 * std::sqrt(double(K)) + 1e-6);
      }
}

TEST_CASE("gemm: a row-major A read in place has the bits of the same A packed from its transpose", "[gemm]") {
  // Row-major A one depth block deep (K <= 512) is read in place; stored transposed it is packed
  // (M = 200 fills whole kernels, and is read in place by columns).
  // Rows 199, 200, 250: last row panels of 1, 2 (two B panels at once) and 4 rows; N = 40 and 37:
  // last panels of 8 and 5 columns.
  for (int64_t M : {199, 200, 250})
    for (int64_t N : {48, 40, 37})
      for (int64_t K : {1, 300, 512}) {
        Tensor a = Tensor::uniform({M * K}, M + K, -1, 1), b = Tensor::uniform({K * N}, N, -1, 1);
        Tensor a_t = a.view({M, K}).transpose(0, 1).contiguous();  // [K, M]: the same A, stored transposed
        Tensor in_place = Tensor::empty({M * N}), packed = Tensor::empty({M * N});
        Tensor ref = Tensor::empty({M * N});
        gemm(M, N, K, {a.data(), K, 1}, {b.data(), N, 1}, in_place.data(), N, false);
        gemm(M, N, K, {a_t.data(), 1, M}, {b.data(), N, 1}, packed.data(), N, false);
        gemm_reference(M, N, K, {a.data(), K, 1}, {b.data(), N, 1}, ref.data(), N, false);
        INFO("M " << M << " N " << N << " K " << K);
        REQUIRE(first_difference(in_place.to_vector(), packed.to_vector()) == "");
        tinygpt::testing::require_close(in_place.to_vector(), ref.to_vector(), 2e-5 * std::sqrt(double(K)) + 1e-6);
      }
}
