#include "tinygpt/nn/sampling.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace tinygpt::nn {

int32_t pick_token(std::span<const float> logits, double temperature, int64_t top_k, double uniform) {
  const auto V = static_cast<int64_t>(logits.size());
  if (V == 0) throw std::invalid_argument("pick_token: no logits");
  if (!(temperature >= 0) || top_k < 0)
    throw std::invalid_argument(fmt::format("pick_token: temperature {} and top_k {} must not be negative", temperature,
                                            top_k));
  if (temperature == 0) return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
  const int64_t k = top_k > 0 ? std::min(top_k, V) : V;
  std::vector<int32_t> order(V);
  std::iota(order.begin(), order.end(), 0);
  const float top = *std::max_element(logits.begin(), logits.end());
  if (k < V) {  // the k most likely, highest first; ties by id, so the choice never depends on sort details
    std::partial_sort(order.begin(), order.begin() + k, order.end(),
                      [&](int32_t a, int32_t b) { return logits[a] != logits[b] ? logits[a] > logits[b] : a < b; });
  }  // all of them: in id order (a sort of a whole vocabulary would cost more than the model's step)
  std::vector<double> p(k);
  double total = 0;
  for (int64_t i = 0; i < k; ++i) total += (p[i] = std::exp((logits[order[i]] - top) / temperature));
  double r = uniform * total;
  for (int64_t i = 0; i < k; ++i)
    if ((r -= p[i]) < 0) return order[i];
  return order[k - 1];
}

}  // namespace tinygpt::nn
