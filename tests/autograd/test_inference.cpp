// The ops' row functions (inference.h) are the ops' own arithmetic: the same bits, row by row.
#include <catch2/catch.hpp>

#include <vector>

#include "tinygpt/autograd/graph.h"
#include "tinygpt/autograd/inference.h"
#include "tinygpt/autograd/ops.h"
#include "tinygpt/autograd/tensor.h"

using namespace tinygpt;

TEST_CASE("inference: layer_norm_row, gelu_row, softmax_row and matvec are the ops' rows, bit for bit", "[inference]") {
  NoGradGuard no_grad;
  const int64_t R = 5, C = 53;  // 53: every vector width's tail
  const Tensor x = Tensor::randn({R, C}, 11, 3.0f), w = Tensor::randn({C}, 12), b = Tensor::randn({C}, 13);
  const std::vector<float> ln = layer_norm(x, w, b, 1e-5f).to_vector(), g = gelu(x).to_vector(),
                           sm = softmax(x).to_vector();
  std::vector<float> row(C);
  for (int64_t r = 0; r < R; ++r) {
    const float* xr = x.data() + r * C;
    layer_norm_row(xr, C, w.data(), b.data(), 1e-5f, row.data());
    REQUIRE(row == std::vector<float>(ln.begin() + r * C, ln.begin() + (r + 1) * C));
    gelu_row(xr, C, row.data());
    REQUIRE(row == std::vector<float>(g.begin() + r * C, g.begin() + (r + 1) * C));
    softmax_row(xr, C, row.data());
    REQUIRE(row == std::vector<float>(sm.begin() + r * C, sm.begin() + (r + 1) * C));
  }
  // matvec against a plain loop (double sums): within float rounding.
  const Tensor W = Tensor::randn({R, C}, 14);
  std::vector<float> y(R);
  matvec(W.data(), b.data(), x.data(), y.data(), R, C);
  for (int64_t o = 0; o < R; ++o) {
    double s = b.data()[o];
    for (int64_t i = 0; i < C; ++i) s += double(W.data()[o * C + i]) * x.data()[i];
    REQUIRE(y[o] == Approx(s).margin(1e-4));
  }
}
