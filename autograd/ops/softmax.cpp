// Softmax and log-softmax over the last axis. Both subtract the row maximum first, so large
// logits never overflow: softmax(x)_j = exp(x_j - m) / sum_k exp(x_k - m), m = max_k x_k.
#include <algorithm>
#include <cmath>

#include "../graph.h"
#include "../inference.h"
#include "../kernels/rows.h"
#include "../ops.h"
#include "../detail/profile.h"
#include "../elementary.h"

namespace tinygpt {

void softmax_row(const float* x, int64_t n, float* y) {
  const float m = *std::max_element(x, x + n);
  float s = 0.0f;
  for (int64_t j = 0; j < n; ++j) s += (y[j] = vector_exp(x[j] - m));
  const float inv = 1.0f / s;
  for (int64_t j = 0; j < n; ++j) y[j] *= inv;
}

Tensor softmax(const Tensor& input) {
  OpTimer timer("softmax");
  const Tensor x = input.contiguous();
  const int64_t cols = x.dim() ? x.shape().back() : 1, rows = cols ? x.numel() / cols : 0;
  Tensor out = Tensor::empty(x.shape());
  for_rows(rows, cols, [&](int64_t r) { softmax_row(x.data() + r * cols, cols, out.data() + r * cols); });
  // dx_j = y_j (g_j - sum_k g_k y_k)
  return attach(out, "softmax", {x}, [x, rows, cols](const Tensor& y, const Tensor& g) {
    float* sink = grad_sink(x);
    if (!sink) return;
    for_rows(rows, cols, [&](int64_t r) {
      const float *yr = y.data() + r * cols, *gr = g.data() + r * cols;
      float dot = 0.0f;
      for (int64_t j = 0; j < cols; ++j) dot += gr[j] * yr[j];
      for (int64_t j = 0; j < cols; ++j) sink[r * cols + j] += yr[j] * (gr[j] - dot);
    });
  });
}

Tensor log_softmax(const Tensor& input) {
  OpTimer timer("log_softmax");
  const Tensor x = input.contiguous();
  const int64_t cols = x.dim() ? x.shape().back() : 1, rows = cols ? x.numel() / cols : 0;
  Tensor out = Tensor::empty(x.shape());
  for_rows(rows, cols, [&](int64_t r) {
    const float* xr = x.data() + r * cols;
    const RowLogSumExp l = row_log_sum_exp(xr, cols);
    for (int64_t j = 0; j < cols; ++j) out.data()[r * cols + j] = (xr[j] - l.max) - l.log_sum;
  });
  // dx_j = g_j - exp(y_j) sum_k g_k
  return attach(out, "log_softmax", {x}, [x, rows, cols](const Tensor& y, const Tensor& g) {
    float* sink = grad_sink(x);
    if (!sink) return;
    for_rows(rows, cols, [&](int64_t r) {
      const float *yr = y.data() + r * cols, *gr = g.data() + r * cols;
      float total = 0.0f;
      for (int64_t j = 0; j < cols; ++j) total += gr[j];
      for (int64_t j = 0; j < cols; ++j) sink[r * cols + j] += gr[j] - vector_exp(yr[j]) * total;
    });
  });
}

namespace {
template <class Last>
Tensor along(const Tensor& x, int64_t axis, const char* op, const Last& last) {
  const int a = normalize_axis(axis, x.dim(), op);
  if (a == x.dim() - 1) return last(x);
  return last(x.transpose(a, -1).contiguous()).transpose(a, -1);
}
}  // namespace

Tensor softmax(const Tensor& x, int64_t axis) {
  return along(x, axis, "softmax", [](const Tensor& t) { return softmax(t); });
}

Tensor log_softmax(const Tensor& x, int64_t axis) {
  return along(x, axis, "log_softmax", [](const Tensor& t) { return log_softmax(t); });
}

}  // namespace tinygpt
