// Elementwise ops: broadcast binary arithmetic, scalar arithmetic, and unary math, each forward
// beside its backward.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>

#include "../graph.h"
#include "../inference.h"
#include "../elementary.h"
#include "../kernels/elementwise.h"
#include "../ops.h"
#include "../detail/bf16_operands.h"
#include "../detail/profile.h"
#include "../kernels/simd.h"

namespace tinygpt {

void coalesce(Shape& shape, memory::Vector<Strides*> stride_sets) {
  Shape s;
  memory::Vector<Strides> merged(stride_sets.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;  // size-1 axes never move the index
    bool can_merge = !s.empty();
    for (size_t k = 0; k < stride_sets.size() && can_merge; ++k)
      can_merge = merged[k].back() == (*stride_sets[k])[d] * shape[d];
    if (can_merge) {
      s.back() *= shape[d];
      for (size_t k = 0; k < stride_sets.size(); ++k) merged[k].back() = (*stride_sets[k])[d];
    } else {
      s.push_back(shape[d]);
      for (size_t k = 0; k < stride_sets.size(); ++k) merged[k].push_back((*stride_sets[k])[d]);
    }
  }
  shape = std::move(s);
  for (size_t k = 0; k < stride_sets.size(); ++k) *stride_sets[k] = std::move(merged[k]);
}

namespace {

// out = f(a, b) with broadcasting, read through any strides.
template <class F>
Tensor broadcast_apply(const Tensor& a, const Tensor& b, const Shape& shape, const F& f) {
  OpTimer timer("broadcast");
  Tensor out = Tensor::empty(shape);
  binary_map(shape, a.data(), broadcast_strides(a.shape(), a.strides(), shape), b.data(),
             broadcast_strides(b.shape(), b.strides(), shape), out.data(), f);
  return out;
}

// Adds the gradient `g` (of the broadcast shape) into t's gradient, summed down to t's shape.
void reduce_into(const Tensor& t, const Tensor& g) {
  if (t.defined() && t.shape() == g.shape()) return hand_on(t, g);
  bool fresh = false;
  if (float* sink = grad_sink(t, fresh)) sum_to(g.data(), g.shape(), sink, t.shape(), /*accumulate=*/!fresh);
}

// Adds f(g, other) (of the broadcast shape), summed down to t's shape, into t's gradient.
template <class F>
void reduce_into(const Tensor& t, const Tensor& g, const Tensor& other, const F& f) {
  if (t.requires_grad()) reduce_into(t, broadcast_apply(g, other, g.shape(), f));
}

template <class F>
Tensor binary(const Tensor& a, const Tensor& b, const char* op, const F& f) {
  return broadcast_apply(a, b, broadcast_shapes(a.shape(), b.shape(), op), f);
}

// y = f(x) elementwise; the backward adds g * dy/dx, given by dfdx(x, y).
template <class F, class DF>
Tensor unary(const Tensor& input, const char* op, const F& f, const DF& dfdx) {
  OpTimer timer(op);
  Tensor x = input.contiguous();
  Tensor out = Tensor::empty(x.shape());
  const float* px = x.data();
  float* py = out.data();
  parallel_for(x.numel(), 16384, [&](int64_t i0, int64_t i1) {
    simd::fused([=] {  // by value: a store through py could otherwise alias a captured pointer
      for (int64_t i = i0; i < i1; ++i) py[i] = f(px[i]);
    });
  });
  return attach(out, op, {x}, [x, dfdx](const Tensor& y, const Tensor& g) {
    float* sink = grad_sink(x);
    if (!sink) return;
    const float *px = x.data(), *py = y.data(), *pg = g.data();
    parallel_for(x.numel(), 16384, [&](int64_t i0, int64_t i1) {
      simd::fused([=] {
        for (int64_t i = i0; i < i1; ++i) sink[i] += pg[i] * dfdx(px[i], py[i]);
      });
    });
  });
}

}  // namespace

Tensor add(const Tensor& a, const Tensor& b) {
  Tensor out = binary(a, b, "add", [](float x, float y) { return x + y; });
  return attach(out, "add", {a, b}, [a, b](const Tensor&, const Tensor& g) {
    reduce_into(a, g);
    reduce_into(b, g);
  });
}

Tensor sub(const Tensor& a, const Tensor& b) {
  Tensor out = binary(a, b, "sub", [](float x, float y) { return x - y; });
  return attach(out, "sub", {a, b}, [a, b](const Tensor&, const Tensor& g) {
    reduce_into(a, g);
    reduce_into(b, g, b, [](float gi, float) { return -gi; });
  });
}

Tensor mul(const Tensor& a, const Tensor& b) {
  Tensor out = binary(a, b, "mul", [](float x, float y) { return x * y; });
  return attach(out, "mul", {a, b}, [a, b](const Tensor&, const Tensor& g) {
    reduce_into(a, g, b, [](float gi, float bi) { return gi * bi; });
    reduce_into(b, g, a, [](float gi, float ai) { return gi * ai; });
  });
}

Tensor div(const Tensor& a, const Tensor& b) {
  Tensor out = binary(a, b, "div", [](float x, float y) { return x / y; });
  return attach(out, "div", {a, b}, [a, b](const Tensor& y, const Tensor& g) {
    reduce_into(a, g, b, [](float gi, float bi) { return gi / bi; });
    if (b.requires_grad()) {  // d(a/b)/db = -(a/b)/b
      Tensor g_times_y = broadcast_apply(g, y, g.shape(), [](float gi, float yi) { return -gi * yi; });
      reduce_into(b, g_times_y, b, [](float gy, float bi) { return gy / bi; });
    }
  });
}

Tensor add_scalar(const Tensor& x, float s) {
  return unary(x, "add_scalar", [s](float v) { return v + s; }, [](float, float) { return 1.0f; });
}
Tensor mul_scalar(const Tensor& x, float s) {
  return unary(x, "mul_scalar", [s](float v) { return v * s; }, [s](float, float) { return s; });
}
Tensor rsub_scalar(const Tensor& x, float s) {
  return unary(x, "rsub_scalar", [s](float v) { return s - v; }, [](float, float) { return -1.0f; });
}
Tensor neg(const Tensor& x) {
  return unary(x, "neg", [](float v) { return -v; }, [](float, float) { return -1.0f; });
}
Tensor exp(const Tensor& x) {
  return unary(x, "exp", [](float v) { return full_range_exp(v); }, [](float, float y) { return y; });
}
Tensor log(const Tensor& x) {
  return unary(x, "log", [](float v) { return vector_log(v); }, [](float v, float) { return 1.0f / v; });
}
Tensor tanh(const Tensor& x) {
  return unary(x, "tanh", [](float v) { return vector_tanh(v); }, [](float, float y) { return 1.0f - y * y; });
}
Tensor sqrt(const Tensor& x) {
  return unary(x, "sqrt", [](float v) { return std::sqrt(v); }, [](float, float y) { return 0.5f / y; });
}
Tensor sigmoid(const Tensor& x) {
  return unary(x, "sigmoid", stable_sigmoid, [](float, float y) { return y * (1.0f - y); });
}
Tensor silu(const Tensor& x) {  // x sigmoid(x); slope s (1 + x (1 - s)), s = sigmoid(x)
  return unary(x, "silu", [](float v) { return v * stable_sigmoid(v); },
               [](float v, float) {
                 const float s = stable_sigmoid(v);
                 return s * (1.0f + v * (1.0f - s));
               });
}
Tensor pow(const Tensor& x, float p) {
  return unary(x, "pow", [p](float v) { return std::pow(v, p); },
               [p](float v, float) { return p == 0.0f ? 0.0f : p * std::pow(v, p - 1.0f); });
}
Tensor abs(const Tensor& x) {  // slope 0 at 0, as PyTorch
  return unary(x, "abs", [](float v) { return std::abs(v); },
               [](float v, float) { return v > 0.0f ? 1.0f : v < 0.0f ? -1.0f : 0.0f; });
}
Tensor erf(const Tensor& x) {  // slope 2/sqrt(pi) e^(-x²)
  return unary(x, "erf", [](float v) { return std::erf(v); },
               [](float v, float) { return 1.1283791670955126f * full_range_exp(-v * v); });
}
Tensor atan(const Tensor& x) {
  return unary(x, "atan", [](float v) { return std::atan(v); }, [](float v, float) { return 1.0f / (1.0f + v * v); });
}
Tensor log2(const Tensor& x) {
  return unary(x, "log2", [](float v) { return std::log2(v); },
               [](float v, float) { return 1.0f / (v * 0.6931471805599453f); });
}
Tensor log10(const Tensor& x) {
  return unary(x, "log10", [](float v) { return std::log10(v); },
               [](float v, float) { return 1.0f / (v * 2.302585092994046f); });
}
Tensor rsqrt(const Tensor& x) {  // slope -x^(-3/2) / 2 = -y³ / 2
  return unary(x, "rsqrt", [](float v) { return 1.0f / std::sqrt(v); }, [](float, float y) { return -0.5f * y * y * y; });
}
Tensor reciprocal(const Tensor& x) {
  return unary(x, "reciprocal", [](float v) { return 1.0f / v; }, [](float, float y) { return -y * y; });
}
Tensor sign(const Tensor& x) {
  return unary(x, "sign", [](float v) { return v > 0.0f ? 1.0f : v < 0.0f ? -1.0f : v; }, [](float, float) { return 0.0f; });
}
Tensor floor(const Tensor& x) {
  return unary(x, "floor", [](float v) { return std::floor(v); }, [](float, float) { return 0.0f; });
}
Tensor ceil(const Tensor& x) {
  return unary(x, "ceil", [](float v) { return std::ceil(v); }, [](float, float) { return 0.0f; });
}
Tensor round(const Tensor& x) {
  return unary(x, "round", [](float v) { return std::nearbyint(v); }, [](float, float) { return 0.0f; });
}
Tensor relu(const Tensor& x) {
  return unary(x, "relu", [](float v) { return v > 0.0f ? v : 0.0f; },
               [](float v, float) { return v > 0.0f ? 1.0f : 0.0f; });
}
Tensor leaky_relu(const Tensor& x, float slope) {
  return unary(x, "leaky_relu", [slope](float v) { return v > 0.0f ? v : slope * v; },
               [slope](float v, float) { return v > 0.0f ? 1.0f : slope; });
}
Tensor sin(const Tensor& x) {
  return unary(x, "sin", [](float v) { return std::sin(v); }, [](float v, float) { return std::cos(v); });
}
Tensor cos(const Tensor& x) {
  return unary(x, "cos", [](float v) { return std::cos(v); }, [](float v, float) { return -std::sin(v); });
}
Tensor log1p(const Tensor& x) {
  return unary(x, "log1p", [](float v) { return vector_log1p(v); }, [](float v, float) { return 1.0f / (1.0f + v); });
}
Tensor softplus(const Tensor& x) {  // log(1 + e^x) without overflow; slope sigmoid(x)
  return unary(x, "softplus", [](float v) { return std::max(v, 0.0f) + vector_log1p(full_range_exp(-std::abs(v))); },
               [](float v, float) { return stable_sigmoid(v); });
}
Tensor clamp(const Tensor& x, float lo, float hi) {  // the gradient passes where lo < x < hi, as PyTorch (ends included)
  if (!(lo <= hi)) throw std::invalid_argument(fmt::format("clamp: lo {} is above hi {}", lo, hi));
  return unary(x, "clamp", [lo, hi](float v) { return std::min(std::max(v, lo), hi); },
               [lo, hi](float v, float) { return v >= lo && v <= hi ? 1.0f : 0.0f; });
}

// GELU, tanh approximation (docs/architectures.md, the model): 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3),
// computed as x sigmoid(2u) (gelu_sigmoid). Its own loops: std::tanh would keep them scalar, and GELU is a
// large share of a step.
void gelu_row(const float* x, int64_t n, float* y) {
  constexpr float kS = 0.7978845608028654f, kC = 0.044715f;
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    y[i] = v * gelu_sigmoid(kS * std::fma(kC * v * v, v, v));
  }
}

