// Embedding lookup: out[n, :] = weight[ids[n], :]. The backward scatter-adds rows back; positions
// are grouped by id first (a counting sort), so each weight row sums its positions in order.
#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <stdexcept>

#include "../graph.h"
#include "../kernels/rows.h"
#include "../ops.h"
#include "../detail/profile.h"

namespace tinygpt {

Tensor embedding(const Tensor& weight_in, std::span<const int32_t> ids_in, const Shape& ids_shape) {
  OpTimer timer("embedding");
  if (weight_in.dim() != 2)
    throw std::invalid_argument(fmt::format("embedding: weight must be [V, C], got {}", to_string(weight_in.shape())));
  if (numel(ids_shape) != static_cast<int64_t>(ids_in.size()))
    throw std::invalid_argument(fmt::format("embedding: {} ids for the shape {}", ids_in.size(), to_string(ids_shape)));
  const Tensor weight = weight_in.contiguous();
  const int64_t V = weight.size(0), C = weight.size(1), n = static_cast<int64_t>(ids_in.size());
  for (int64_t i = 0; i < n; ++i)
    if (ids_in[i] < 0 || ids_in[i] >= V)
      throw std::out_of_range(fmt::format("embedding: id {} at position {} is out of range for {} rows of {}",
                                          ids_in[i], i, V, to_string(weight.shape())));
  memory::Vector<int32_t> ids(ids_in.begin(), ids_in.end());
  Shape shape = ids_shape;
  shape.push_back(C);
  Tensor out = Tensor::empty(shape);
  for_rows(n, C, [&](int64_t i) { std::copy_n(weight.data() + ids[i] * C, C, out.data() + i * C); });

  return attach(out, "embedding", {weight}, [weight, ids = std::move(ids), V, C, n](const Tensor&, const Tensor& g) {
    float* dw = grad_sink(weight);
    if (!dw) return;
    memory::Vector<int64_t> start(V + 1, 0), positions(n);  // positions grouped by id, ascending
    for (int32_t id : ids) ++start[id + 1];
    for (int64_t v = 0; v < V; ++v) start[v + 1] += start[v];
    memory::Vector<int64_t> fill(start.begin(), start.end() - 1);
    for (int64_t i = 0; i < n; ++i) positions[fill[ids[i]]++] = i;
    for_rows(V, C * std::max<int64_t>(1, n / std::max<int64_t>(V, 1)), [&](int64_t v) {
      float* row = dw + v * C;
      for (int64_t p = start[v]; p < start[v + 1]; ++p) {
        const float* src = g.data() + positions[p] * C;
        for (int64_t j = 0; j < C; ++j) row[j] += src[j];
      }
    });
  });
}

Tensor embedding(const Tensor& weight, const Indices& ids) {
  std::vector<int32_t> narrow(ids.values.size());
  for (size_t i = 0; i < narrow.size(); ++i) {  // ids past int32 cannot be rows: refused here by value
    const int64_t id = ids.values[i];
    if (id < 0 || id > INT32_MAX)
      throw std::out_of_range(fmt::format("embedding: id {} at position {} is out of range for {} rows of {}", id, i,
                                          weight.dim() == 2 ? weight.size(0) : 0, to_string(weight.shape())));
    narrow[i] = static_cast<int32_t>(id);
  }
  return embedding(weight, narrow, ids.shape);
}

}  // namespace tinygpt
