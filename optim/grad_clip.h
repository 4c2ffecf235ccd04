#pragma once
// Global-norm gradient clipping: if ||g|| (over every parameter) exceeds max_norm, all gradients
// are scaled by max_norm / ||g||.
#include <vector>

#include "../autograd/tensor.h"

namespace tinygpt::optim {

// ||g|| over every parameter that has a gradient (a deterministic sum in double).
double global_grad_norm(const std::vector<Tensor>& params);

// The factor the gradients are scaled by: max_norm / (norm + 1e-6) when norm exceeds max_norm, else 1.
// The trainer hands it to AdamW::step, which applies it as it reads each gradient (one pass less).
float clip_scale(double norm, double max_norm);

// Scales the gradients in place; returns the norm before clipping.
double clip_grad_norm(const std::vector<Tensor>& params, double max_norm);

// Clamps every gradient element to [-clip, clip] in place (torch.nn.utils.clip_grad_value_).
void clip_grad_value(const std::vector<Tensor>& params, double clip);

}  // namespace tinygpt::optim
