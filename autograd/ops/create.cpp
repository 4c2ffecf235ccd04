// Tensors made from a rule (arange, eye) or from a seed (randperm, randint, multinomial). Random
// ones draw from the project's Rng, so a seed gives the same values on every machine.
#include <fmt/format.h>

#include <cmath>
#include <numeric>
#include <stdexcept>

#include "../ops.h"
#include "../random.h"

namespace tinygpt {

Tensor arange(double start, double end, double step) {
  if (step == 0 || !std::isfinite(start) || !std::isfinite(end) || !std::isfinite(step))
    throw std::invalid_argument(fmt::format("arange: start {}, end {}, step {}: need finite numbers and step != 0",
                                            start, end, step));
  const double count = std::ceil((end - start) / step);
  if (count > 1e12) throw std::invalid_argument(fmt::format("arange: {} elements is too many", count));
  const int64_t n = count > 0 ? static_cast<int64_t>(count) : 0;
  Tensor out = Tensor::empty({n});
  for (int64_t i = 0; i < n; ++i) out.data()[i] = static_cast<float>(start + static_cast<double>(i) * step);
  return out;
}

// As torch.linspace: the first half counted up from start, the second down from end, so that both
// ends are exact (one step: start).
Tensor linspace(double start, double end, int64_t steps) {
  if (steps < 0 || steps > int64_t{1} << 40 || !std::isfinite(start) || !std::isfinite(end))
    throw std::invalid_argument(fmt::format("linspace: start {}, end {}, {} steps", start, end, steps));
  Tensor out = Tensor::empty({steps});
  const double step = steps > 1 ? (end - start) / static_cast<double>(steps - 1) : 0.0;
  for (int64_t i = 0; i < steps; ++i)
    out.data()[i] = static_cast<float>(i < steps / 2 || steps == 1 ? start + step * static_cast<double>(i)
                                                     : end - step * static_cast<double>(steps - 1 - i));
  return out;
}

Tensor eye(int64_t rows, int64_t cols) {
  if (cols < 0) cols = rows;
  Tensor out = Tensor::zeros({rows, cols});
  for (int64_t i = 0; i < std::min(rows, cols); ++i) out.data()[i * cols + i] = 1.0f;
  return out;
}

std::vector<int64_t> randperm(int64_t n, uint64_t seed) {
  if (n < 0) throw std::invalid_argument(fmt::format("randperm: n = {} is negative", n));
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  Rng rng(seed);
  for (int64_t i = n - 1; i > 0; --i) std::swap(order[i], order[rng.below(static_cast<uint64_t>(i) + 1)]);  // Fisher-Yates
  return order;
}

Indices randint(int64_t low, int64_t high, const Shape& shape, uint64_t seed) {
  if (low >= high) throw std::invalid_argument(fmt::format("randint: empty range [{}, {})", low, high));
  std::vector<int64_t> values(static_cast<size_t>(numel(shape)));
  Rng rng(seed);
  const uint64_t span = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  for (int64_t& v : values) v = low + static_cast<int64_t>(rng.below(span));
  return Indices(shape, std::move(values));
}

// Each row of probs [C] or [N, C] (nonnegative weights, not necessarily summing to 1) gives
// `samples` category numbers; without replacement a drawn category's weight drops to 0.
Indices multinomial(const Tensor& probs, int64_t samples, uint64_t seed, bool replacement) {
  if (probs.dim() != 1 && probs.dim() != 2)
    throw std::invalid_argument(fmt::format("multinomial: probabilities of shape {}: want [C] or [N, C]",
                                            to_string(probs.shape())));
  const int64_t rows = probs.dim() == 2 ? probs.shape()[0] : 1, C = probs.shape().back();
  if (samples < 0 || (!replacement && samples > C))
    throw std::invalid_argument(fmt::format("multinomial: {} samples from {} categories{}", samples, C,
                                            replacement ? "" : " without replacement"));
  const std::vector<float> p = probs.to_vector();
  std::vector<int64_t> drawn;
  drawn.reserve(static_cast<size_t>(rows * samples));
  Rng rng(seed);
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<double> w(p.begin() + r * C, p.begin() + (r + 1) * C);
    for (double v : w)
      if (!(v >= 0) || std::isinf(v))
        throw std::invalid_argument(fmt::format("multinomial: row {} holds {}, not a finite weight >= 0", r, v));
    for (int64_t s = 0; s < samples; ++s) {
      const double total = std::accumulate(w.begin(), w.end(), 0.0);
      if (!(total > 0)) throw std::invalid_argument(fmt::format("multinomial: row {} has no weight left", r));
      double u = rng.uniform() * total;
      int64_t c = 0;
      while (c < C - 1 && (u >= w[c] || w[c] == 0)) u -= w[c++];
      while (w[c] == 0) --c;  // rounding at the end: the last category with weight
      drawn.push_back(c);
      if (!replacement) w[c] = 0;
    }
  }
  return probs.dim() == 2 ? Indices({rows, samples}, std::move(drawn)) : Indices({samples}, std::move(drawn));
}

}  // namespace tinygpt
