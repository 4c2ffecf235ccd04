// Causal scaled-dot-product attention, one task per (batch row, head):
//   scores  S = Q Kᵀ / sqrt(hs)          [T, T]
//   mask    S[i, j] = -inf for key j > query i (a token never sees its future)
//   weights P = softmax over keys of S    (row i has i + 1 non-zero entries)
//   output  Y = P V                       [T, hs]
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "autograd/graph.h"
#include "autograd/kernels/fast_exp.h"
#include "autograd/ops.h"
#include "autograd/parallel.h"
#include "autograd/profile.h"

namespace tinygpt {

namespace {

// Where head (b, h) of a [B, nh, T, hs] tensor with unit last stride starts, and its row stride.
struct HeadView {
  const Tensor& t;
  const float* at(int64_t b, int64_t h) const { return t.data() + b * t.strides()[0] + h * t.strides()[1]; }
  int64_t row() const { return t.strides()[2]; }
};

Tensor unit_last_stride(const Tensor& t) { return t.strides()[3] == 1 ? t : t.contiguous(); }

// out[d, j] = x[j, d] for one head: x has T rows of hs values, `row` floats apart.
void transpose_head(const float* x, int64_t row, int64_t T, int64_t hs, float* out) {
  for (int64_t j = 0; j < T; ++j)
    for (int64_t d = 0; d < hs; ++d) out[d * T + j] = x[j * row + d];
}

// s[j] = scale * (q · x_j) for j < n, with x given transposed ([hs, T]): the inner loop runs over
// keys, so it vectorizes (a dot product over hs would be a float reduction, which does not).
void scores_row(const float* q, const float* x_t, int64_t n, int64_t T, int64_t hs, float scale, float* s) {
  for (int64_t j = 0; j < n; ++j) s[j] = 0.0f;
  for (int64_t d = 0; d < hs; ++d) {
    const float qd = q[d] * scale;
    const float* xd = x_t + d * T;
    for (int64_t j = 0; j < n; ++j) s[j] += qd * xd[j];
  }
}

// p[0..n) = softmax(p[0..n)), with the maximum taken out first.
void softmax_row(float* p, int64_t n) {
  float m = -INFINITY, sum = 0.0f;
  for (int64_t j = 0; j < n; ++j) m = std::max(m, p[j]);
  for (int64_t j = 0; j < n; ++j) p[j] = vector_exp(p[j] - m);
  for (int64_t j = 0; j < n; ++j) sum += p[j];
  const float inv = 1.0f / sum;
  for (int64_t j = 0; j < n; ++j) p[j] *= inv;
}

}  // namespace

AttentionResult causal_attention(const Tensor& query_in, const Tensor& key_in, const Tensor& value_in) {
  OpTimer timer("causal_attention");
  if (query_in.dim() != 4 || key_in.shape() != query_in.shape() || value_in.shape() != query_in.shape())
    throw std::invalid_argument(fmt::format("causal_attention: query, key, value must share one [B, nh, T, hs] "
                                            "shape, got {}, {}, {}", to_string(query_in.shape()),
                                            to_string(key_in.shape()), to_string(value_in.shape())));
  const Tensor q = unit_last_stride(query_in), k = unit_last_stride(key_in), v = unit_last_stride(value_in);
  const int64_t B = q.size(0), nh = q.size(1), T = q.size(2), hs = q.size(3);
  const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
  // y lives in [B, T, nh, hs] order: merging heads back into [B, T, C] is then a free view.
  Tensor y_storage = Tensor::empty({B, T, nh, hs});
  Tensor y = make_view(y_storage, {B, nh, T, hs}, {T * nh * hs, hs, nh * hs, 1}, 0);
  Tensor weights = Tensor::zeros({B, nh, T, T});
  const HeadView Q{q}, K{k}, V{v};

  parallel_for(B * nh, grain_for(T * T * hs), [&](int64_t t0, int64_t t1) {
    std::vector<float> key_t(hs * T);  // this head's keys, transposed: [hs, T]
    for (int64_t bh = t0; bh < t1; ++bh) {
      const int64_t b = bh / nh, h = bh % nh;
      const float *qh = Q.at(b, h), *kh = K.at(b, h), *vh = V.at(b, h);
      transpose_head(kh, K.row(), T, hs, key_t.data());
      float* P = weights.data() + bh * T * T;
      for (int64_t i = 0; i < T; ++i) {
        float* p = P + i * T;  // [T]; entries past i stay 0
        scores_row(qh + i * Q.row(), key_t.data(), i + 1, T, hs, scale, p);
        softmax_row(p, i + 1);
        float* yi = y.data() + b * y.strides()[0] + h * y.strides()[1] + i * y.strides()[2];
        for (int64_t d = 0; d < hs; ++d) yi[d] = 0.0f;
        for (int64_t j = 0; j <= i; ++j)
          for (int64_t d = 0; d < hs; ++d) yi[d] += p[j] * vh[j * V.row() + d];
      }
    }
  });

  // Backward, per head, with dY [T, hs]:
  //   dV = Pᵀ dY;  dP = dY Vᵀ;  dS = P ⊙ (dP - rowsum(P ⊙ dP));  dQ = dS K scale;  dK = dSᵀ Q scale.
  y = attach(y, "causal_attention", {q, k, v}, [q, k, v, weights, scale](const Tensor&, const Tensor& g) {
    const int64_t B = q.size(0), nh = q.size(1), T = q.size(2), hs = q.size(3);
    float* dq = grad_sink(q);
    float* dk = grad_sink(k);
    float* dv = grad_sink(v);
    const HeadView Q{q}, K{k}, V{v};
    parallel_for(B * nh, grain_for(2 * T * T * hs), [&](int64_t t0, int64_t t1) {
      std::vector<float> ds(T), value_t(hs * T);
      for (int64_t bh = t0; bh < t1; ++bh) {
        const int64_t b = bh / nh, h = bh % nh, base = bh * T * hs;  // offset of head in the gradients
        const float *qh = Q.at(b, h), *kh = K.at(b, h), *vh = V.at(b, h);
        transpose_head(vh, V.row(), T, hs, value_t.data());
        const float* P = weights.data() + bh * T * T;
        const float* gh = g.data() + bh * T * hs;  // the gradient is contiguous [B, nh, T, hs]
        for (int64_t i = 0; i < T; ++i) {
          const float* p = P + i * T;
          const float* gi = gh + i * hs;
          scores_row(gi, value_t.data(), i + 1, T, hs, 1.0f, ds.data());  // dP[i, j] = dY_i · V_j
          float row_dot = 0.0f;
          for (int64_t j = 0; j <= i; ++j) row_dot += p[j] * ds[j];
          for (int64_t j = 0; j <= i; ++j) {
            ds[j] = p[j] * (ds[j] - row_dot) * scale;
            if (dv)
              for (int64_t d = 0; d < hs; ++d) dv[base + j * hs + d] += p[j] * gi[d];
            if (dq)
              for (int64_t d = 0; d < hs; ++d) dq[base + i * hs + d] += ds[j] * kh[j * K.row() + d];
            if (dk)
              for (int64_t d = 0; d < hs; ++d) dk[base + j * hs + d] += ds[j] * qh[i * Q.row() + d];
          }
        }
      }
    });
  });
  return {y, weights};
}

}  // namespace tinygpt
