#include "layers.h"

#include <cmath>

#include "../autograd/inference.h"
#include "init.h"

namespace tinygpt::nn {

Tensor unwritten_parameter(Init init, const Shape& shape) {
  return init == Init::shapes ? Tensor::shape_only(shape) : Tensor::empty(shape);
}

Linear::Linear(int64_t in, int64_t out, bool has_bias, std::optional<uint64_t> seed, Init init) {
  weight = register_parameter("weight", unwritten_parameter(init, {out, in}));
  if (has_bias) bias = register_parameter("bias", unwritten_parameter(init, {out}));
  if (seed || init != Init::pytorch) keep_own_seed(seed.value_or(0));
  if (init == Init::pytorch) reset_parameters(place_seed());
}

void Linear::reset_parameters(uint64_t seed) {
  const float bound = 1.0f / std::sqrt(static_cast<float>(std::max<int64_t>(1, weight.size(1))));
  init::uniform_(weight, child_seed(seed, "weight"), -bound, bound);
  if (bias.defined()) init::uniform_(bias, child_seed(seed, "bias"), -bound, bound);
}

Tensor Linear::forward(const Tensor& x) const { return linear(x, weight, bias); }

void Linear::use_int8(int64_t group) {
  int8_ = std::make_shared<const Int8Matrix>(quantize_int8(weight.data(), weight.size(0), weight.size(1), group));
  dequantize_int8(*int8_, weight.data());
}

void Linear::forward_row(const float* x, float* y) const {
  if (int8_) return matvec_int8(*int8_, bias.defined() ? bias.data() : nullptr, x, y);
  matvec(weight.data(), bias.defined() ? bias.data() : nullptr, x, y, weight.size(0), weight.size(1));
}

Embedding::Embedding(int64_t num, int64_t dim, std::optional<uint64_t> seed, Init init) {
  weight = register_parameter("weight", unwritten_parameter(init, {num, dim}));
  if (seed || init != Init::pytorch) keep_own_seed(seed.value_or(0));
  if (init == Init::pytorch) reset_parameters(place_seed());
}

void Embedding::reset_parameters(uint64_t seed) { init::normal_(weight, child_seed(seed, "weight")); }

Tensor Embedding::forward(std::span<const int32_t> ids, const Shape& ids_shape) const {
  return embedding(weight, ids, ids_shape);
}

LayerNorm::LayerNorm(int64_t dim, float eps, bool has_bias) : eps_(eps) {
  weight = register_parameter("weight", Tensor::ones({dim}));
  if (has_bias) bias = register_parameter("bias", Tensor::zeros({dim}));
}

void LayerNorm::reset_parameters(uint64_t) {
  init::ones_(weight);
  if (bias.defined()) init::zeros_(bias);
}

RMSNorm::RMSNorm(int64_t dim, float eps) : eps_(eps) { weight = register_parameter("weight", Tensor::ones({dim})); }

void RMSNorm::reset_parameters(uint64_t) { init::ones_(weight); }

}  // namespace tinygpt::nn
