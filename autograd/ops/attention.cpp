// Causal scaled-dot-product attention, one task per (batch row, head):
//   scores  S = Q Kᵀ / sqrt(hs)          [T, T]
//   mask    S[i, j] = -inf for key j > query i (a token never sees its future)
//   weights P = softmax over keys of S    (row i has i + 1 non-zero entries)
//   output  Y = P V                       [T, hs]
// Backward needs P. Below T = 512 the forward keeps it ([B, nh, T, T], also shown by `tinygpt
// attention`); from there on (tiled) backward recomputes it one block of query rows at a time with
// the forward's own code, so the extra memory per thread is two strips of kRows x T (and a head's
// packed operands, as in every mode).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "../graph.h"
#include "../elementary.h"
#include "../kernels/rows.h"
#include "../kernels/pack.h"
#include "../kernels/simd.h"
#include "../kernels/small_gemm.h"
#include "../ops.h"
#include "../kernels/parallel.h"
#include "../precision.h"
#include "../detail/bf16_operands.h"
#include "../detail/profile.h"

namespace tinygpt {

namespace {

// Where head (b, h) of a [B, nh, T, hs] tensor with unit last stride starts, and its row stride.
struct HeadView {
  const Tensor& t;
  const float* at(int64_t b, int64_t h) const { return t.data() + b * t.strides()[0] + h * t.strides()[1]; }
  int64_t row() const { return t.strides()[2]; }
};

Tensor unit_last_stride(const Tensor& t) { return t.strides()[3] == 1 ? t : t.contiguous(); }

// Where head (b, h) of a gradient laid out as [B, nh, T, hs] (or inside [B, T, 3C]) starts, and
// its row stride. Null data: no gradient wanted. Fresh: an unwritten buffer, which the backward
// with kept weights writes (=) instead of adding to (it makes each element in one product).
template <class F>
struct GradHeads {
  F* data;
  int64_t batch, head, row;
  bool fresh = false;
  F* at(int64_t b, int64_t h) const { return data + b * batch + h * head; }
};
// A contiguous [B, nh, T, hs] buffer.
template <class F>
GradHeads<F> contiguous_heads(F* data, int64_t nh, int64_t T, int64_t hs, bool fresh = false) {
  return {data, nh * T * hs, T * hs, hs, fresh};
}

// One head's [T, hs] rows (`row` floats apart), packed as small_gemm's B in `form` (float, or
// bf16 under --precision bf16): as they are (rows of B: keys or queries) or transposed (columns
// of B: Kᵀ, Vᵀ). exact: the values are bfloat16 already (packed as they are in the rounded form).
SmallB head_rows(const float* x, int64_t row, int64_t T, int64_t hs, float* out, SmallForm form, bool exact = false) {
  return packed({x, row, 1, exact}, T, hs, out, form);
}
SmallB head_transposed(const float* x, int64_t row, int64_t T, int64_t hs, float* out, SmallForm form,
                       bool exact = false) {
  return packed({x, 1, row, exact}, hs, T, out, form);
}
// Floats of either packing of one head.
int64_t head_panels(int64_t T, int64_t hs) { return std::max(packed_b_size(T, hs), packed_b_size(hs, T)); }

// Queries are handled kRows at a time: a block of rows sees keys 0 .. (last row), so the products
// below skip the masked future block by block (about half of the work for long contexts). Two of
// small_gemm's register tiles of rows, with no short third tile.
constexpr int64_t kRows = 2 * simd::MR;
static_assert(kRows % 2 == 0, "bf16 pairs: B's rows are skipped in pairs (SmallB::from_row)");

// p[0..n) = softmax(p[0..n)), with the maximum taken out first; and, for the rounded bf16 form's
// P V, rounded to bfloat16 into `rounded` (which may be p; null: not wanted) as it is stored.
void softmax_row(float* p, int64_t n, float* rounded) {
  const float m = row_max(p, n);
  // Each exp summed as it is stored: row_sum's lanes and order, one pass fewer.
  const float sum = sum_in_lanes<float>(0, n, [p, m](int64_t j) { return p[j] = vector_exp(p[j] - m); });
  const float inv = 1.0f / sum;
  if (!rounded) {
    for (int64_t j = 0; j < n; ++j) p[j] *= inv;
    return;
  }
  using namespace simd;
  const vfloat times = broadcast(&inv);
  by_blocks_of_4(
      n,
      [p, rounded, times](int64_t j) {
        vfloat w[4];
        for (int k = 0; k < 4; ++k) store(p + j + k * kLanes, w[k] = load(p + j + k * kLanes) * times);
        round_bf16_x4(w);
        for (int k = 0; k < 4; ++k) store(rounded + j + k * kLanes, w[k]);
      },
      [p, rounded, times](int64_t j, int lanes) {
        const vfloat w = load_n(p + j, lanes) * times;
        store_n(p + j, w, lanes);
        store_n(rounded + j, round_bf16(w), lanes);
      });
}

// One block of query rows [i0, i0 + rows) of a head of T queries: the scores strip S = Q Kᵀ / sqrt(hs)
// over the keys the block can see (0 .. i0 + rows), the causal softmax of each row in place, and 0
// past the diagonal up to key zero_to (>= i0 + rows; T where the whole row is read later), so that
// P[r, j] (row r = query i0 + r, T floats apart) holds the weights; `rounded` (null, P, or a strip
// like P's) their bfloat16 roundings up to key i0 + rows.
// Forward and the tiled backward both call this: the recomputed weights are the forward's bits.
// q_exact: the queries are bfloat16 already (read as they are in the rounded form).
void weights_strip(const float* qh, int64_t q_row, SmallB key_t, int64_t T, int64_t hs, float scale, int64_t i0,
                   int64_t rows, float* P, int64_t zero_to, float* rounded, bool q_exact) {
  const int64_t n = i0 + rows;
  small_gemm({rows, n, hs, qh + i0 * q_row, q_row, 1, key_t, P, T, scale, false, q_exact});
  // The next block's queries, requested from memory while the softmax runs: short lines of hs
  // values that the hardware prefetcher misses.
  if (n < T) request_lines(qh + n * q_row, q_row, std::min(rows, T - n), hs);
  for (int64_t r = 0; r < rows; ++r) {  // query i0 + r sees keys 0 .. i0 + r
    softmax_row(P + r * T, i0 + r + 1, rounded ? rounded + r * T : nullptr);
    std::fill(P + r * T + i0 + r + 1, P + r * T + zero_to, 0.0f);
    if (rounded) std::fill(rounded + r * T + i0 + r + 1, rounded + r * T + n, 0.0f);
  }
}

// dS = P ⊙ (dP - rowsum(P ⊙ dP)) · scale for a strip, in place of dP; 0 past the diagonal. dS
// feeds only the products dQ = dS K and dK = dSᵀ Q: in the rounded bf16 form (P_rounded not null)
// it is rounded as it is made, so that those read it in place, and so is P, into P_rounded (which
// may be P itself), for dV = Pᵀ dY.
void score_gradient_strip(const float* P, float* dS, int64_t i0, int64_t rows, int64_t ld, float scale,
                          float* P_rounded) {
  const int64_t n = i0 + rows;
  for (int64_t r = 0; r < rows; ++r) {
    const float* p = P + r * ld;
    float* ds = dS + r * ld;
    const int64_t seen = i0 + r + 1;
    const float dot = row_dot(p, ds, seen);
    if (!P_rounded) {
      for (int64_t j = 0; j < n; ++j) ds[j] = j < seen ? p[j] * (ds[j] - dot) * scale : 0.0f;
      continue;
    }
    float* pr = P_rounded + r * ld;
    using namespace simd;
    const vfloat minus = broadcast(&dot), times = broadcast(&scale);
    by_blocks_of_4(  // the scalar line's arithmetic, lane by lane
        seen,
        [&](int64_t j) {
          vfloat w[4], g[4];
          for (int k = 0; k < 4; ++k) {
            w[k] = load(p + j + k * kLanes);
            g[k] = w[k] * (load(ds + j + k * kLanes) - minus) * times;
          }
          round_bf16_x4(w);
          round_bf16_x4(g);
          for (int k = 0; k < 4; ++k) store(ds + j + k * kLanes, g[k]), store(pr + j + k * kLanes, w[k]);
        },
        [&](int64_t j, int lanes) {
          const vfloat w = load_n(p + j, lanes);
          const vfloat g = w * (load_n(ds + j, lanes) - minus) * times;
          store_n(ds + j, round_bf16(g), lanes);
          store_n(pr + j, round_bf16(w), lanes);
        });
    std::fill(ds + seen, ds + n, 0.0f);
    std::fill(pr + seen, pr + n, 0.0f);  // P is 0 there
  }
}

// Per head (b, h) with dY [T, hs], kept weights P [T, T]:
//   dP = dY Vᵀ;  dS = P ⊙ (dP - rowsum(P ⊙ dP)) / sqrt(hs);  dQ = dS K;  dK = dSᵀ Q;  dV = Pᵀ dY.
// Query blocks make dS and dQ; then key blocks take dK and dV from whole columns of dS and P.
struct AttentionBackward {
  Tensor q, k, v;
  float scale;
  SmallForm form;               // the forward's precision
  bool exact;                   // q, k and v are bfloat16 already (stored for products)
  GradHeads<float> dq, dk, dv;  // accumulated into, or written where fresh (kept weights only)
  GradHeads<const float> dy;    // the gradient of y

