// Sums and means over axes, and sum_to (the backward of broadcasting). Every sum runs in a fixed
// order inside one task, so results do not depend on the thread count.
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "../graph.h"
#include "../kernels/elementwise.h"
#include "../ops.h"
#include "../detail/profile.h"

namespace tinygpt {

namespace {

// out[a, k] (=|+=) sum over r of x[a, r, k]: x is [A, R, K], contiguous.
void sum_middle_axis(const float* x, int64_t A, int64_t R, int64_t K, float* out, bool accumulate) {
  if (K == 1) {  // row sums, in double: a row may be the whole tensor
    parallel_for(A, grain_for(R), [&](int64_t a0, int64_t a1) {
      for (int64_t a = a0; a < a1; ++a) {
        const float s = static_cast<float>(deterministic_sum(x + a * R, R));
        out[a] = accumulate ? out[a] + s : s;
      }
    });
    return;
  }
  // Columns per task, at most kBlock (8 KB of sums, in L1): each task owns its outputs, and every
  // column sums its rows in order whatever the blocks. Wide blocks read long stretches of each row
  // (blocks of 256 read 1 KB of every 6 KB row of a [4096, 1536] gradient, at half the speed). A
  // single row of blocks (a bias gradient) gets a multiple of the threads: 1152 columns are 2
  // blocks of 576 for 2 threads.
  constexpr int64_t kBlock = 2048;
  int64_t blocks = (K + kBlock - 1) / kBlock;
  if (A == 1) blocks = (blocks + num_threads() - 1) / num_threads() * num_threads();
  const int64_t width = std::min(kBlock, ((K + blocks - 1) / blocks + 7) / 8 * 8);
  blocks = (K + width - 1) / width;
  parallel_for(A * blocks, grain_for(R * width), [&](int64_t t0, int64_t t1) {
    float acc[kBlock];
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t a = t / blocks, k0 = (t % blocks) * width, n = std::min(width, K - k0);
      std::fill(acc, acc + n, 0.0f);
      for (int64_t r = 0; r < R; ++r) {
        const float* src = x + (a * R + r) * K + k0;
        for (int64_t k = 0; k < n; ++k) acc[k] += src[k];
      }
      float* dst = out + a * K + k0;
      for (int64_t k = 0; k < n; ++k) dst[k] = accumulate ? dst[k] + acc[k] : acc[k];
    }
  });
}

}  // namespace

void sum_to(const float* x, const Shape& from, float* out, const Shape& to, bool accumulate) {
  // Axes to reduce, in `from`'s numbering: the leading extra ones and those where `to` has 1.
  const size_t lead = from.size() - to.size();
  memory::Vector<bool> reduce(from.size());
  for (size_t d = 0; d < from.size(); ++d) reduce[d] = d < lead || (to[d - lead] == 1 && from[d] != 1);
  // Group neighbouring axes of the same kind: [k0, r0, k1, r1, ...] as (size, reduced) pairs.
  memory::Vector<std::pair<int64_t, bool>> groups;
  for (size_t d = 0; d < from.size(); ++d) {
    if (from[d] == 1) continue;
    if (!groups.empty() && groups.back().second == reduce[d]) groups.back().first *= from[d];
    else groups.push_back({from[d], reduce[d]});
  }
  const int64_t n_out = numel(to);
  if (std::none_of(groups.begin(), groups.end(), [](auto& g) { return g.second; })) {
    pass_into(out, x, n_out, !accumulate);
    return;
  }
  // Reduce the innermost reduced group, one group at a time, until none is left.
  Buffer current, next;
  const float* src = x;
  while (true) {
    auto it = std::find_if(groups.rbegin(), groups.rend(), [](auto& g) { return g.second; });
    const size_t gi = groups.size() - 1 - (it - groups.rbegin());
    int64_t A = 1, K = 1;
    for (size_t j = 0; j < gi; ++j) A *= groups[j].first;
    for (size_t j = gi + 1; j < groups.size(); ++j) K *= groups[j].first;
    const int64_t R = groups[gi].first;
    groups.erase(groups.begin() + gi);
    const bool last = std::none_of(groups.begin(), groups.end(), [](auto& g) { return g.second; });
    if (last) {
      sum_middle_axis(src, A, R, K, out, accumulate);
      return;
    }
    next.assign(A * K, 0.0f);
    sum_middle_axis(src, A, R, K, next.data(), false);
    std::swap(current, next);
    src = current.data();
  }
}

Tensor sum_to_shape(const Tensor& input, const Shape& shape) {
  OpTimer timer("sum_to_shape");
  if (shape.size() > input.shape().size() || broadcast_shapes(shape, input.shape(), "sum_to_shape") != input.shape())
    throw std::invalid_argument(fmt::format("sum_to_shape: {} does not broadcast to {}", to_string(shape),
                                            to_string(input.shape())));
  Tensor x = input.contiguous();
  Tensor out = Tensor::empty(shape);
  sum_to(x.data(), x.shape(), out.data(), shape, false);
  return attach(out, "sum_to_shape", {x}, [x](const Tensor& y, const Tensor& g) {
    float* sink = grad_sink(x);
    if (!sink) return;
    binary_map(x.shape(), g.data(), broadcast_strides(y.shape(), g.strides(), x.shape()), sink,
               contiguous_strides(x.shape()), sink, [](float gi, float si) { return si + gi; });
  });
}

Tensor sum(const Tensor& x, Axes axes, bool keepdim) {
  memory::Vector<bool> reduced(x.dim(), axes.empty());
  for (int64_t a : axes) {
    int d = normalize_axis(a, x.dim(), "sum");
    if (reduced[d]) throw std::invalid_argument(fmt::format("sum: axis {} given twice", d));
    reduced[d] = true;
  }
  Shape kept = x.shape(), squeezed;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (reduced[d]) kept[d] = 1;
    else squeezed.push_back(x.shape()[d]);
  }
  Tensor out = sum_to_shape(x, kept);
  return keepdim ? out : out.view(squeezed);
}

Tensor mean(const Tensor& x, Axes axes, bool keepdim) {
  Tensor s = sum(x, axes, keepdim);
  int64_t count = s.numel() ? x.numel() / s.numel() : 0;
  return mul_scalar(s, 1.0f / static_cast<float>(count));
}

}  // namespace tinygpt
