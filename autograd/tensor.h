#pragma once
// A float32 tensor: a view (shape, strides, offset) onto shared storage, plus what autograd needs
// (whether it wants a gradient, its gradient, and the node that produced it).
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include "memory.h"
#include "shape.h"

namespace tinygpt {

// Storage: 64-byte aligned (kernels use full-width vector loads on every row start they own), from
// the reused blocks of memory.h, elements left unwritten by Buffer(n) (every op writes its whole
// output) and zero-filled by Buffer(n, 0.0f). `version` counts in-place changes (fill_, copy_from_,
// normal_, uniform_) of any view of it: backward refuses inputs changed since their op saw them.
struct Buffer : memory::Vector<float> {
  using memory::Vector<float>::Vector;
  uint64_t version = 0;
  const char* changed_by = nullptr;  // what made the last in-place change ("fill_", "AdamW::step")
  // Every value is a bfloat16, as of this version (an op stored it rounded for bf16 products:
  // for_products.h); an in-place change leaves the mark behind.
  uint64_t bf16_exact_version = UINT64_MAX;
};

struct Node;
struct ValuesIndices;  // ops.h

struct TensorImpl {
  std::shared_ptr<Buffer> storage;
  int64_t offset = 0;
  Shape shape;
  Strides strides;
  bool requires_grad = false;
  std::shared_ptr<Buffer> grad;    // contiguous, row-major in this tensor's shape
  std::shared_ptr<Node> grad_fn;   // null for leaves
  bool graph_freed = false;        // a backward has run through this tensor's node
};

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // Creation. Every new tensor is contiguous and owns fresh storage.
  static Tensor empty(const Shape& shape);
  static Tensor zeros(const Shape& shape);
  static Tensor full(const Shape& shape, float value);
  static Tensor ones(const Shape& shape) { return full(shape, 1.0f); }
  static Tensor from_vector(const Shape& shape, std::vector<float> values);
  static Tensor scalar(float value) { return full({}, value); }
  // N(0, std^2) or U[lo, hi) from a seed: the same seed gives the same bits on every machine.
  static Tensor randn(const Shape& shape, uint64_t seed, float std = 1.0f);
  static Tensor uniform(const Shape& shape, uint64_t seed, float lo, float hi);
  // A shape and no values: what a model plan holds (nn::Init::shapes), so that a model's parameter
  // shapes can be listed without allocating them. Reading or writing its values throws.
  static Tensor shape_only(const Shape& shape);

  // An undefined tensor (default-constructed, or an absent bias) holds nothing: every accessor
  // below throws std::invalid_argument naming the op being computed, instead of crashing.
  bool defined() const { return impl_ != nullptr; }
  const Shape& shape() const { return checked().shape; }
  const Strides& strides() const { return checked().strides; }
  int64_t offset() const { return checked().offset; }
  int64_t dim() const { return static_cast<int64_t>(checked().shape.size()); }
  int64_t size(int64_t axis) const;
  int64_t numel() const { return tinygpt::numel(checked().shape); }
  bool is_contiguous() const;

  // Pointer to element [0, ..., 0]; walk it with strides() unless is_contiguous().
  float* data() const { return stored().data() + impl_->offset; }
  float item() const;
  float at(std::initializer_list<int64_t> index) const;
  std::vector<float> to_vector() const;  // row-major copy of the logical elements
  void fill_(float value) const;            // in place, no autograd (for parameters and scratch)
  // In-place changes of its storage, counted so that a backward that would read changed values
  // fails instead of computing a wrong gradient (graph.h). fill_, copy_from_, normal_, uniform_,
  // nn::init and the optimizers' steps count themselves; code that writes through data() calls
  // mark_changed(what) after it, or is not seen.
  uint64_t version() const { return stored().version; }
  void mark_changed(const char* by) const;
  // In place, no autograd, contiguous tensors: N(0, std^2) and U[lo, hi), the values randn and
  // uniform give for the same seed and shape.
  const Tensor& normal_(uint64_t seed, float std = 1.0f) const;
  const Tensor& uniform_(uint64_t seed, float lo, float hi) const;
  void copy_from_(const Tensor& src) const;  // in place, same shape, no autograd

  // Autograd.
  bool requires_grad() const { return checked().requires_grad; }
  Tensor& set_requires_grad(bool on);
  bool has_grad() const { return impl_->grad != nullptr; }
  Tensor grad() const;  // a contiguous tensor that shares the gradient buffer; throws when none
  void zero_grad();     // drops the gradient: the next backward writes a fresh one
  void backward() const;
  void backward(const Tensor& seed) const;
  Tensor detach() const;  // same storage, cut from the graph

