#pragma once
// The finite-difference gradient check every op's test uses: the installed one
// (autograd/gradcheck.h) as Catch assertions.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "tinygpt/autograd/gradcheck.h"
#include "tinygpt/autograd/graph.h"
#include "tinygpt/autograd/ops.h"

namespace tinygpt::testing {

// Compares, for every element of every tensor in `xs`, its analytic gradient (already computed by
// backward) with the central difference of `loss`, perturbing the element in place (through the
// tensor's strides, so views work). `loss` must compute in NoGrad mode.
inline void check_against_finite_differences(const std::function<double()>& loss, const std::vector<Tensor>& xs,
                                             const std::vector<std::string>& names, GradCheckOptions opt = {}) {
  const GradCheckResult result = compare_with_finite_differences(loss, xs, opt);
  INFO((result.ok ? std::string() : "input " + names.at(static_cast<size_t>(result.input)) + ": ") << result.message());
  REQUIRE(result.ok);
}

// The installed gradcheck (autograd/gradcheck.h), failing the test with its message.
inline void check_gradients(const std::function<Tensor(const std::vector<Tensor>&)>& f, std::vector<Tensor> inputs,
                            GradCheckOptions opt = {}) {
  const GradCheckResult result = gradcheck(f, std::move(inputs), opt);
  INFO(result.message());
  REQUIRE(result.ok);
}

// Element-by-element equality within a tolerance, with a useful message.
inline void require_close(const std::vector<float>& got, const std::vector<float>& want, double tol = 1e-5) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO(fmt::format("element {}: got {} want {}", i, got[i], want[i]));
    REQUIRE(std::abs(got[i] - want[i]) <= tol * (1.0 + std::abs(want[i])));
  }
}

}  // namespace tinygpt::testing