namespace {

// dx = g * dy/dx over n values, written or (Add) added: dy/dx = 0.5 (1 + t) + 0.5 x (1 - t^2)
// sqrt(2/pi) (1 + 3 * 0.044715 x^2), t = tanh(u); with s = sigmoid(2u) = 0.5 (1 + t),
// 0.5 (1 - t^2) = 2 s (1 - s). The rows never overlap (restrict lets the loop vectorize).
template <bool Add>
void gelu_backward_row(const float* __restrict x, const float* __restrict g, int64_t n, float* __restrict dx) {
  constexpr float kS = 0.7978845608028654f, kC = 0.044715f;
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i], s = gelu_sigmoid(kS * std::fma(kC * v * v, v, v));
    const float d = g[i] * std::fma(2.0f * kS * v * (s - s * s), std::fma(3.0f * kC * v, v, 1.0f), s);
    dx[i] = Add ? dx[i] + d : d;
  }
}

}  // namespace

Tensor gelu(const Tensor& input) { return gelu(input, Readers::anyone); }

Tensor gelu(const Tensor& input, Readers readers) {
  OpTimer timer("gelu");
  const Tensor x = input.contiguous();
  Tensor out = Tensor::empty(x.shape());
  const float* px = x.data();
  float* py = out.data();
  const bool round = detail::stores_rounded(readers);
  parallel_for(x.numel(), 16384, [&](int64_t i0, int64_t i1) {
    constexpr int64_t kPiece = 2048;  // floats: 8 KB, rounded while in L1
    for (int64_t i = i0; i < i1; i += kPiece) {
      const int64_t n = std::min(kPiece, i1 - i);
      simd::fused([&] { gelu_row(px + i, n, py + i); });
      if (round) detail::round_in_place(py + i, n);
    }
  });
  if (round) detail::mark_bf16_exact(out);
  return attach(out, "gelu", {x}, [x](const Tensor&, const Tensor& g) {
    bool fresh = false;  // GELU is usually its input's only consumer: write, skip zeroing and re-reading
    float* sink = grad_sink(x, fresh);
    if (!sink) return;
    const float *px = x.data(), *pg = g.data();
    parallel_for(x.numel(), 16384, [&](int64_t i0, int64_t i1) {
      simd::fused([&] {
        if (fresh) gelu_backward_row<false>(px + i0, pg + i0, i1 - i0, sink + i0);
        else gelu_backward_row<true>(px + i0, pg + i0, i1 - i0, sink + i0);
      });
    });
  });
}

