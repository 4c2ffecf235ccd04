// LayerNorm over the last axis: y = (x - mean) * rstd * weight + bias, rstd = 1 / sqrt(var + eps).
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

constexpr int64_t kRowsPerChunk = 32;  // fixed, so the weight/bias gradient sums never depend on threads
constexpr int kGroup = 4;              // rows whose sums run side by side (row_sums)
static_assert(kRowsPerChunk % kGroup == 0, "a group of rows never spans two chunks");

// Rows [0, G) of x [G, C] into y, with each row's mean and rstd; b null: no bias. A row's bits do not depend on how
// rows are grouped (row_sums).
template <int G>
void normalize_rows(const float* x, int64_t C, const float* w, const float* b, float eps, float* y, float* mean,
                    float* rstd) {
  float m[G], v[G];
  row_sums<G>(C, [x, C](int g, int64_t j, auto lanes) { return at<decltype(lanes)>(x + g * C + j); }, m);
  for (int g = 0; g < G; ++g) m[g] /= static_cast<float>(C);
  row_sums<G>(
      C,
      [x, C, &m](int g, int64_t j, auto lanes) {
        const auto d = at<decltype(lanes)>(x + g * C + j) - m[g];
        return d * d;
      },
      v);
  for (int g = 0; g < G; ++g) {
    const float s = 1.0f / std::sqrt(v[g] / static_cast<float>(C) + eps);
    const float* xr = x + g * C;
    float* yr = y + g * C;
    if (b)
      for (int64_t j = 0; j < C; ++j) yr[j] = (xr[j] - m[g]) * s * w[j] + b[j];
    else
      for (int64_t j = 0; j < C; ++j) yr[j] = (xr[j] - m[g]) * s * w[j];
    mean[g] = m[g];
    rstd[g] = s;
  }
}

// With xhat = (x - mean) * rstd and dxhat = g * weight:
//   dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)),  dweight = sum g*xhat,  dbias = sum g.
struct LayerNormBackward {
  const float *x, *g, *w, *mean, *rstd;
  int64_t C;
  float* dx;  // null: no input gradient wanted
  bool fresh;  // dx unwritten: write instead of adding

  // Rows [r, r + G): their shares of dweight and dbias into pw and pb (null: not wanted), and dx.
  template <int G>
  void rows(int64_t r, float* pw, float* pb) const {
    const float* xs = x + r * C;
    const float* gs = g + r * C;
    const float *m = mean + r, *s = rstd + r;
    // The G rows added one after another, as G separate passes would, in one pass over pw and pb.
    if (pw)
      for (int64_t j = 0; j < C; ++j) {
        float acc = pw[j];
        for (int q = 0; q < G; ++q) acc += gs[q * C + j] * ((xs[q * C + j] - m[q]) * s[q]);
        pw[j] = acc;
      }
    if (pb)
      for (int64_t j = 0; j < C; ++j) {
        float acc = pb[j];
        for (int q = 0; q < G; ++q) acc += gs[q * C + j];
        pb[j] = acc;
      }
    if (!dx) return;
    float sum_d[G], sum_dx[G];
    // Members copied into the lambdas: read through `this`, they would be reloaded every term.
    row_sums<G>(
        C,
        [gs, w = w, C = C](int q, int64_t j, auto lanes) {
          using V = decltype(lanes);
          return at<V>(gs + q * C + j) * at<V>(w + j);
        },
        sum_d);
    row_sums<G>(
        C,
        [gs, xs, m, s, w = w, C = C](int q, int64_t j, auto lanes) {
          using V = decltype(lanes);
          return at<V>(gs + q * C + j) * at<V>(w + j) * ((at<V>(xs + q * C + j) - m[q]) * s[q]);
        },
        sum_dx);
    for (int q = 0; q < G; ++q) {
      const float *xr = xs + q * C, *gr = gs + q * C;
      const float mean_d = sum_d[q] / static_cast<float>(C), mean_dx = sum_dx[q] / static_cast<float>(C);
      float* out = dx + (r + q) * C;
      for (int64_t j = 0; j < C; ++j) {
        const float xhat = (xr[j] - m[q]) * s[q];
        const float d = s[q] * (gr[j] * w[j] - mean_d - xhat * mean_dx);
        out[j] = fresh ? d : out[j] + d;
      }
    }
  }
};

}  // namespace

