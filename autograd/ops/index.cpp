// Indexing: index_select, gather and scatter_add, each forward beside its backward (the backward of
// a selection adds into the positions it read; of scatter_add, a gather). topk picks by value and
// hands back its positions. Indices are checked against the axis before anything is read.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "../graph.h"
#include "../detail/around_axis.h"
#include "../detail/profile.h"
#include "../indices.h"
#include "../ops.h"
#include "../kernels/parallel.h"

namespace tinygpt {


Indices::Indices(std::vector<int64_t> v) : shape{static_cast<int64_t>(v.size())}, values(std::move(v)) {}

Indices::Indices(Shape s, std::vector<int64_t> v) : shape(std::move(s)), values(std::move(v)) {
  if (tinygpt::numel(shape) != static_cast<int64_t>(values.size()))
    throw std::invalid_argument(fmt::format("Indices: shape {} holds {} values, not {}", to_string(shape),
                                            tinygpt::numel(shape), values.size()));
}

int64_t Indices::size(int64_t axis) const { return shape[normalize_axis(axis, dim(), "Indices::size")]; }

int64_t Indices::at(std::initializer_list<int64_t> index) const {
  if (static_cast<int64_t>(index.size()) != dim())
    throw std::invalid_argument(fmt::format("Indices::at: {} indices for shape {}", index.size(), to_string(shape)));
  int64_t offset = 0, d = 0;
  for (int64_t i : index) {
    if (i < 0 || i >= shape[d])
      throw std::out_of_range(fmt::format("Indices::at: index {} out of range for axis {} of shape {}", i, d,
                                          to_string(shape)));
    offset = offset * shape[d++] + i;
  }
  return values[offset];
}

namespace {

void check_positions(std::span<const int64_t> index, int64_t n, const char* op, int axis, const Shape& shape) {
  for (size_t i = 0; i < index.size(); ++i)
    if (index[i] < 0 || index[i] >= n)
      throw std::out_of_range(fmt::format("{}: index {} (at {}) out of range for axis {} of shape {}", op, index[i], i,
                                          axis, to_string(shape)));
}

// For each element e of an index tensor of shape `index_shape` (row-major), the offset in a
// contiguous tensor of shape `shape` of the element with e's coordinates, axis `axis` replaced by
// the index value. The index must fit inside `shape` on every other axis (gather's rule).
template <class F>
void for_each_indexed(const Shape& shape, const Indices& index, int axis, const F& f) {
  const Strides strides = contiguous_strides(shape);
  Shape at(index.shape.size(), 0);
  for (int64_t e = 0; e < index.numel(); ++e) {
    int64_t offset = 0;
    for (size_t d = 0; d < at.size(); ++d)
      offset += (static_cast<int>(d) == axis ? index.values[e] : at[d]) * strides[d];
    f(e, offset);
    for (size_t d = at.size(); d-- > 0;) {  // the next coordinates, row-major
      if (++at[d] < index.shape[d]) break;
      at[d] = 0;
    }
  }
}

void check_gather_index(const Shape& shape, const Indices& index, int axis, const char* op) {
  if (index.dim() != static_cast<int64_t>(shape.size()))
    throw std::invalid_argument(fmt::format("{}: index of shape {} for a tensor of shape {}: the axes must agree",
                                            op, to_string(index.shape), to_string(shape)));
  for (size_t d = 0; d < shape.size(); ++d)
    if (static_cast<int>(d) != axis && index.shape[d] > shape[d])
      throw std::invalid_argument(fmt::format("{}: index of shape {} is larger than the tensor's {} on axis {}", op,
                                              to_string(index.shape), to_string(shape), d));
  check_positions(index.values, shape[axis], op, axis, shape);
}

}  // namespace

Tensor index_select(const Tensor& input, int64_t axis, std::span<const int64_t> index) {
  OpTimer timer("index_select");
  const int a = normalize_axis(axis, input.dim(), "index_select");
  check_positions(index, input.shape()[a], "index_select", a, input.shape());
  const Tensor x = input.contiguous();
  const detail::AroundAxis s = detail::around(x.shape(), a);
  Shape shape = x.shape();
  shape[a] = static_cast<int64_t>(index.size());
  Tensor out = Tensor::empty(shape);
  const int64_t k = static_cast<int64_t>(index.size());
  std::vector<int64_t> positions(index.begin(), index.end());
  const float* px = x.data();
  float* py = out.data();
  parallel_for(s.outer, 1, [&](int64_t o0, int64_t o1) {
    for (int64_t o = o0; o < o1; ++o)
      for (int64_t i = 0; i < k; ++i)
        std::copy_n(px + (o * s.n + positions[i]) * s.inner, s.inner, py + (o * k + i) * s.inner);
  });
  // Backward: each picked row adds its gradient back where it came from, in index order.
  return attach(out, "index_select", {x}, [x, s, positions = std::move(positions)](const Tensor&, const Tensor& g) {
    float* sink = grad_sink(x);
    if (!sink) return;
    const int64_t k = static_cast<int64_t>(positions.size());
    parallel_for(s.outer, 1, [&](int64_t o0, int64_t o1) {
      for (int64_t o = o0; o < o1; ++o)
        for (int64_t i = 0; i < k; ++i) {
          const float* gi = g.data() + (o * k + i) * s.inner;
          float* si = sink + (o * s.n + positions[i]) * s.inner;
          for (int64_t c = 0; c < s.inner; ++c) si[c] += gi[c];
        }
    });
  });
}

Tensor gather(const Tensor& input, int64_t axis, const Indices& index) {
  OpTimer timer("gather");
  const int a = normalize_axis(axis, input.dim(), "gather");
  check_gather_index(input.shape(), index, a, "gather");
  const Tensor x = input.contiguous();
  Tensor out = Tensor::empty(index.shape);
  const float* px = x.data();
  float* py = out.data();
  for_each_indexed(x.shape(), index, a, [&](int64_t e, int64_t offset) { py[e] = px[offset]; });
  return attach(out, "gather", {x}, [x, index, a](const Tensor&, const Tensor& g) {
    float* sink = grad_sink(x);
    if (!sink) return;
    const float* pg = g.data();
    for_each_indexed(x.shape(), index, a, [&](int64_t e, int64_t offset) { sink[offset] += pg[e]; });
  });
}

Tensor scatter_add(const Tensor& input, int64_t axis, const Indices& index, const Tensor& source) {
  OpTimer timer("scatter_add");
  const int a = normalize_axis(axis, input.dim(), "scatter_add");
  check_gather_index(input.shape(), index, a, "scatter_add");
  if (source.shape() != index.shape)
    throw std::invalid_argument(fmt::format("scatter_add: source of shape {} for an index of shape {}: they must agree",
                                            to_string(source.shape()), to_string(index.shape)));
  const Tensor src = source.contiguous();
  Tensor out = input.clone().detach();
  float* py = out.data();
  const float* ps = src.data();
  for_each_indexed(out.shape(), index, a, [&](int64_t e, int64_t offset) { py[offset] += ps[e]; });
  // Backward: the input's gradient passes whole; the source's is read back where it was added.
  return attach(out, "scatter_add", {input, src}, [input, src, index, a](const Tensor&, const Tensor& g) {
    if (input.requires_grad()) hand_on(input, g);
    if (float* sink = grad_sink(src)) {
      const float* pg = g.data();
      for_each_indexed(g.shape(), index, a, [&](int64_t e, int64_t offset) { sink[e] += pg[offset]; });
    }
  });
}

TopK topk(const Tensor& x, int64_t k, int64_t axis, bool largest) {
  const int a = normalize_axis(axis, x.dim(), "topk");
  if (k < 0 || k > x.shape()[a])
    throw std::invalid_argument(fmt::format("topk: k = {} for axis {} of shape {}", k, a, to_string(x.shape())));
  const Tensor c = x.contiguous();
  const detail::AroundAxis s = detail::around(c.shape(), a);
  Shape shape = c.shape();
  shape[a] = k;
  std::vector<int64_t> picked(static_cast<size_t>(s.outer * k * s.inner));
  // NaN ranks above every number either way (as max and min treat it); ties keep the lower position.
  auto before = [largest](float u, float v) {
    if (std::isnan(u) || std::isnan(v)) return std::isnan(u) && !std::isnan(v);
    return largest ? u > v : u < v;
  };
  parallel_for(s.outer * s.inner, 16, [&](int64_t r0, int64_t r1) {
    std::vector<int64_t> order(static_cast<size_t>(s.n));
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t o = r / s.inner, in = r % s.inner;
      const float* row = c.data() + o * s.n * s.inner + in;
      std::iota(order.begin(), order.end(), 0);
      std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t i, int64_t j) {
        const float u = row[i * s.inner], v = row[j * s.inner];
        return before(u, v) || (!before(v, u) && i < j);
      });
      for (int64_t i = 0; i < k; ++i) picked[(o * k + i) * s.inner + in] = order[i];
    }
  });
  Indices indices(shape, std::move(picked));
  return {gather(c, a, indices), std::move(indices)};
}

// topk of the whole axis: the same order (ties keep their positions), the same gradient.
TopK sort(const Tensor& x, int64_t axis, bool descending) {
  const int a = normalize_axis(axis, x.dim(), "sort");
  return topk(x, x.shape()[a], a, descending);
}

Indices argsort(const Tensor& x, int64_t axis, bool descending) {
  NoGradGuard no_grad;  // the positions alone
  return sort(x, axis, descending).indices;
}

}  // namespace tinygpt