  // dP = dY Vᵀ for query rows [i0, i0 + rows) into ds (T floats apart). dY is read in place, or in
  // the rounded form from `grads`, its rounded packing for dV.
  void score_grads(const float* gh, SmallB grads, SmallB value_t, int64_t i0, int64_t rows, int64_t T,
                   float* ds) const {
    const int64_t n = i0 + rows, hs = q.size(3);
    if (form != SmallForm::rounded) return small_gemm({rows, n, hs, gh + i0 * dy.row, dy.row, 1, value_t, ds, T});
    const SmallA a = packed_rows(grads, i0);
    small_gemm({rows, n, hs, a.a, a.a_row, a.a_col, value_t, ds, T, 1.0f, false, true, a.a_panel});
  }

  // With the kept weights. Scratch: T x T (dS) + packed Vᵀ, K, Q and dY (+ T x T for the rounded
  // P in the rounded bf16 form). `first`: the first query head of its key/value head's group, the
  // one that writes a fresh dK and dV (the others add).
  void with_weights(int64_t bh, const float* P, float* scratch, bool first) const {
    const HeadView Q{q}, K{k}, V{v};
    const int64_t nh = q.size(1), T = q.size(2), hs = q.size(3), b = bh / nh, h = bh % nh;
    const int64_t kvh = h / (nh / k.size(1));  // the key/value head this query head reads
    const float* gh = dy.at(b, h);
    const int64_t g_row = dy.row, per = head_panels(T, hs);
    float *dS = scratch, *panels = dS + T * T;
    const SmallB value_t = head_transposed(V.at(b, kvh), V.row(), T, hs, panels, form, exact);
    const SmallB keys = head_rows(K.at(b, kvh), K.row(), T, hs, panels + per, form, exact);
    const SmallB queries = head_rows(Q.at(b, h), Q.row(), T, hs, panels + 2 * per, form, exact);
    const SmallB grads = head_rows(gh, g_row, T, hs, panels + 3 * per, form);
    const bool rounded = form == SmallForm::rounded;
    float* P_rounded = panels + 4 * per;
    for (int64_t i0 = 0; i0 < T; i0 += kRows) {
      const int64_t rows = std::min(kRows, T - i0), n = i0 + rows;
      float* ds = dS + i0 * T;
      score_grads(gh, grads, value_t, i0, rows, T, ds);
      score_gradient_strip(P + i0 * T, ds, i0, rows, T, scale, rounded ? P_rounded + i0 * T : nullptr);
      if (dq.data)  // dQ += dS K
        small_gemm({rows, hs, n, ds, T, 1, keys, dq.at(b, h) + i0 * dq.row, dq.row, 1.0f, !dq.fresh, true});
    }
    for (int64_t j0 = 0; j0 < T; j0 += kRows) {  // keys j0.. are seen by queries j0..T-1
      const int64_t rows = std::min(kRows, T - j0), k = T - j0;
      // dK += dSᵀ Q and dV += Pᵀ dY: the transposes are stride swaps
      if (dk.data)
        small_gemm({rows, hs, k, dS + j0 * T + j0, 1, T, queries.from_row(j0), dk.at(b, kvh) + j0 * dk.row, dk.row,
                    1.0f, !(dk.fresh && first), true});
      if (dv.data)
        small_gemm({rows, hs, k, (rounded ? P_rounded : P) + j0 * T + j0, 1, T, grads.from_row(j0),
                    dv.at(b, kvh) + j0 * dv.row, dv.row, 1.0f, !(dv.fresh && first), rounded});
    }
  }

