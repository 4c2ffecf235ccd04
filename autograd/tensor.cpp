#include "tensor.h"

#include "detail/profile.h"

#include <fmt/format.h>

#include <stdexcept>

#include "graph.h"
#include "kernels/strided.h"
#include "kernels/parallel.h"
#include "random.h"

namespace tinygpt {

namespace {
Tensor make_contiguous(const Shape& shape, std::shared_ptr<Buffer> storage) {
  auto impl = memory::make_shared<TensorImpl>();
  impl->storage = std::move(storage);
  impl->shape = shape;
  impl->strides = contiguous_strides(shape);
  return Tensor(std::move(impl));
}
void check_shape(const Shape& shape) {
  for (int64_t d : shape)
    if (d < 0) throw std::invalid_argument(fmt::format("tensor: negative size in shape {}", to_string(shape)));
}
}  // namespace

Tensor Tensor::empty(const Shape& shape) {
  check_shape(shape);
  return make_contiguous(shape, memory::make_shared<Buffer>(tinygpt::numel(shape)));
}
Tensor Tensor::shape_only(const Shape& shape) {
  check_shape(shape);
  return make_contiguous(shape, nullptr);
}
Tensor Tensor::zeros(const Shape& shape) { return full(shape, 0.0f); }
Tensor Tensor::full(const Shape& shape, float value) {
  check_shape(shape);
  return make_contiguous(shape, memory::make_shared<Buffer>(tinygpt::numel(shape), value));
}
Tensor Tensor::from_vector(const Shape& shape, std::vector<float> values) {
  check_shape(shape);
  if (static_cast<int64_t>(values.size()) != tinygpt::numel(shape))
    throw std::invalid_argument(fmt::format("from_vector: {} values for shape {}", values.size(), to_string(shape)));
  return make_contiguous(shape, memory::make_shared<Buffer>(values.begin(), values.end()));
}
Tensor Tensor::randn(const Shape& shape, uint64_t seed, float std) { return empty(shape).normal_(seed, std); }
Tensor Tensor::uniform(const Shape& shape, uint64_t seed, float lo, float hi) {
  return empty(shape).uniform_(seed, lo, hi);
}

namespace {
// Fixed-size chunks, each with its own stream: parallel, yet the same bits for any thread count.
// fill(rng, x, begin, end) writes one chunk; `first_stream` is chunk 0's.
constexpr int64_t kRandomChunk = 1 << 16;
template <class Fill>
void fill_random(const Tensor& t, const char* op, uint64_t first_stream, uint64_t seed, const Fill& fill) {
  if (!t.is_contiguous()) throw std::invalid_argument(fmt::format("{}: tensor is not contiguous", op));
  const int64_t n = t.numel();
  float* x = t.data();
  parallel_for((n + kRandomChunk - 1) / kRandomChunk, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      Rng rng(c == 0 ? first_stream : splitmix64(seed) ^ static_cast<uint64_t>(c));
      fill(rng, x, c * kRandomChunk, std::min(n, (c + 1) * kRandomChunk));
    }
  });
}
}  // namespace

const Tensor& Tensor::normal_(uint64_t seed, float std) const {
  fill_random(*this, "normal_", splitmix64(seed), seed, [std](Rng& rng, float* x, int64_t i, int64_t end) {
    for (; i < end; i += 2) {
      const auto [z0, z1] = rng.normal_pair();
      x[i] = static_cast<float>(z0 * std);
      if (i + 1 < end) x[i + 1] = static_cast<float>(z1 * std);
    }
  });
  mark_changed("normal_");
  return *this;
}

// The first chunk's stream is the seed's own: up to 65536 elements hold the seed's first draws.
const Tensor& Tensor::uniform_(uint64_t seed, float lo, float hi) const {
  fill_random(*this, "uniform_", seed, seed, [lo, hi](Rng& rng, float* x, int64_t i, int64_t end) {
    for (; i < end; ++i) x[i] = static_cast<float>(lo + (hi - lo) * rng.uniform());
  });
  mark_changed("uniform_");
  return *this;
}

