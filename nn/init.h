#pragma once
// Initializing parameters in place, as torch.nn.init does, from a seed: the same seed gives the
// same values on every machine and thread count. fan_in and fan_out of a [out, in, ...] weight are
// in x (product of the trailing sizes) and out x (the same).
#include <cstdint>

#include "../autograd/tensor.h"

namespace tinygpt::nn::init {

enum class Nonlinearity { linear, relu, leaky_relu, tanh, sigmoid };

// The gain torch.nn.init.calculate_gain gives (leaky_relu with negative slope `a`).
float gain(Nonlinearity nonlinearity, float a = 0.01f);

void zeros_(const Tensor& t);
void ones_(const Tensor& t);
void constant_(const Tensor& t, float value);
void uniform_(const Tensor& t, uint64_t seed, float lo = 0.0f, float hi = 1.0f);  // U(lo, hi)
void normal_(const Tensor& t, uint64_t seed, float mean = 0.0f, float std = 1.0f);  // N(mean, std^2)
// Glorot: U(-b, b) with b = gain sqrt(6 / (fan_in + fan_out)); N(0, gain^2 2 / (fan_in + fan_out)).
void xavier_uniform_(const Tensor& t, uint64_t seed, float gain = 1.0f);
void xavier_normal_(const Tensor& t, uint64_t seed, float gain = 1.0f);
// He: U(-b, b) with b = gain sqrt(3 / fan_in); N(0, gain^2 / fan_in). gain = init::gain(nonlinearity, a).
void kaiming_uniform_(const Tensor& t, uint64_t seed, float a = 0.0f, Nonlinearity nonlinearity = Nonlinearity::leaky_relu);
void kaiming_normal_(const Tensor& t, uint64_t seed, float a = 0.0f, Nonlinearity nonlinearity = Nonlinearity::leaky_relu);

}  // namespace tinygpt::nn::init