  // Tiled: each block of query rows recomputes its strip of P from Q and K (the forward's bits),
  // then adds its share to dQ, dK and dV. Scratch: 2 strips of kRows x T (P, dS) + packed Kᵀ, Vᵀ,
  // K, Q and dY.
  void tiled(int64_t bh, float* scratch) const {
    const HeadView Q{q}, K{k}, V{v};
    const int64_t nh = q.size(1), T = q.size(2), hs = q.size(3), b = bh / nh, h = bh % nh;
    const int64_t kvh = h / (nh / k.size(1));
    const float* gh = dy.at(b, h);
    const int64_t g_row = dy.row, per = head_panels(T, hs);
    float *P = scratch, *dS = P + kRows * T, *panels = dS + kRows * T;
    const SmallB key_t = head_transposed(K.at(b, kvh), K.row(), T, hs, panels, form, exact);
    const SmallB value_t = head_transposed(V.at(b, kvh), V.row(), T, hs, panels + per, form, exact);
    const SmallB keys = head_rows(K.at(b, kvh), K.row(), T, hs, panels + 2 * per, form, exact);
    const SmallB queries = head_rows(Q.at(b, h), Q.row(), T, hs, panels + 3 * per, form, exact);
    const SmallB grads = head_rows(gh, g_row, T, hs, panels + 4 * per, form);
    for (int64_t i0 = 0; i0 < T; i0 += kRows) {
      const int64_t rows = std::min(kRows, T - i0), n = i0 + rows;
      weights_strip(Q.at(b, h), Q.row(), key_t, T, hs, scale, i0, rows, P, n, nullptr, exact);
      score_grads(gh, grads, value_t, i0, rows, T, dS);
      // P is rounded in place: dV's only
      score_gradient_strip(P, dS, i0, rows, T, scale, form == SmallForm::rounded ? P : nullptr);
      if (dq.data)  // dQ += dS K
        small_gemm({rows, hs, n, dS, T, 1, keys, dq.at(b, h) + i0 * dq.row, dq.row, 1.0f, true, true});
      if (dk.data)  // dK += dSᵀ Q
        small_gemm({n, hs, rows, dS, 1, T, queries.from_row(i0), dk.at(b, kvh), dk.row, 1.0f, true, true});
      if (dv.data)  // dV += Pᵀ dY
        small_gemm({n, hs, rows, P, 1, T, grads.from_row(i0), dv.at(b, kvh), dv.row, 1.0f, true, true});
    }
  }
  int64_t weights_scratch(int64_t T, int64_t hs) const {
    return (form == SmallForm::rounded ? 2 : 1) * T * T + 4 * head_panels(T, hs);
  }
  static int64_t tiled_scratch(int64_t T, int64_t hs) { return 2 * kRows * T + 5 * head_panels(T, hs); }
};

}  // namespace

namespace {

// The forward pass for q, k, v [B, nh, T, hs] with unit last stride: y [B, nh, T, hs] stored as
// [B, T, nh, hs] (y_storage; rounded to bfloat16 where round_y), and the weights unless tiled.
// exact: q, k and v are bfloat16 already.
struct AttentionForward {
  Tensor y_storage, y, weights;
};
AttentionForward attend(const Tensor& q, const Tensor& k, const Tensor& v, float scale, bool tiled, SmallForm form,
                        bool exact, bool round_y = false) {
  const int64_t B = q.size(0), nh = q.size(1), T = q.size(2), hs = q.size(3);
  // y lives in [B, T, nh, hs] order: merging heads back into [B, T, C] is then a free view.
  AttentionForward out;
  out.y_storage = Tensor::empty({B, T, nh, hs});
  out.y = make_view(out.y_storage, {B, nh, T, hs}, {T * nh * hs, hs, nh * hs, 1}, 0);
  if (!tiled) out.weights = Tensor::empty({B, nh, T, T});  // every entry is written below
  const HeadView Q{q}, K{k}, V{v};

  // Per thread: a head's keys transposed and its values, packed; one strip of weights where they
  // are not kept (tiled), or of their roundings where they are kept in the rounded bf16 form.
  const bool rounded = form == SmallForm::rounded;
  const int64_t per = head_panels(T, hs), share = 2 * per + (tiled || rounded ? kRows * T : 0);
  SlotScratch scratch(share);
  parallel_for_slots(B * nh, grain_for(T * T * hs), [&](int slot, int64_t t0, int64_t t1) {
    float *panels = scratch[slot], *strip = panels + 2 * per;
    simd::fused([&] {  // the softmax's exps as fma instructions in every build
      for (int64_t bh = t0; bh < t1; ++bh) {
        const int64_t b = bh / nh, h = bh % nh, kvh = h / (nh / k.size(1));  // query head h reads key/value head kvh
        const float* qh = Q.at(b, h);
        const SmallB key_t = head_transposed(K.at(b, kvh), K.row(), T, hs, panels, form, exact);
        const SmallB values = head_rows(V.at(b, kvh), V.row(), T, hs, panels + per, form, exact);
        float* yh = out.y.data() + b * out.y.strides()[0] + h * out.y.strides()[1];
        const int64_t y_row = out.y.strides()[2];
        for (int64_t i0 = 0; i0 < T; i0 += kRows) {
          const int64_t rows = std::min(kRows, T - i0), n = i0 + rows;  // keys the block can see
          float* P = tiled ? strip : out.weights.data() + bh * T * T + i0 * T;
          // The kept weights are read whole (inspection): 0 past the block's keys too.
          float* P_rounded = rounded ? strip : nullptr;  // tiled: P itself
          weights_strip(qh, Q.row(), key_t, T, hs, scale, i0, rows, P, tiled ? n : T, P_rounded, exact);
          small_gemm({rows, hs, n, rounded ? P_rounded : P, T, 1, values, yh + i0 * y_row, y_row, 1.0f, false,
                      rounded, 0, round_y});  // y = P V
        }
      }
    });
  });
  return out;
}

// Runs the backward in parallel over key/value heads: the query heads that share one (grouped-query
// attention) add to its dK and dV one after another, in order, so the sums never depend on threads.
void run_backward(const AttentionBackward& bw, const Tensor& weights, bool tiled) {
  const int64_t B = bw.q.size(0), nh = bw.q.size(1), T = bw.q.size(2), hs = bw.q.size(3);
  const int64_t n_kv = bw.k.size(1), group = nh / n_kv;
  const int64_t share = tiled ? AttentionBackward::tiled_scratch(T, hs) : bw.weights_scratch(T, hs);
  SlotScratch scratch(share);
  parallel_for_slots(B * n_kv, grain_for(2 * T * T * hs * group), [&](int slot, int64_t t0, int64_t t1) {
    float* mine = scratch[slot];
    simd::fused([&] {  // the recomputed softmax's exps as fma instructions in every build
      for (int64_t task = t0; task < t1; ++task) {
        const int64_t b = task / n_kv, first_head = task % n_kv * group;
        for (int64_t h = first_head; h < first_head + group; ++h) {
          const int64_t bh = b * nh + h;
          if (tiled) bw.tiled(bh, mine);
          else bw.with_weights(bh, weights.data() + bh * T * T, mine, h == first_head);
        }
      }
    });
  });
}

}  // namespace

AttentionResult causal_attention(const Tensor& query_in, const Tensor& key_in, const Tensor& value_in,
                                 AttentionMemory memory) {
  OpTimer timer("causal_attention");
  const bool shapes_fit = query_in.dim() == 4 && key_in.dim() == 4 && value_in.shape() == key_in.shape() &&
                         key_in.size(0) == query_in.size(0) && key_in.size(1) > 0 &&
                         query_in.size(1) % key_in.size(1) == 0 && key_in.size(2) == query_in.size(2) &&
                         key_in.size(3) == query_in.size(3);
  if (!shapes_fit)
    throw std::invalid_argument(fmt::format("causal_attention: query [B, nh, T, hs] needs key and value [B, g, T, hs] "
                                            "with g dividing nh, got {}, {}, {}", to_string(query_in.shape()),
                                            to_string(key_in.shape()), to_string(value_in.shape())));
  const Tensor q = unit_last_stride(query_in), k = unit_last_stride(key_in), v = unit_last_stride(value_in);
  const float scale = 1.0f / std::sqrt(static_cast<float>(q.size(3)));
  const bool tiled = attention_is_tiled(memory, q.size(2));
  const SmallForm form = small_form(matmul_precision());  // backward multiplies as forward did
  // Operands stored rounded for products (for_products.h) are read as they are.
  const bool exact =
      form == SmallForm::rounded && detail::bf16_exact(q) && detail::bf16_exact(k) && detail::bf16_exact(v);
  AttentionForward f = attend(q, k, v, scale, tiled, form, exact);
  const AttentionBackward backward{q, k, v, scale, form, exact, {}, {}, {}, {}};
  Tensor y = attach(f.y, "causal_attention", {q, k, v}, [backward, weights = f.weights, tiled](const Tensor&,
                                                                                             const Tensor& g) {
    AttentionBackward bw = backward;
    const int64_t nh = bw.q.size(1), T = bw.q.size(2), hs = bw.q.size(3);
    // Fresh buffers are written, not added to, by the backward with kept weights (the tiled one adds
    // to dK and dV block by block). q, k and v may be one tensor: its first sink is the fresh one, and
    // dQ is made before dK, dK before dV.
    auto heads = [&](const Tensor& t) {
      bool fresh = false;
      float* sink = tiled ? grad_sink(t) : grad_sink(t, fresh);
      return contiguous_heads(sink, t.size(1), T, hs, fresh);
    };
    bw.dq = heads(bw.q);
    bw.dk = heads(bw.k);
    bw.dv = heads(bw.v);
    bw.dy = contiguous_heads<const float>(g.data(), nh, T, hs);  // the gradient is contiguous [B, nh, T, hs]
    run_backward(bw, weights, tiled);
  });
  return {y, f.weights};
}

AttentionResult causal_self_attention(const Tensor& qkv, int64_t n_head, int64_t n_kv_head, AttentionMemory memory) {
  return causal_self_attention(qkv, n_head, n_kv_head, memory, Readers::anyone);
}

AttentionResult causal_self_attention(const Tensor& qkv_in, int64_t n_head, int64_t n_kv_head, AttentionMemory memory,
                                      Readers readers) {
  OpTimer timer("causal_attention");
  const int64_t width = qkv_in.dim() == 3 ? qkv_in.size(2) : 0, parts = n_head + 2 * n_kv_head;
  if (qkv_in.dim() != 3 || n_head <= 0 || n_kv_head <= 0 || n_head % n_kv_head != 0 || width % parts != 0)
    throw std::invalid_argument(fmt::format("causal_self_attention: qkv must be [B, T, (n_head + 2 n_kv_head) hs] with "
                                            "n_kv_head dividing n_head, got {} for {} heads and {} key/value heads",
                                            to_string(qkv_in.shape()), n_head, n_kv_head));
  const Tensor qkv = qkv_in.contiguous();
  const int64_t B = qkv.size(0), T = qkv.size(1), hs = width / parts, C = n_head * hs, KV = n_kv_head * hs;
  // Query, key and value heads read in place: [B, heads, T, hs] views of [B, T, C + 2 KV] at
  // offsets 0, C and C + KV.
  auto heads = [&](int64_t count, int64_t at) {
    return make_view(qkv, {B, count, T, hs}, {T * width, hs, width, 1}, qkv.offset() + at);
  };
  const Tensor q = heads(n_head, 0), k = heads(n_kv_head, C), v = heads(n_kv_head, C + KV);
  const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
  const bool tiled = attention_is_tiled(memory, T);
  const SmallForm form = small_form(matmul_precision());  // backward multiplies as forward did
  const bool round_y = detail::stores_rounded(readers);
  const bool exact = form == SmallForm::rounded && detail::bf16_exact(qkv);  // a Linear's output for products
  AttentionForward f = attend(q, k, v, scale, tiled, form, exact, round_y);
  if (round_y) detail::mark_bf16_exact(f.y_storage);
  const Tensor y = make_view(f.y_storage, {B, T, C}, {T * C, C, 1}, 0);  // heads merged: [B, T, C]
  const AttentionBackward backward{q, k, v, scale, form, exact, {}, {}, {}, {}};
  Tensor out = attach(y, "causal_attention", {qkv}, [backward, qkv, weights = f.weights, tiled, C, KV](const Tensor&,
                                                                                                       const Tensor& g) {
    // The three gradients go straight into their places in [B, T, C + 2 KV]; a fresh buffer is
    // written (=) by the backward with kept weights, which makes every element in one product.
    bool fresh = false;
    float* dqkv = tiled ? grad_sink(qkv) : grad_sink(qkv, fresh);
    if (!dqkv) return;
    AttentionBackward bw = backward;
    const int64_t T = qkv.size(1), W = qkv.size(2), hs = bw.q.size(3);
    bw.dq = {dqkv, T * W, hs, W, fresh};
    bw.dk = {dqkv + C, T * W, hs, W, fresh};
    bw.dv = {dqkv + C + KV, T * W, hs, W, fresh};
    bw.dy = {g.data(), T * C, hs, C};  // the gradient is contiguous [B, T, C] = [B, T, nh, hs]
    run_backward(bw, weights, tiled);
  });
  return {out, f.weights};
}

}  // namespace tinygpt