void layer_norm_row(const float* x, int64_t C, const float* weight, const float* bias, float eps, float* y) {
  float mean = 0.0f, rstd = 0.0f;
  normalize_rows<1>(x, C, weight, bias, eps, y, &mean, &rstd);
}

Tensor layer_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, float eps) {
  return layer_norm(input, weight, bias, eps, Readers::anyone);
}

Tensor layer_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, float eps, Readers readers) {
  OpTimer timer("layer_norm");
  const int64_t C = input.dim() ? input.shape().back() : 0;
  if (input.dim() < 1 || weight.shape() != Shape{C} || (bias.defined() && bias.shape() != Shape{C}))
    throw std::invalid_argument(fmt::format("layer_norm: input {} needs weight and bias [{}], got {} and {}",
                                            to_string(input.shape()), C, to_string(weight.shape()),
                                            bias.defined() ? to_string(bias.shape()) : "none"));
  const Tensor x = input.contiguous(), w = weight.contiguous(), b = bias.defined() ? bias.contiguous() : Tensor();
  const float* bias_data = b.defined() ? b.data() : nullptr;
  const int64_t rows = C ? x.numel() / C : 0;
  Tensor out = Tensor::empty(x.shape());
  auto mean = memory::make_shared<memory::Vector<float>>(rows);
  auto rstd = memory::make_shared<memory::Vector<float>>(rows);
  const bool round = detail::stores_rounded(readers);
  parallel_for(rows, grain_for(4 * C), [&](int64_t r0, int64_t r1) {
    int64_t r = r0;
    for (; r + kGroup <= r1; r += kGroup) {
      normalize_rows<kGroup>(x.data() + r * C, C, w.data(), bias_data, eps, out.data() + r * C, mean->data() + r,
                             rstd->data() + r);
      if (round) detail::round_in_place(out.data() + r * C, kGroup * C);  // while in L1
    }
    for (; r < r1; ++r) {
      normalize_rows<1>(x.data() + r * C, C, w.data(), bias_data, eps, out.data() + r * C, mean->data() + r,
                        rstd->data() + r);
      if (round) detail::round_in_place(out.data() + r * C, C);
    }
  });
  if (round) detail::mark_bf16_exact(out);

  return attach(out, "layer_norm", {x, w, b}, [x, w, b, mean, rstd, rows, C](const Tensor&, const Tensor& g) {
    bool fresh = false;
    const LayerNormBackward pass{x.data(), g.data(), w.data(), mean->data(), rstd->data(), C, grad_sink(x, fresh),
                                 fresh};
    float* dw = grad_sink(w);
    float* db = grad_sink(b);
    const int64_t chunks = (rows + kRowsPerChunk - 1) / kRowsPerChunk;
    Buffer partial_w(dw ? chunks * C : 0, 0.0f), partial_b(db ? chunks * C : 0, 0.0f);
    parallel_for(chunks, grain_for(kRowsPerChunk * C * 8), [&](int64_t c0, int64_t c1) {
      for (int64_t chunk = c0; chunk < c1; ++chunk) {
        float* pw = dw ? partial_w.data() + chunk * C : nullptr;
        float* pb = db ? partial_b.data() + chunk * C : nullptr;
        const int64_t end = std::min(rows, (chunk + 1) * kRowsPerChunk);
        int64_t r = chunk * kRowsPerChunk;
        for (; r + kGroup <= end; r += kGroup) pass.rows<kGroup>(r, pw, pb);
        for (; r < end; ++r) pass.rows<1>(r, pw, pb);
      }
    });
    parallel_for(C, 64, [&](int64_t j0, int64_t j1) {  // combine the chunks in order
      for (int64_t j = j0; j < j1; ++j)
        for (int64_t chunk = 0; chunk < chunks; ++chunk) {
          if (dw) dw[j] += partial_w[chunk * C + j];
          if (db) db[j] += partial_b[chunk * C + j];
        }
    });
  });
}

}  // namespace tinygpt
