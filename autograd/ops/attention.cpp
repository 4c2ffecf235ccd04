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
#include "autograd/kernels/small_gemm.h"
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

// Queries are handled kRows at a time: a block of rows sees keys 0 .. (last row), so the products
// below skip the masked future block by block (about half of the work for long contexts).
constexpr int64_t kRows = 16;

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
  Tensor weights = Tensor::empty({B, nh, T, T});  // every entry is written below
  const HeadView Q{q}, K{k}, V{v};

  Buffer keys_t(max_slots() * hs * T);  // per thread: a head's keys, transposed [hs, T]
  parallel_for_slots(B * nh, grain_for(T * T * hs), [&](int slot, int64_t t0, int64_t t1) {
    float* key_t = keys_t.data() + slot * hs * T;
    for (int64_t bh = t0; bh < t1; ++bh) {
      const int64_t b = bh / nh, h = bh % nh;
      const float *qh = Q.at(b, h), *kh = K.at(b, h), *vh = V.at(b, h);
      transpose_head(kh, K.row(), T, hs, key_t);
      float* P = weights.data() + bh * T * T;  // [T, T]
      float* yh = y.data() + b * y.strides()[0] + h * y.strides()[1];
      const int64_t y_row = y.strides()[2];
      for (int64_t i0 = 0; i0 < T; i0 += kRows) {
        const int64_t rows = std::min(kRows, T - i0), n = i0 + rows;  // keys the block can see
        // scores = Q Kᵀ / sqrt(hs), written straight into the weights' rows
        small_gemm({rows, n, hs, qh + i0 * Q.row(), Q.row(), 1, key_t, T, P + i0 * T, T, scale});
        for (int64_t i = i0; i < n; ++i) {  // causal softmax: query i sees keys 0..i, the rest is 0
          softmax_row(P + i * T, i + 1);
          std::fill(P + i * T + i + 1, P + (i + 1) * T, 0.0f);
        }
        // y = P V
        small_gemm({rows, hs, n, P + i0 * T, T, 1, vh, V.row(), yh + i0 * y_row, y_row});
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
    Buffer scratch(max_slots() * (T * T + hs * T));  // per thread: dS [T, T] and Vᵀ [hs, T]
    parallel_for_slots(B * nh, grain_for(2 * T * T * hs), [&](int slot, int64_t t0, int64_t t1) {
      float* dS = scratch.data() + slot * (T * T + hs * T);
      float* value_t = dS + T * T;
      for (int64_t bh = t0; bh < t1; ++bh) {
        const int64_t b = bh / nh, h = bh % nh, base = bh * T * hs;  // offset of head in the gradients
        const float *qh = Q.at(b, h), *kh = K.at(b, h), *vh = V.at(b, h);
        transpose_head(vh, V.row(), T, hs, value_t);
        const float* P = weights.data() + bh * T * T;
        const float* gh = g.data() + bh * T * hs;  // the gradient is contiguous [B, nh, T, hs]
        for (int64_t i0 = 0; i0 < T; i0 += kRows) {
          const int64_t rows = std::min(kRows, T - i0), n = i0 + rows;
          float* ds = dS + i0 * T;
          small_gemm({rows, n, hs, gh + i0 * hs, hs, 1, value_t, T, ds, T});  // dP = dY Vᵀ
          for (int64_t i = i0; i < n; ++i) {  // dS = P (dP - rowsum(P dP)) scale; 0 past the diagonal
            const float* p = P + i * T;
            float* dsr = dS + i * T;
            float row_dot = 0.0f;
            for (int64_t j = 0; j <= i; ++j) row_dot += p[j] * dsr[j];
            for (int64_t j = 0; j < n; ++j) dsr[j] = j <= i ? p[j] * (dsr[j] - row_dot) * scale : 0.0f;
          }
          if (dq) small_gemm({rows, hs, n, ds, T, 1, kh, K.row(), dq + base + i0 * hs, hs, 1.0f, true});  // dQ += dS K
        }
        for (int64_t j0 = 0; j0 < T; j0 += kRows) {  // keys j0.. are seen by queries j0..T-1
          const int64_t rows = std::min(kRows, T - j0), k = T - j0;
          // dK += dSᵀ Q and dV += Pᵀ dY: the transposes are stride swaps
          if (dk)
            small_gemm({rows, hs, k, dS + j0 * T + j0, 1, T, qh + j0 * Q.row(), Q.row(), dk + base + j0 * hs, hs,
                        1.0f, true});
          if (dv) small_gemm({rows, hs, k, P + j0 * T + j0, 1, T, gh + j0 * hs, hs, dv + base + j0 * hs, hs, 1.0f, true});
        }
      }
    });
  });
  return {y, weights};
}

}  // namespace tinygpt
