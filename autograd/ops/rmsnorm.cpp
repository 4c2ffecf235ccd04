// RMSNorm over the last axis (Llama's norm): y = x * rstd * weight, rstd = 1 / sqrt(mean(x²) + eps).
// No mean is taken out and there is no bias: LayerNorm without its centring.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "../graph.h"
#include "../inference.h"
#include "../kernels/rows.h"
#include "../ops.h"
#include "../detail/bf16_operands.h"
#include "../detail/profile.h"

namespace tinygpt {

namespace {

constexpr int64_t kRmsRowsPerChunk = 32;  // fixed, so the weight gradient sums never depend on threads
constexpr int kRmsGroup = 4;              // rows whose sums run side by side (row_sums)
static_assert(kRmsRowsPerChunk % kRmsGroup == 0, "a group of rows never spans two chunks");

// Rows [0, G) of x [G, C] into y, with each row's rstd.
template <int G>
void rms_rows(const float* x, int64_t C, const float* w, float eps, float* y, float* rstd) {
  float ss[G];  // sums of squares
  row_sums<G>(C, [x, C](int g, int64_t j, auto lanes) {
    const auto v = at<decltype(lanes)>(x + g * C + j);
    return v * v;
  }, ss);
  for (int g = 0; g < G; ++g) {
    const float s = 1.0f / std::sqrt(ss[g] / static_cast<float>(C) + eps);
    const float* xr = x + g * C;
    float* yr = y + g * C;
    for (int64_t j = 0; j < C; ++j) yr[j] = xr[j] * s * w[j];
    rstd[g] = s;
  }
}

// With xhat = x * rstd and dxhat = g * weight:
//   dx = rstd * (dxhat - xhat * mean(dxhat * xhat)),  dweight = sum over rows of g * xhat.
struct RmsNormBackward {
  const float *x, *g, *w, *rstd;
  int64_t C;
  float* dx;   // null: no input gradient wanted
  bool fresh;  // dx unwritten: write instead of adding

  template <int G>
  void rows(int64_t r, float* pw) const {
    const float* xs = x + r * C;
    const float* gs = g + r * C;
    const float* s = rstd + r;
    if (pw)
      for (int64_t j = 0; j < C; ++j) {
        float acc = pw[j];
        for (int q = 0; q < G; ++q) acc += gs[q * C + j] * (xs[q * C + j] * s[q]);
        pw[j] = acc;
      }
    if (!dx) return;
    float sum_dx[G];
    row_sums<G>(C, [gs, xs, s, w = w, C = C](int q, int64_t j, auto lanes) {
      using V = decltype(lanes);
      return at<V>(gs + q * C + j) * at<V>(w + j) * (at<V>(xs + q * C + j) * s[q]);
    }, sum_dx);
    for (int q = 0; q < G; ++q) {
      const float *xr = xs + q * C, *gr = gs + q * C;
      const float mean_dx = sum_dx[q] / static_cast<float>(C);
      float* out = dx + (r + q) * C;
      for (int64_t j = 0; j < C; ++j) {
        const float d = s[q] * (gr[j] * w[j] - xr[j] * s[q] * mean_dx);
        out[j] = fresh ? d : out[j] + d;
      }
    }
  }
};

}  // namespace

void rms_norm_row(const float* x, int64_t C, const float* weight, float eps, float* y) {
  float rstd = 0.0f;
  rms_rows<1>(x, C, weight, eps, y, &rstd);
}

Tensor rms_norm(const Tensor& input, const Tensor& weight, float eps) {
  return rms_norm(input, weight, eps, Readers::anyone);
}

Tensor rms_norm(const Tensor& input, const Tensor& weight, float eps, Readers readers) {
  OpTimer timer("rms_norm");
  const int64_t C = input.dim() ? input.shape().back() : 0;
  if (input.dim() < 1 || weight.shape() != Shape{C})
    throw std::invalid_argument(fmt::format("rms_norm: input {} needs weight [{}], got {}", to_string(input.shape()), C,
                                            to_string(weight.shape())));
  const Tensor x = input.contiguous(), w = weight.contiguous();
  const int64_t rows = C ? x.numel() / C : 0;
  Tensor out = Tensor::empty(x.shape());
  auto rstd = memory::make_shared<memory::Vector<float>>(rows);
  const bool round = detail::stores_rounded(readers);
  parallel_for(rows, grain_for(2 * C), [&](int64_t r0, int64_t r1) {
    // One row at a time: rms_norm_row's code, so the key/value-cache decoder gets these bits.
    for (int64_t r = r0; r < r1; ++r) {
      rms_rows<1>(x.data() + r * C, C, w.data(), eps, out.data() + r * C, rstd->data() + r);
      if (round) detail::round_in_place(out.data() + r * C, C);  // while in L1
    }
  });
  if (round) detail::mark_bf16_exact(out);

  return attach(out, "rms_norm", {x, w}, [x, w, rstd, rows, C](const Tensor&, const Tensor& g) {
    bool fresh = false;
    const RmsNormBackward pass{x.data(), g.data(), w.data(), rstd->data(), C, grad_sink(x, fresh), fresh};
    float* dw = grad_sink(w);
    const int64_t chunks = (rows + kRmsRowsPerChunk - 1) / kRmsRowsPerChunk;
    Buffer partial_w(dw ? chunks * C : 0, 0.0f);
    parallel_for(chunks, grain_for(kRmsRowsPerChunk * C * 6), [&](int64_t c0, int64_t c1) {
      for (int64_t chunk = c0; chunk < c1; ++chunk) {
        float* pw = dw ? partial_w.data() + chunk * C : nullptr;
        const int64_t end = std::min(rows, (chunk + 1) * kRmsRowsPerChunk);
        int64_t r = chunk * kRmsRowsPerChunk;
        for (; r + kRmsGroup <= end; r += kRmsGroup) pass.rows<kRmsGroup>(r, pw);
        for (; r < end; ++r) pass.rows<1>(r, pw);
      }
    });
    if (dw)
      parallel_for(C, 64, [&](int64_t j0, int64_t j1) {  // combine the chunks in order
        for (int64_t j = j0; j < j1; ++j)
          for (int64_t chunk = 0; chunk < chunks; ++chunk) dw[j] += partial_w[chunk * C + j];
      });
  });
}

}  // namespace tinygpt
