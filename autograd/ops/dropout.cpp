// Inverted dropout with a counter-based mask: keep element i iff hash(seed, i) >= p, so the mask
// needs no storage, is recomputed exactly in backward, and does not depend on threads.
#include <fmt/format.h>

#include <stdexcept>

#include "../graph.h"
#include "../ops.h"
#include "../kernels/parallel.h"
#include "../detail/profile.h"
#include "../random.h"

namespace tinygpt {

namespace {
inline bool keep(uint64_t seed, int64_t i, float p) {
  const uint64_t h = splitmix64(seed ^ splitmix64(static_cast<uint64_t>(i)));
  return static_cast<float>(h >> 40) * 0x1.0p-24f >= p;  // 24 random bits: uniform in [0, 1)
}
}  // namespace

Tensor dropout(const Tensor& input, float p, uint64_t seed, bool training) {
  if (!(p >= 0.0f && p < 1.0f)) throw std::invalid_argument(fmt::format("dropout: probability {} not in [0, 1)", p));
  if (!training || p == 0.0f) return input;
  OpTimer timer("dropout");
  const Tensor x = input.contiguous();
  const float scale = 1.0f / (1.0f - p);
  Tensor out = Tensor::empty(x.shape());
  parallel_for(x.numel(), 16384, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) out.data()[i] = keep(seed, i, p) ? x.data()[i] * scale : 0.0f;
  });
  return attach(out, "dropout", {x}, [x, p, seed, scale](const Tensor&, const Tensor& g) {
    float* sink = grad_sink(x);
    if (!sink) return;
    parallel_for(x.numel(), 16384, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i)
        if (keep(seed, i, p)) sink[i] += g.data()[i] * scale;
    });
  });
}

}  // namespace tinygpt
