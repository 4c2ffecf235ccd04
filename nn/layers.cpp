#include "tinygpt/nn/layers.h"

namespace tinygpt::nn {

Linear::Linear(int64_t in, int64_t out, bool has_bias) {
  weight = register_parameter("weight", Tensor::zeros({out, in}));
  if (has_bias) bias = register_parameter("bias", Tensor::zeros({out}));
}

Tensor Linear::forward(const Tensor& x) const { return linear(x, weight, bias); }

Embedding::Embedding(int64_t num, int64_t dim) { weight = register_parameter("weight", Tensor::zeros({num, dim})); }

Tensor Embedding::forward(std::span<const int32_t> ids, const Shape& ids_shape) const {
  return embedding(weight, ids, ids_shape);
}

LayerNorm::LayerNorm(int64_t dim, float eps) : eps_(eps) {
  weight = register_parameter("weight", Tensor::ones({dim}));
  bias = register_parameter("bias", Tensor::zeros({dim}));
}

}  // namespace tinygpt::nn
