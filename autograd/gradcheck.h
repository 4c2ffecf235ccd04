#pragma once
// Checks an op's backward against finite differences, for users' own ops (attach + grad_sink) as
// for the built-in ones. For f: inputs -> out it seeds backward with fixed random weights R, so
// every output element counts, and compares each input element's gradient with the central
// difference (L(x + eps) - L(x - eps)) / (2 eps) of L = sum(R * f(x)), accumulated in double.
// Tensors hold float32, so eps is larger than a double-precision check would take (1e-2 default).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tensor.h"

namespace tinygpt {

struct GradCheckOptions {
  double eps = 1e-2;    // the perturbation of one element
  double atol = 5e-3;   // |analytic - numeric| <= atol + rtol |numeric| passes
  double rtol = 1e-2;
  uint64_t seed = 12345;  // of the weights R
};

struct GradCheckResult {
  bool ok = true;
  int64_t input = -1, element = -1;  // the first element that failed (row-major), when !ok
  double analytic = 0, numeric = 0;
  int64_t checked = 0;               // elements compared
  std::string message() const;       // "input 1, element 7: analytic 0.5, numeric 0.25" or "ok (...)"
};

// Every input is made a leaf that requires a gradient (its old gradient dropped). f must compute
// the same function each call (no dropout with changing seeds) and use the inputs as given.
GradCheckResult gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& f, std::vector<Tensor> inputs,
                          const GradCheckOptions& options = {});

// The comparison alone, once backward has filled the inputs' gradients: the central difference of
// the caller's scalar `loss` (which must compute with gradients off) at each element of each input.
GradCheckResult compare_with_finite_differences(const std::function<double()>& loss, const std::vector<Tensor>& inputs,
                                               const GradCheckOptions& options = {});

}  // namespace tinygpt
