#include "gradcheck.h"

#include <fmt/format.h>

#include <cmath>

#include "graph.h"

namespace tinygpt {

std::string GradCheckResult::message() const {
  if (ok) return fmt::format("ok ({} elements)", checked);
  return fmt::format("input {}, element {}: analytic {}, numeric {}", input, element, analytic, numeric);
}

GradCheckResult gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& f, std::vector<Tensor> inputs,
                          const GradCheckOptions& o) {
  for (Tensor& x : inputs) x.zero_grad(), x.set_requires_grad(true);
  const Tensor out = f(inputs);
  const Tensor R = Tensor::uniform(out.shape(), o.seed, -1.0f, 1.0f);
  const std::vector<float> r = R.to_vector();
  out.backward(R);
  auto loss = [&] {
    NoGradGuard no_grad;
    const std::vector<float> y = f(inputs).to_vector();
    double s = 0.0;
    for (size_t i = 0; i < y.size(); ++i) s += static_cast<double>(r[i]) * y[i];
    return s;
  };
  return compare_with_finite_differences(loss, inputs, o);
}

GradCheckResult compare_with_finite_differences(const std::function<double()>& loss, const std::vector<Tensor>& inputs,
                                               const GradCheckOptions& o) {
  GradCheckResult result;
  for (size_t n = 0; n < inputs.size(); ++n) {
    const Tensor& x = inputs[n];
    const std::vector<float> analytic = x.has_grad() ? x.grad().to_vector() : std::vector<float>(x.numel(), 0.0f);
    for (int64_t i = 0; i < x.numel(); ++i) {
      int64_t offset = 0, rest = i;  // element i through x's strides, so that views work
      for (int64_t d = x.dim() - 1; d >= 0; --d) {
        offset += (rest % x.shape()[d]) * x.strides()[d];
        rest /= x.shape()[d];
      }
      float& xi = x.data()[offset];
      const float saved = xi;
      xi = static_cast<float>(saved + o.eps);
      const double up = loss();
      xi = static_cast<float>(saved - o.eps);
      const double down = loss();
      xi = saved;
      const double numeric = (up - down) / (2 * o.eps);
      ++result.checked;
      if (!(std::abs(analytic[i] - numeric) <= o.atol + o.rtol * std::abs(numeric)))
        return {false, static_cast<int64_t>(n), i, analytic[i], numeric, result.checked};
    }
  }
  return result;
}

}  // namespace tinygpt