  // Views share storage; reshape copies only when the strides make a view impossible.
  Tensor view(const Shape& shape) const;
  Tensor reshape(const Shape& shape) const;
  Tensor transpose(int64_t a, int64_t b) const;
  Tensor permute(const Axes& order) const;
  Tensor slice(int64_t axis, int64_t start, int64_t end) const;
  Tensor contiguous() const;
  Tensor clone() const;  // a contiguous copy that keeps the graph (contiguous() may return *this)
  // Size-1 axes (views): unsqueeze inserts one at `axis` (-1: last); squeeze() drops every one,
  // squeeze(axis) that one if it is 1 (else the tensor as is, as in PyTorch).
  Tensor unsqueeze(int64_t axis) const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t axis) const;
  // Axes start_axis .. end_axis (inclusive) merged into one; a view where the strides allow.
  Tensor flatten(int64_t start_axis = 0, int64_t end_axis = -1) const;
  // A view repeating size-1 axes (and adding leading ones) to `shape` without a copy, stride 0;
  // -1 keeps an axis's size. Backward sums the gradient over the repeats.
  Tensor expand(const Shape& shape) const;

  // The ops of ops.h as methods, libtorch's spelling: x.sum(1) is sum(x, 1), x.exp() is exp(x).
  // (tensor_methods.cpp; each is the free function, documented there.)
  Tensor sum(Axes axes = {}, bool keepdim = false) const;
  Tensor mean(Axes axes = {}, bool keepdim = false) const;
  Tensor var(Axes axes = {}, int64_t correction = 1, bool keepdim = false) const;
  Tensor std(Axes axes = {}, int64_t correction = 1, bool keepdim = false) const;
  Tensor norm(float p = 2.0f, Axes axes = {}, bool keepdim = false) const;
  Tensor logsumexp(Axes axes = {}, bool keepdim = false) const;
  Tensor amax(Axes axes = {}, bool keepdim = false) const;
  Tensor amin(Axes axes = {}, bool keepdim = false) const;
  Tensor prod() const;
  Tensor prod(int64_t axis, bool keepdim = false) const;
  ValuesIndices max(int64_t axis, bool keepdim = false) const;
  ValuesIndices min(int64_t axis, bool keepdim = false) const;
  Tensor cumsum(int64_t axis) const;
  Tensor exp() const;
  Tensor log() const;
  Tensor log1p() const;
  Tensor sqrt() const;
  Tensor rsqrt() const;
  Tensor abs() const;
  Tensor sign() const;
  Tensor neg() const;
  Tensor reciprocal() const;
  Tensor tanh() const;
  Tensor sigmoid() const;
  Tensor relu() const;
  Tensor sin() const;
  Tensor cos() const;
  Tensor erf() const;
  Tensor floor() const;
  Tensor ceil() const;
  Tensor round() const;
  Tensor pow(float p) const;
  Tensor clamp(float lo, float hi) const;
  Tensor softmax(int64_t axis) const;
  Tensor log_softmax(int64_t axis) const;
  Tensor matmul(const Tensor& other) const;
  Tensor masked_fill(const Tensor& mask, float value) const;
  Tensor t() const;  // a matrix transposed; a vector or scalar as it is
  Tensor narrow(int64_t axis, int64_t start, int64_t length) const;
  Tensor select(int64_t axis, int64_t index) const;
  Tensor operator[](int64_t index) const;  // select(0, index)
  std::vector<Tensor> chunk(int64_t n, int64_t axis = 0) const;
  std::vector<Tensor> split(int64_t size, int64_t axis = 0) const;
  std::vector<Tensor> unbind(int64_t axis = 0) const;
  Tensor flip(Axes axes) const;
  Tensor repeat(const Shape& repeats) const;

  TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }
  bool same_as(const Tensor& other) const { return impl_ == other.impl_; }

 private:
  const TensorImpl& checked() const {
    if (!impl_) [[unlikely]]
      undefined();
    return *impl_;
  }
  Buffer& stored() const {
    const TensorImpl& t = checked();
    if (!t.storage) [[unlikely]]
      shape_only_read(t.shape);
    return *t.storage;
  }
  [[noreturn]] static void undefined();
  [[noreturn]] static void shape_only_read(const Shape& shape);
  std::shared_ptr<TensorImpl> impl_;
};

// Prints shape and values as PyTorch does (tensor([[...]], shape=[2, 3])); with more than 1000
// elements only the first and last three along each axis (autograd/print.cpp).
std::ostream& operator<<(std::ostream& os, const Tensor& t);

// Make a tensor that views `base`'s storage with another shape/strides/offset.
Tensor make_view(const Tensor& base, Shape shape, Strides strides, int64_t offset);

}  // namespace tinygpt
