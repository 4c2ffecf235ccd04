// SwiGLU, Llama's feed-forward gate: a fused Linear's output x [..., 2H] holds the gate g (first H
// columns) and the up projection u (last H) side by side, and
//   y = silu(g) * u,   silu(g) = g / (1 + e^-g)                                  [..., H]
//   dg = dy * u * silu'(g),  silu'(g) = s (1 + g (1 - s)),  s = 1 / (1 + e^-g);   du = dy * silu(g)
#include <fmt/format.h>

#include <stdexcept>

#include "../graph.h"
#include "../inference.h"
#include "../elementary.h"
#include "../ops.h"
#include "../kernels/parallel.h"
#include "../detail/bf16_operands.h"
#include "../detail/profile.h"
#include "../kernels/simd.h"

namespace tinygpt {

void swiglu_row(const float* gate_up, int64_t H, float* y) {
  const float *g = gate_up, *u = gate_up + H;
  for (int64_t j = 0; j < H; ++j) y[j] = g[j] / (1.0f + vector_exp(-g[j])) * u[j];
}

namespace {

// One row's gradients dg, du from the gate g, the up projection u and dy: written, or added when
// Add. The five rows never overlap (restrict lets the loop vectorize).
template <bool Add>
void swiglu_backward_row(const float* __restrict g, const float* __restrict u, const float* __restrict dy,
                         float* __restrict dg, float* __restrict du, int64_t H) {
  for (int64_t j = 0; j < H; ++j) {
    const float s = 1.0f / (1.0f + vector_exp(-g[j]));
    const float grad_g = dy[j] * u[j] * s * (1.0f + g[j] * (1.0f - s)), grad_u = dy[j] * g[j] * s;
    dg[j] = Add ? dg[j] + grad_g : grad_g;
    du[j] = Add ? du[j] + grad_u : grad_u;
  }
}

}  // namespace

Tensor swiglu(const Tensor& input) { return swiglu(input, Readers::anyone); }

Tensor swiglu(const Tensor& input, Readers readers) {
  OpTimer timer("swiglu");
  const int64_t H2 = input.dim() ? input.shape().back() : 0;
  if (input.dim() < 1 || H2 % 2 != 0 || H2 == 0)
    throw std::invalid_argument(fmt::format("swiglu: input {} needs a last axis of 2H (gate, then up projection)",
                                            to_string(input.shape())));
  const Tensor x = input.contiguous();
  const int64_t H = H2 / 2, rows = x.numel() / H2;
  Shape shape = x.shape();
  shape.back() = H;
  Tensor out = Tensor::empty(shape);
  const bool round = detail::stores_rounded(readers);
  parallel_for(rows, grain_for(4 * H), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      simd::fused([&] { swiglu_row(x.data() + r * H2, H, out.data() + r * H); });
      if (round) detail::round_in_place(out.data() + r * H, H);  // while in L1
    }
  });
  if (round) detail::mark_bf16_exact(out);
  return attach(out, "swiglu", {x}, [x, rows, H](const Tensor&, const Tensor& dy) {
    bool fresh = false;
    float* sink = grad_sink(x, fresh);
    if (!sink) return;
    parallel_for(rows, grain_for(8 * H), [&](int64_t r0, int64_t r1) { simd::fused([&] {
      for (int64_t r = r0; r < r1; ++r) {
        const float *g = x.data() + r * 2 * H, *d = dy.data() + r * H;
        float* dg = sink + r * 2 * H;
        if (fresh) swiglu_backward_row<false>(g, g + H, d, dg, dg + H, H);
        else swiglu_backward_row<true>(g, g + H, d, dg, dg + H, H);
      }
    }); });
  });
}

}  // namespace tinygpt