namespace {
// The larger (or smaller) of a and b; the gradient goes to the one chosen, half to each on a tie,
// and whole to both where either is NaN (the output is NaN: it was not chosen from one), as
// PyTorch's maximum/minimum.
Tensor extreme(const Tensor& a, const Tensor& b, bool larger, const char* op) {
  Tensor out = binary(a, b, op, [larger](float x, float y) {
    if (std::isnan(x) || std::isnan(y)) return x + y;  // NaN wins, as in PyTorch
    return larger ? std::max(x, y) : std::min(x, y);
  });
  return attach(out, op, {a, b}, [a, b, larger](const Tensor&, const Tensor& g) {
    // The part of the gradient at each output element that x's side receives: none where the
    // other side was chosen.
    auto share = [larger](float x, float y) {
      if (x == y) return 0.5f;
      return (larger ? x < y : x > y) ? 0.0f : 1.0f;
    };
    const Tensor share_a = binary(a, b, "share", share);
    const Tensor share_b = binary(b, a, "share", share);
    reduce_into(a, g, share_a, [](float gi, float si) { return gi * si; });
    reduce_into(b, g, share_b, [](float gi, float si) { return gi * si; });
  });
}

template <class F>
Tensor comparison(const Tensor& a, const Tensor& b, const char* op, const F& holds) {
  return binary(a, b, op, [holds](float x, float y) { return holds(x, y) ? 1.0f : 0.0f; });
}
}  // namespace

