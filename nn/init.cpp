#include "init.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>


namespace tinygpt::nn::init {

namespace {

struct Fans {
  double in, out;
};

Fans fans(const Tensor& t, const char* op) {
  if (t.dim() < 2)
    throw std::invalid_argument(fmt::format("{}: fan in and fan out need 2 or more axes (got {})", op,
                                            to_string(t.shape())));
  double receptive = 1;
  for (int64_t d = 2; d < t.dim(); ++d) receptive *= static_cast<double>(t.size(d));
  return {static_cast<double>(t.size(1)) * receptive, static_cast<double>(t.size(0)) * receptive};
}

}  // namespace

float gain(Nonlinearity nonlinearity, float a) {
  switch (nonlinearity) {
    case Nonlinearity::linear:
    case Nonlinearity::sigmoid: return 1.0f;
    case Nonlinearity::relu: return std::sqrt(2.0f);
    case Nonlinearity::leaky_relu: return std::sqrt(2.0f / (1.0f + a * a));
    case Nonlinearity::tanh: return 5.0f / 3.0f;
  }
  return 1.0f;
}

void zeros_(const Tensor& t) { t.fill_(0.0f); }
void ones_(const Tensor& t) { t.fill_(1.0f); }
void constant_(const Tensor& t, float value) { t.fill_(value); }

void uniform_(const Tensor& t, uint64_t seed, float lo, float hi) { t.uniform_(seed, lo, hi); }

void normal_(const Tensor& t, uint64_t seed, float mean, float std) {
  t.normal_(seed, std);
  if (mean != 0.0f)
    for (float* x = t.data(), *end = x + t.numel(); x < end; ++x) *x += mean;
}

void xavier_uniform_(const Tensor& t, uint64_t seed, float g) {
  const Fans f = fans(t, "xavier_uniform_");
  const auto b = static_cast<float>(g * std::sqrt(6.0 / (f.in + f.out)));
  uniform_(t, seed, -b, b);
}

void xavier_normal_(const Tensor& t, uint64_t seed, float g) {
  const Fans f = fans(t, "xavier_normal_");
  normal_(t, seed, 0.0f, static_cast<float>(g * std::sqrt(2.0 / (f.in + f.out))));
}

void kaiming_uniform_(const Tensor& t, uint64_t seed, float a, Nonlinearity nonlinearity) {
  const auto b = static_cast<float>(gain(nonlinearity, a) * std::sqrt(3.0 / fans(t, "kaiming_uniform_").in));
  uniform_(t, seed, -b, b);
}

void kaiming_normal_(const Tensor& t, uint64_t seed, float a, Nonlinearity nonlinearity) {
  normal_(t, seed, 0.0f, static_cast<float>(gain(nonlinearity, a) / std::sqrt(fans(t, "kaiming_normal_").in)));
}

}  // namespace tinygpt::nn::init
