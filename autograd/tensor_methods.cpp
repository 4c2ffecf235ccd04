// Tensor's methods that mirror ops.h's free functions (x.sum(1) is sum(x, 1)): each one line, the
// free function named with tinygpt:: (inside Tensor the method's own name would be found first).
#include <fmt/format.h>

#include <stdexcept>

#include "ops.h"

namespace tinygpt {

Tensor Tensor::sum(Axes axes, bool keepdim) const { return tinygpt::sum(*this, std::move(axes), keepdim); }
Tensor Tensor::mean(Axes axes, bool keepdim) const { return tinygpt::mean(*this, std::move(axes), keepdim); }
Tensor Tensor::var(Axes axes, int64_t correction, bool keepdim) const {
  return tinygpt::var(*this, std::move(axes), correction, keepdim);
}
Tensor Tensor::std(Axes axes, int64_t correction, bool keepdim) const {
  return tinygpt::std(*this, std::move(axes), correction, keepdim);
}
Tensor Tensor::norm(float p, Axes axes, bool keepdim) const { return tinygpt::norm(*this, p, std::move(axes), keepdim); }
Tensor Tensor::logsumexp(Axes axes, bool keepdim) const { return tinygpt::logsumexp(*this, std::move(axes), keepdim); }
Tensor Tensor::amax(Axes axes, bool keepdim) const { return tinygpt::amax(*this, std::move(axes), keepdim); }
Tensor Tensor::amin(Axes axes, bool keepdim) const { return tinygpt::amin(*this, std::move(axes), keepdim); }
Tensor Tensor::prod() const { return tinygpt::prod(*this); }
Tensor Tensor::prod(int64_t axis, bool keepdim) const { return tinygpt::prod(*this, axis, keepdim); }
ValuesIndices Tensor::max(int64_t axis, bool keepdim) const { return tinygpt::max(*this, axis, keepdim); }
ValuesIndices Tensor::min(int64_t axis, bool keepdim) const { return tinygpt::min(*this, axis, keepdim); }
Tensor Tensor::cumsum(int64_t axis) const { return tinygpt::cumsum(*this, axis); }
Tensor Tensor::exp() const { return tinygpt::exp(*this); }
Tensor Tensor::log() const { return tinygpt::log(*this); }
Tensor Tensor::log1p() const { return tinygpt::log1p(*this); }
Tensor Tensor::sqrt() const { return tinygpt::sqrt(*this); }
Tensor Tensor::rsqrt() const { return tinygpt::rsqrt(*this); }
Tensor Tensor::abs() const { return tinygpt::abs(*this); }
Tensor Tensor::sign() const { return tinygpt::sign(*this); }
Tensor Tensor::neg() const { return tinygpt::neg(*this); }
Tensor Tensor::reciprocal() const { return tinygpt::reciprocal(*this); }
Tensor Tensor::tanh() const { return tinygpt::tanh(*this); }
Tensor Tensor::sigmoid() const { return tinygpt::sigmoid(*this); }
Tensor Tensor::relu() const { return tinygpt::relu(*this); }
Tensor Tensor::sin() const { return tinygpt::sin(*this); }
Tensor Tensor::cos() const { return tinygpt::cos(*this); }
Tensor Tensor::erf() const { return tinygpt::erf(*this); }
Tensor Tensor::floor() const { return tinygpt::floor(*this); }
Tensor Tensor::ceil() const { return tinygpt::ceil(*this); }
Tensor Tensor::round() const { return tinygpt::round(*this); }
Tensor Tensor::pow(float p) const { return tinygpt::pow(*this, p); }
Tensor Tensor::clamp(float lo, float hi) const { return tinygpt::clamp(*this, lo, hi); }
Tensor Tensor::softmax(int64_t axis) const { return tinygpt::softmax(*this, axis); }
Tensor Tensor::log_softmax(int64_t axis) const { return tinygpt::log_softmax(*this, axis); }
Tensor Tensor::matmul(const Tensor& other) const { return tinygpt::matmul(*this, other); }
Tensor Tensor::masked_fill(const Tensor& mask, float value) const { return tinygpt::masked_fill(*this, mask, value); }
Tensor Tensor::t() const {
  if (dim() > 2)
    throw std::invalid_argument(fmt::format("t: a tensor of shape {} (t() is for matrices; transpose(a, b) for more axes)",
                                            to_string(shape())));
  return dim() < 2 ? *this : transpose(0, 1);
}
Tensor Tensor::narrow(int64_t axis, int64_t start, int64_t length) const {
  return tinygpt::narrow(*this, axis, start, length);
}
Tensor Tensor::select(int64_t axis, int64_t index) const { return tinygpt::select(*this, axis, index); }
Tensor Tensor::operator[](int64_t index) const { return tinygpt::select(*this, 0, index); }
std::vector<Tensor> Tensor::chunk(int64_t n, int64_t axis) const { return tinygpt::chunk(*this, n, axis); }
std::vector<Tensor> Tensor::split(int64_t size, int64_t axis) const { return tinygpt::split(*this, size, axis); }
std::vector<Tensor> Tensor::unbind(int64_t axis) const { return tinygpt::unbind(*this, axis); }
Tensor Tensor::flip(Axes axes) const { return tinygpt::flip(*this, std::move(axes)); }
Tensor Tensor::repeat(const Shape& repeats) const { return tinygpt::repeat(*this, repeats); }

}  // namespace tinygpt