Tensor maximum(const Tensor& a, const Tensor& b) { return extreme(a, b, true, "maximum"); }
Tensor minimum(const Tensor& a, const Tensor& b) { return extreme(a, b, false, "minimum"); }

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  const Shape shape = broadcast_shapes(a.shape(), b.shape(), "allclose");
  const Tensor av = a.expand(shape).contiguous(), bv = b.expand(shape).contiguous();
  const float *pa = av.data(), *pb = bv.data();
  for (int64_t i = 0; i < av.numel(); ++i) {
    const double x = pa[i], y = pb[i];
    if (std::isnan(x) || std::isnan(y)) {
      if (equal_nan && std::isnan(x) && std::isnan(y)) continue;
      return false;
    }
    if (x == y) continue;  // equal infinities
    if (!(std::abs(x - y) <= atol + rtol * std::abs(y))) return false;
  }
  return true;
}

Tensor eq(const Tensor& a, const Tensor& b) { return comparison(a, b, "eq", std::equal_to<float>()); }
Tensor ne(const Tensor& a, const Tensor& b) { return comparison(a, b, "ne", std::not_equal_to<float>()); }
Tensor lt(const Tensor& a, const Tensor& b) { return comparison(a, b, "lt", std::less<float>()); }
Tensor le(const Tensor& a, const Tensor& b) { return comparison(a, b, "le", std::less_equal<float>()); }
Tensor gt(const Tensor& a, const Tensor& b) { return comparison(a, b, "gt", std::greater<float>()); }
Tensor ge(const Tensor& a, const Tensor& b) { return comparison(a, b, "ge", std::greater_equal<float>()); }

}  // namespace tinygpt
