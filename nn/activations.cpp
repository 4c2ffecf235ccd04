#include "activations.h"

#include <fmt/format.h>

#include <stdexcept>

#include "../autograd/random.h"

namespace tinygpt::nn {

Dropout::Dropout(float p, std::optional<uint64_t> seed) : p_(p) {
  if (!(p >= 0.0f && p < 1.0f)) throw std::invalid_argument(fmt::format("Dropout: p {} is not in [0, 1)", p));
  if (seed) keep_own_seed(*seed);
}

Tensor Dropout::forward(const Tensor& x) {
  if (!training() || p_ == 0.0f) return x;
  return dropout(x, p_, splitmix64(place_seed() + calls_++), true);
}

}  // namespace tinygpt::nn
