#pragma once
// Global-norm gradient clipping: if ||g|| (over every parameter) exceeds max_norm, all gradients
// are scaled by max_norm / ||g||. Returns the norm before clipping.
#include <vector>

#include "autograd/tensor.h"

namespace tinygpt::optim {

double clip_grad_norm(const std::vector<Tensor>& params, double max_norm);

}  // namespace tinygpt::optim
