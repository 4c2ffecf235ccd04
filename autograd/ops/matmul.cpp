// Matmul over the last two axes with broadcast batch axes. Forward and backward are all gemm calls:
//   C = A · B,   dA += dC · Bᵀ,   dB += Aᵀ · dC     (transposes are stride swaps, never copies)
#include <fmt/format.h>

#include <stdexcept>

#include "../graph.h"
#include "../kernels/gemm.h"
#include "../ops.h"
#include "../detail/bf16_operands.h"
#include "../detail/profile.h"

namespace tinygpt {

namespace {

// gemm packs its operands from any strides, so every operand is read in place.
MatrixView matrix_at(const Tensor& t, int64_t offset) {
  return {t.data() + offset, t.strides()[t.dim() - 2], t.strides()[t.dim() - 1]};
}

// Whether the batch axes of a [..., M, K] tensor and its M axis walk memory as one axis of rows,
// so that a product with an unbatched B is a single tall gemm.
bool rows_fold(const Tensor& a) {
  for (int64_t d = 0; d + 2 < a.dim(); ++d)
    if (a.strides()[d] != a.shape()[d + 1] * a.strides()[d + 1]) return false;
  return a.strides()[a.dim() - 1] == 1;
}

struct BatchPlan {
  Shape batch;            // broadcast batch shape
  Strides a_strides, b_strides;  // batch strides of each operand (0 where broadcast)
  Strides a_grad, b_grad;        // the same in each operand's contiguous gradient layout
};

BatchPlan plan_batches(const Tensor& a, const Tensor& b) {
  Shape ab(a.shape().begin(), a.shape().end() - 2), bb(b.shape().begin(), b.shape().end() - 2);
  BatchPlan p;
  p.batch = broadcast_shapes(ab, bb, "matmul (batch axes)");
  Strides as(a.strides().begin(), a.strides().end() - 2), bs(b.strides().begin(), b.strides().end() - 2);
  Strides ag = contiguous_strides(a.shape()), bg = contiguous_strides(b.shape());
  p.a_strides = broadcast_strides(ab, as, p.batch);
  p.b_strides = broadcast_strides(bb, bs, p.batch);
  p.a_grad = broadcast_strides(ab, Strides(ag.begin(), ag.end() - 2), p.batch);
  p.b_grad = broadcast_strides(bb, Strides(bg.begin(), bg.end() - 2), p.batch);
  return p;
}

int64_t batch_offset(const Shape& batch, const Strides& strides, int64_t index) {
  int64_t offset = 0;
  for (int64_t d = static_cast<int64_t>(batch.size()) - 1; d >= 0; --d) {
    offset += (index % batch[d]) * strides[d];
    index /= batch[d];
  }
  return offset;
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  OpTimer timer("matmul");
  if (a.dim() < 2 || b.dim() < 2)
    throw std::invalid_argument(fmt::format("matmul: operands need at least 2 axes, got {} @ {}",
                                            to_string(a.shape()), to_string(b.shape())));
  const int64_t M = a.size(-2), K = a.size(-1), N = b.size(-1);
  if (b.size(-2) != K)
    throw std::invalid_argument(fmt::format("matmul: inner dimensions differ: {} @ {}", to_string(a.shape()),
                                            to_string(b.shape())));
  BatchPlan plan = plan_batches(a, b);
  Shape out_shape = plan.batch;
  out_shape.push_back(M);
  out_shape.push_back(N);
  Tensor out = Tensor::empty(out_shape);
  const int64_t batches = numel(plan.batch);
  const Precision precision = matmul_precision();  // backward multiplies as forward did

  if (b.dim() == 2 && rows_fold(a)) {  // [..., M, K] @ [K, N]: one gemm over all rows
    const int64_t rows = batches * M;
    MatrixView av{a.data(), a.strides()[a.dim() - 2], 1};
    gemm(rows, N, K, av, matrix_at(b, 0), out.data(), N, false, nullptr, precision);
    return attach(out, "matmul", {a, b}, [a, b, rows, N, K, av, precision](const Tensor&, const Tensor& g) {
      MatrixView gv{g.data(), N, 1};
      bool fresh = false;
      if (float* da = grad_sink(a, fresh))
        gemm(rows, K, N, gv, matrix_at(b, 0).transposed(), da, K, !fresh, nullptr, precision);
      if (float* db = grad_sink(b, fresh)) gemm(K, N, rows, av.transposed(), gv, db, N, !fresh, nullptr, precision);
    });
  }

  for (int64_t i = 0; i < batches; ++i)
    gemm(M, N, K, matrix_at(a, batch_offset(plan.batch, plan.a_strides, i)),
         matrix_at(b, batch_offset(plan.batch, plan.b_strides, i)), out.data() + i * M * N, N, false, nullptr, precision);
  return attach(out, "matmul", {a, b}, [a, b, plan, batches, M, N, K, precision](const Tensor&, const Tensor& g) {
    float* da = grad_sink(a);
    float* db = grad_sink(b);
    for (int64_t i = 0; i < batches; ++i) {  // in order: broadcast operands sum their batches
      MatrixView gv{g.data() + i * M * N, N, 1};
      MatrixView av = matrix_at(a, batch_offset(plan.batch, plan.a_strides, i));
      MatrixView bv = matrix_at(b, batch_offset(plan.batch, plan.b_strides, i));
      if (da) gemm(M, K, N, gv, bv.transposed(), da + batch_offset(plan.batch, plan.a_grad, i), K, true, nullptr, precision);
      if (db) gemm(K, N, M, av.transposed(), gv, db + batch_offset(plan.batch, plan.b_grad, i), N, true, nullptr, precision);
    }
  });
}

Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias) {
  return linear(input, weight, bias, Readers::anyone);
}

Tensor linear(const Tensor& input, const Tensor& weight_in, const Tensor& bias, Readers readers) {
  OpTimer timer("linear");
  if (input.dim() < 2 || weight_in.dim() != 2 || input.size(-1) != weight_in.size(1) ||
      (bias.defined() && bias.shape() != Shape{weight_in.size(0)}))
    throw std::invalid_argument(fmt::format("linear: input {} does not fit weight {} and bias {}",
                                            to_string(input.shape()), to_string(weight_in.shape()),
                                            bias.defined() ? to_string(bias.shape()) : "(none)"));
  const Tensor x = rows_fold(input) ? input : input.contiguous();
  const Tensor w = weight_in.contiguous();
  const int64_t in = w.size(1), out = w.size(0), rows = x.numel() / in;
  Shape shape = x.shape();
  shape.back() = out;
  Tensor y = Tensor::empty(shape);
  // x stored for products (precision.h's Readers) is read as it is, in the forward and for dW.
  const MatrixView xv{x.data(), x.strides()[x.dim() - 2], 1, detail::bf16_exact(x)};
  const MatrixView wt{w.data(), 1, in};  // Wᵀ [in, out], read in place
  const Precision precision = matmul_precision();  // backward multiplies as forward did
  const bool round_y = detail::stores_rounded(readers);
  gemm(rows, out, in, xv, wt, y.data(), out, false, bias.defined() ? bias.data() : nullptr, precision, {},
       round_y ? StoreC::rounded : StoreC::as_is);  // x Wᵀ + b
  if (round_y) detail::mark_bf16_exact(y);
  //   dx += dy W;   dW += dyᵀ x;   db += column sums of dy, the row sums of dW's A = dyᵀ (in float;
  //   the native bf16 GEMM adds them up while it rounds dyᵀ, instead of a pass of their own over dy)
  return attach(y, "linear", {x, w, bias}, [x, w, bias, xv, rows, in, out, precision](const Tensor&, const Tensor& g) {
    const MatrixView gv{g.data(), out, 1};
    // bf16 on the float kernels: dy rounded once, read in place by both products (each would pack
    // and round a copy of it), in the pass that sums dy as it is for the bias gradient. Rounded
    // into its own buffer where nothing else reads it (no fresh memory to fetch), else a copy.
    const bool round_once = precision == Precision::bf16 && !bf16_native();
    bool db_fresh = false;
    float* db = grad_sink(bias, db_fresh);
    const RowSums bias_grad{db, !db_fresh};
    const bool in_place = round_once && may_overwrite(g);
    Buffer copy(round_once && !in_place ? rows * out : 0);
    float* rounded = in_place ? g.data() : copy.data();
    if (round_once) column_sums(g.data(), rows, out, bias_grad, rounded);
    const MatrixView dy = round_once ? MatrixView{rounded, out, 1, true} : gv;
    bool fresh = false;  // a gradient made just now is written, not added to
    if (float* dx = grad_sink(x, fresh)) gemm(rows, in, out, dy, {w.data(), in, 1}, dx, in, !fresh, nullptr, precision);
    bool dw_fresh = false;
    float* dw = grad_sink(w, dw_fresh);
    const RowSums dw_sums = round_once ? RowSums{} : bias_grad;  // the bias gradient where not made above
    if (dw) gemm(out, in, rows, dy.transposed(), xv, dw, in, !dw_fresh, nullptr, precision, dw_sums);
    else row_sums(out, rows, gv.transposed(), dw_sums);
  });
}

}  // namespace tinygpt
