#include "containers.h"

#include <stdexcept>

namespace tinygpt::nn {

Tensor Sequential::forward(const Tensor& x) const {
  if (steps_.empty()) throw std::logic_error("Sequential: forward through no modules (add some first)");
  Tensor y = steps_.front()(x);
  for (size_t i = 1; i < steps_.size(); ++i) y = steps_[i](y);
  return y;
}

}  // namespace tinygpt::nn
