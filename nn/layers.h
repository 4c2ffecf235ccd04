#pragma once
// The basic layers: Linear, Embedding, LayerNorm, RMSNorm. Each starts with PyTorch's default
// initialization, drawn from `seed` (reset_parameters draws it again from another seed).
#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "../autograd/inference.h"
#include "../autograd/ops.h"
#include "module.h"

namespace tinygpt::nn {

// Init::none allocates a layer's parameters without writing them, for code that writes every one
// next (a loader, or a model's own initialization): the values are otherwise undefined.
// Init::shapes gives them a shape and no values: a plan of the model, whose named_parameters() list
// names and shapes before anything is allocated (nn::parameter_shapes); a plan cannot run.
enum class Init { pytorch, none, shapes };
// A parameter's tensor under `init`: unwritten, or shape only under Init::shapes.
Tensor unwritten_parameter(Init init, const Shape& shape);

// y = x Wᵀ + b, with W [out, in] as in PyTorch's nn.Linear. W and b start U(-1/sqrt(in), 1/sqrt(in)),
// drawn from `seed`, or without one from the layer's place in its model (Module::place_seed).
class Linear : public Module {
 public:
  Linear(int64_t in, int64_t out, bool bias = true, std::optional<uint64_t> seed = std::nullopt,
         Init init = Init::pytorch);
  Tensor forward(const Tensor& x) const;  // [..., in] -> [..., out]
  void forward_row(const float* x, float* y) const;  // one row: [in] -> [out], as forward computes it
  void reset_parameters(uint64_t seed) override;
  // For inference: the weight stored in 8 bits by groups of `group` (inference.h's Int8Matrix).
  // forward_row then reads the int8 weights, and `weight` holds the floats they stand for, so
  // forward computes the same model. Training afterwards would leave forward_row behind.
  void use_int8(int64_t group);
  const Int8Matrix* int8() const { return int8_.get(); }
  Tensor weight, bias;                    // bias undefined when constructed without one

 private:
  std::shared_ptr<const Int8Matrix> int8_;
};

// Rows of a [num, dim] table picked by integer ids. The table starts N(0, 1), drawn as Linear's.
class Embedding : public Module {
 public:
  Embedding(int64_t num, int64_t dim, std::optional<uint64_t> seed = std::nullopt, Init init = Init::pytorch);
  Tensor forward(std::span<const int32_t> ids, const Shape& ids_shape) const;  // -> [ids_shape..., dim]
  Tensor forward(const Indices& ids) const { return embedding(weight, ids); }  // int64 ids, any shape
  void reset_parameters(uint64_t seed) override;
  Tensor weight;
};

// Normalizes the last axis, then scales by weight (starts at 1) and shifts by bias (starts at 0;
// none when constructed without one).
class LayerNorm : public Module {
 public:
  explicit LayerNorm(int64_t dim, float eps = 1e-5f, bool bias = true);
  Tensor forward(const Tensor& x) const { return layer_norm(x, weight, bias, eps_); }
  void reset_parameters(uint64_t seed) override;
  float eps() const { return eps_; }
  Tensor weight, bias;

 private:
  float eps_;
};

// Llama's norm: x / sqrt(mean(x²) + eps) * weight over the last axis (no centring, no bias).
class RMSNorm : public Module {
 public:
  explicit RMSNorm(int64_t dim, float eps = 1e-5f);
  Tensor forward(const Tensor& x) const { return rms_norm(x, weight, eps_); }
  void reset_parameters(uint64_t seed) override;
  float eps() const { return eps_; }
  Tensor weight;

 private:
  float eps_;
};

// Merges axes start_axis .. end_axis into one, as x.flatten (PyTorch's nn.Flatten: from axis 1,
// keeping the batch axis).
class Flatten : public Module {
 public:
  explicit Flatten(int64_t start_axis = 1, int64_t end_axis = -1) : start_(start_axis), end_(end_axis) {}
  Tensor forward(const Tensor& x) const { return x.flatten(start_, end_); }

 private:
  int64_t start_, end_;
};

}  // namespace tinygpt::nn
