#pragma once
// The finite-difference gradient check every op's test uses.
//
// For f: inputs -> out, it seeds backward with fixed random weights R (so every output element
// counts), and compares each input's analytic gradient with the central difference
//   (L(x + eps) - L(x - eps)) / (2 eps),  L = sum(R * f(x)) accumulated in double.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "tinygpt/autograd/graph.h"
#include "tinygpt/autograd/ops.h"

namespace tinygpt::testing {

struct GradCheckOptions {
  double eps = 1e-2;
  double atol = 5e-3;
  double rtol = 1e-2;
};

// Compares, for every element of every tensor in `xs`, its analytic gradient (already computed by
// backward) with the central difference of `loss`, perturbing the element in place (through the
// tensor's strides, so views work). `loss` must compute in NoGrad mode.
inline void check_against_finite_differences(const std::function<double()>& loss, const std::vector<Tensor>& xs,
                                             const std::vector<std::string>& names, GradCheckOptions opt = {}) {
  for (size_t n = 0; n < xs.size(); ++n) {
    const Tensor& x = xs[n];
    INFO("input " << names[n]);
    REQUIRE(x.has_grad());
    const std::vector<float> analytic = x.grad().to_vector();
    for (int64_t i = 0; i < x.numel(); ++i) {
      int64_t offset = 0, rest = i;
      for (int64_t d = x.dim() - 1; d >= 0; --d) {
        offset += (rest % x.shape()[d]) * x.strides()[d];
        rest /= x.shape()[d];
      }
      float& xi = x.data()[offset];
      const float saved = xi;
      xi = static_cast<float>(saved + opt.eps);
      const double up = loss();
      xi = static_cast<float>(saved - opt.eps);
      const double down = loss();
      xi = saved;
      const double numeric = (up - down) / (2 * opt.eps);
      INFO(fmt::format("element {}: analytic {} numeric {}", i, analytic[i], numeric));
      REQUIRE(std::abs(analytic[i] - numeric) <= opt.atol + opt.rtol * std::abs(numeric));
    }
  }
}

// Gradient check of f: inputs -> tensor, seeded with fixed random weights R (every output counts):
// L = sum(R * f(x)), accumulated in double.
inline void check_gradients(const std::function<Tensor(const std::vector<Tensor>&)>& f, std::vector<Tensor> inputs,
                            GradCheckOptions opt = {}) {
  for (Tensor& x : inputs) x.zero_grad(), x.set_requires_grad(true);
  Tensor out = f(inputs);
  const Tensor R = Tensor::uniform(out.shape(), 12345, -1.0f, 1.0f);
  const std::vector<float> r = R.to_vector();
  out.backward(R);
  auto loss = [&] {
    NoGradGuard no_grad;
    std::vector<float> y = f(inputs).to_vector();
    double s = 0.0;
    for (size_t i = 0; i < y.size(); ++i) s += static_cast<double>(r[i]) * y[i];
    return s;
  };
  std::vector<std::string> names;
  for (size_t n = 0; n < inputs.size(); ++n) names.push_back(std::to_string(n));
  check_against_finite_differences(loss, inputs, names, opt);
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