void Tensor::shape_only_read(const Shape& shape) {
  const char* op = current_op();
  throw std::invalid_argument(fmt::format("{}{}a tensor of shape {} has no values: it belongs to a model plan "
                                          "(nn::Init::shapes), which lists shapes only",
                                          op ? op : "", op ? ": " : "", to_string(shape)));
}

void Tensor::undefined() {
  const char* op = current_op();
  throw std::invalid_argument(fmt::format("{}{}an undefined tensor (a default-constructed Tensor(), or an absent bias) "
                                          "was given where a tensor is needed",
                                          op ? op : "", op ? ": " : ""));
}

int64_t Tensor::size(int64_t axis) const { return shape()[normalize_axis(axis, dim(), "size")]; }

bool Tensor::is_contiguous() const {
  int64_t expected = 1;
  for (size_t i = shape().size(); i-- > 0;) {
    if (shape()[i] != 1 && strides()[i] != expected) return false;
    expected *= shape()[i];
  }
  return true;
}

float Tensor::item() const {
  if (numel() != 1)
    throw std::invalid_argument(fmt::format("item: tensor of shape {} has {} elements, not 1", to_string(shape()), numel()));
  return *data();
}

float Tensor::at(std::initializer_list<int64_t> index) const {
  if (static_cast<int64_t>(index.size()) != dim())
    throw std::invalid_argument(fmt::format("at: {} indices for shape {}", index.size(), to_string(shape())));
  int64_t offset = 0, d = 0;
  for (int64_t i : index) {
    if (i < 0 || i >= shape()[d])
      throw std::out_of_range(fmt::format("at: index {} out of range for axis {} of shape {}", i, d, to_string(shape())));
    offset += i * strides()[d++];
  }
  return data()[offset];
}

std::vector<float> Tensor::to_vector() const {
  std::vector<float> out(static_cast<size_t>(numel()));
  strided_copy(data(), shape(), strides(), out.data());
  return out;
}

void Tensor::fill_(float value) const {
  if (!is_contiguous()) throw std::invalid_argument("fill_: tensor is not contiguous");
  std::fill(data(), data() + numel(), value);
  mark_changed("fill_");
}

void Tensor::mark_changed(const char* by) const {
  Buffer& storage = stored();
  ++storage.version;
  storage.changed_by = by;
}

void Tensor::copy_from_(const Tensor& src) const {
  if (src.shape() != shape())
    throw std::invalid_argument(fmt::format("copy_from_: source {} into {}", to_string(src.shape()), to_string(shape())));
  if (!is_contiguous()) throw std::invalid_argument("copy_from_: destination is not contiguous");
  strided_copy(src.data(), src.shape(), src.strides(), data());
  mark_changed("copy_from_");
}

Tensor& Tensor::set_requires_grad(bool on) {
  if (impl_->grad_fn)
    throw std::invalid_argument("set_requires_grad: only leaf tensors (not results of ops) can change it");
  impl_->requires_grad = on;
  return *this;
}

Tensor Tensor::grad() const {
  if (!impl_->grad) throw std::logic_error(fmt::format("grad: tensor of shape {} has no gradient", to_string(shape())));
  return make_contiguous(shape(), impl_->grad);
}

void Tensor::zero_grad() { impl_->grad.reset(); }

void Tensor::backward() const {
  if (numel() != 1)
    throw std::invalid_argument(fmt::format(
        "backward: called on a tensor of shape {} without a seed gradient; only a one-element tensor seeds itself",
        to_string(shape())));
  run_backward(*this, Tensor::ones(shape()));
}
void Tensor::backward(const Tensor& seed) const { run_backward(*this, seed); }

Tensor Tensor::detach() const { return make_view(*this, shape(), strides(), offset()); }

Tensor make_view(const Tensor& base, Shape shape, Strides strides, int64_t offset) {
  auto impl = memory::make_shared<TensorImpl>();
  impl->storage = base.impl()->storage;
  impl->offset = offset;
  impl->shape = std::move(shape);
  impl->strides = std::move(strides);
  return Tensor(std::move(impl));
}

}  // namespace tinygpt
