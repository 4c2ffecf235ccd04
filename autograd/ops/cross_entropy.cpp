// Fused cross-entropy from logits: loss = mean over rows of (logsumexp(x_r) - x_r[target_r]).
// Fusing avoids materializing the softmax: backward is (softmax(x_r) - onehot(target_r)) / count.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "../graph.h"
#include "../elementary.h"
#include "../kernels/rows.h"
#include "../ops.h"
#include "../detail/profile.h"

namespace tinygpt {

Tensor cross_entropy(const Tensor& logits, std::span<const int32_t> targets_in, int32_t ignore_index) {
  OpTimer timer("cross_entropy");
  if (logits.dim() < 1) throw std::invalid_argument("cross_entropy: logits must have a class axis");
  const Tensor x = logits.contiguous();
  const int64_t V = x.shape().back(), rows = V ? x.numel() / V : 0;
  if (static_cast<int64_t>(targets_in.size()) != rows)
    throw std::invalid_argument(fmt::format("cross_entropy: {} targets for logits of shape {} ({} rows)",
                                            targets_in.size(), to_string(x.shape()), rows));
  memory::Vector<int32_t> targets(targets_in.begin(), targets_in.end());
  int64_t count = 0;
  for (int64_t r = 0; r < rows; ++r) {
    if (targets[r] == ignore_index) continue;
    if (targets[r] < 0 || targets[r] >= V)
      throw std::out_of_range(fmt::format("cross_entropy: target {} at position {} is out of range for {} classes",
                                          targets[r], r, V));
    ++count;
  }
  // Every target ignored: the mean of no rows is NaN and every gradient 0, as PyTorch.

  memory::Vector<float> lse(rows), row_loss(rows, 0.0f);
  for_rows(rows, V, [&](int64_t r) {
    const float* xr = x.data() + r * V;
    const RowLogSumExp l = row_log_sum_exp(xr, V);
    lse[r] = l.max + l.log_sum;
    if (targets[r] != ignore_index) row_loss[r] = (l.max - xr[targets[r]]) + l.log_sum;
  });
  Tensor out = Tensor::scalar(static_cast<float>(deterministic_sum(row_loss.data(), rows) / static_cast<double>(count)));

  return attach(out, "cross_entropy", {x},
                [x, targets = std::move(targets), lse = std::move(lse), V, rows, count, ignore_index](
                    const Tensor&, const Tensor& g) {
                  bool fresh = false;  // the logits' only consumer, as a rule: write, skip the zero fill
                  float* sink = grad_sink(x, fresh);
                  if (!sink) return;
                  const float scale = g.data()[0] / static_cast<float>(count);
                  for_rows(rows, V, [&](int64_t r) {
                    float* dr = sink + r * V;
                    if (targets[r] == ignore_index) {
                      if (fresh) std::fill(dr, dr + V, 0.0f);
                      return;
                    }
                    const float* xr = x.data() + r * V;
                    if (fresh)
                      for (int64_t j = 0; j < V; ++j) dr[j] = scale * vector_exp(xr[j] - lse[r]);
                    else
                      for (int64_t j = 0; j < V; ++j) dr[j] += scale * vector_exp(xr[j] - lse[r]);
                    dr[targets[r]] -= scale;
                  });
                });
}

Tensor cross_entropy(const Tensor& logits, std::span<const int64_t> targets, int32_t ignore_index) {
  std::vector<int32_t> narrow(targets.size());
  for (size_t i = 0; i < targets.size(); ++i) {
    if (targets[i] < INT32_MIN || targets[i] > INT32_MAX)
      throw std::invalid_argument(fmt::format("cross_entropy: target {} at position {} is not a class", targets[i], i));
    narrow[i] = static_cast<int32_t>(targets[i]);
  }
  return cross_entropy(logits, std::span<const int32_t>(narrow), ignore_index);
}

}  // namespace tinygpt
