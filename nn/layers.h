#pragma once
// The basic layers: Linear, Embedding, LayerNorm.
#include <cstdint>
#include <span>

#include "tinygpt/autograd/ops.h"
#include "tinygpt/nn/module.h"

namespace tinygpt::nn {

// y = x Wᵀ + b, with W [out, in] as in PyTorch's nn.Linear.
class Linear : public Module {
 public:
  Linear(int64_t in, int64_t out, bool bias = true);
  Tensor forward(const Tensor& x) const;  // [..., in] -> [..., out]
  Tensor weight, bias;                    // bias undefined when constructed without one
};

// Rows of a [num, dim] table picked by integer ids.
class Embedding : public Module {
 public:
  Embedding(int64_t num, int64_t dim);
  Tensor forward(std::span<const int32_t> ids, const Shape& ids_shape) const;  // -> [ids_shape..., dim]
  Tensor weight;
};

class LayerNorm : public Module {
 public:
  explicit LayerNorm(int64_t dim, float eps = 1e-5f);
  Tensor forward(const Tensor& x) const { return layer_norm(x, weight, bias, eps_); }
  Tensor weight, bias;

 private:
  float eps_;
};

}  // namespace tinygpt::nn
