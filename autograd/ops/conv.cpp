// Convolution and pooling over the last two axes of [N, C, H, W] (conv1d: one axis, as H = 1).
// conv2d unrolls every sample's receptive fields into columns (im2col) and multiplies them by the
// weights with the GEMM kernel, one product per group over the whole batch:
//   cols [C/g kh kw, N OH OW]; out_g [O/g, N OH OW] = W_g [O/g, C/g kh kw] · cols (+ bias)
// Backward, per group (GEMM's sums and col2im's run in a fixed order: the same bits for any
// thread count):
//   dW_g += dOut_g · colsᵀ;  dcols = W_gᵀ · dOut_g, added back into dx where each column came
//   from (col2im);  dbias += dOut's row sums.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "../detail/profile.h"
#include "../graph.h"
#include "../kernels/gemm.h"
#include "../kernels/parallel.h"
#include "../ops.h"

namespace tinygpt {

namespace {

// The geometry of one 2-d window sweep: input [C, H, W], kernel [kh, kw], output [OH, OW].
struct Sweep {
  int64_t C, H, W, kh, kw, OH, OW;
  Window2d w;
  int64_t in_row(int64_t oh, int64_t i) const { return oh * w.stride[0] - w.padding[0] + i * w.dilation[0]; }
  int64_t in_col(int64_t ow, int64_t j) const { return ow * w.stride[1] - w.padding[1] + j * w.dilation[1]; }
};

int64_t output_size(int64_t in, int64_t k, int64_t stride, int64_t padding, int64_t dilation) {
  return (in + 2 * padding - dilation * (k - 1) - 1) / stride + 1;
}

Sweep sweep_of(const char* op, const Shape& x, int64_t kh, int64_t kw, const Window2d& w) {
  if (x.size() != 4)
    throw std::invalid_argument(fmt::format("{}: input {} is not [N, C, H, W]", op, to_string(x)));
  for (int d = 0; d < 2; ++d)
    if (w.stride[d] < 1 || w.padding[d] < 0 || w.dilation[d] < 1)
      throw std::invalid_argument(fmt::format("{}: stride {}, padding {}, dilation {} (strides and dilations are at "
                                              "least 1, paddings at least 0)", op, w.stride[d], w.padding[d],
                                              w.dilation[d]));
  Sweep s{x[1], x[2], x[3], kh, kw, 0, 0, w};
  s.OH = output_size(s.H, kh, w.stride[0], w.padding[0], w.dilation[0]);
  s.OW = output_size(s.W, kw, w.stride[1], w.padding[1], w.dilation[1]);
  if (kh < 1 || kw < 1 || s.OH < 1 || s.OW < 1)
    throw std::invalid_argument(fmt::format("{}: a {}x{} kernel (dilation {}, {}; padding {}, {}) does not fit input {}",
                                            op, kh, kw, w.dilation[0], w.dilation[1], w.padding[0], w.padding[1],
                                            to_string(x)));
  return s;
}

// cols[(c, i, j), (n, oh, ow)] = x[n, c0 + c, in_row, in_col], 0 in the padding: every sample's
// receptive fields side by side (row length N OH OW), channels c0 .. c0 + Cg of each; or, with
// Layout::transposed, the same matrix stored as [N OH OW, Cg kh kw] (the backward's dW product
// then reads both operands along their rows). Threads share (n, c) pairs, each writing its own part.
enum class Layout { fields_in_rows, transposed };

void im2col(const float* x, const Sweep& s, int64_t N, int64_t c0, int64_t Cg, float* cols, Layout layout) {
  const int64_t P = s.OH * s.OW, K = Cg * s.kh * s.kw;
  const int64_t k_step = layout == Layout::transposed ? 1 : N * P, q_step = layout == Layout::transposed ? K : 1;
  parallel_for(N * Cg, 1, [&](int64_t q0, int64_t q1) {
    for (int64_t q = q0; q < q1; ++q) {
      const int64_t n = q / Cg, c = q % Cg;
      const float* plane = x + (n * s.C + c0 + c) * s.H * s.W;
      for (int64_t i = 0; i < s.kh; ++i)
        for (int64_t j = 0; j < s.kw; ++j) {
          float* field = cols + ((c * s.kh + i) * s.kw + j) * k_step + n * P * q_step;
          for (int64_t oh = 0; oh < s.OH; ++oh) {
            const int64_t h = s.in_row(oh, i);
            for (int64_t ow = 0; ow < s.OW; ++ow) {
              const int64_t w = s.in_col(ow, j);
              field[(oh * s.OW + ow) * q_step] = h >= 0 && h < s.H && w >= 0 && w < s.W ? plane[h * s.W + w] : 0.0f;
            }
          }
        }
    }
  });
}

// The inverse gather: dx[n, c0 + c, in_row, in_col] += dcols[(c, i, j), (n, oh, ow)]. Threads
// share (n, c) pairs, each adding into its own plane in (i, j, oh, ow) order: the same bits for
// any thread count.
void col2im(const float* dcols, const Sweep& s, int64_t N, int64_t c0, int64_t Cg, float* dx) {
  const int64_t P = s.OH * s.OW, ld = N * P;
  parallel_for(N * Cg, 1, [&](int64_t q0, int64_t q1) {
    for (int64_t q = q0; q < q1; ++q) {
      const int64_t n = q / Cg, c = q % Cg;
      float* plane = dx + (n * s.C + c0 + c) * s.H * s.W;
      for (int64_t i = 0; i < s.kh; ++i)
        for (int64_t j = 0; j < s.kw; ++j) {
          const float* row = dcols + ((c * s.kh + i) * s.kw + j) * ld + n * P;
          for (int64_t oh = 0; oh < s.OH; ++oh) {
            const int64_t h = s.in_row(oh, i);
            if (h < 0 || h >= s.H) continue;
            for (int64_t ow = 0; ow < s.OW; ++ow) {
              const int64_t w = s.in_col(ow, j);
              if (w >= 0 && w < s.W) plane[h * s.W + w] += row[oh * s.OW + ow];
            }
          }
        }
    }
  });
}

MatrixView rows_of(const float* data, int64_t cols) { return {data, cols, 1}; }

}  // namespace

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, const Conv2dOptions& o) {
  OpTimer timer("conv2d");
  if (weight.dim() != 4)
    throw std::invalid_argument(fmt::format("conv2d: weight {} is not [O, C/groups, kh, kw]", to_string(weight.shape())));
  const Sweep s = sweep_of("conv2d", input.shape(), weight.size(2), weight.size(3), o.window);
  const int64_t N = input.size(0), O = weight.size(0), G = o.groups;
  if (G < 1 || s.C % G != 0 || O % G != 0 || weight.size(1) != s.C / G)
    throw std::invalid_argument(fmt::format("conv2d: weight {} and {} groups do not fit input {} ({} channels)",
                                            to_string(weight.shape()), G, to_string(input.shape()), s.C));
  if (bias.defined() && bias.shape() != Shape{O})
    throw std::invalid_argument(fmt::format("conv2d: bias {} for {} output channels", to_string(bias.shape()), O));
  const Tensor x = input.contiguous(), wt = weight.contiguous();
  const int64_t Cg = s.C / G, Og = O / G, K = Cg * s.kh * s.kw, P = s.OH * s.OW, NP = N * P;
  Tensor out = Tensor::empty({N, O, s.OH, s.OW});
  // Scratch from the memory pool (memory.h), left unwritten until written: a fresh 20 MB
  // std::vector costs more in page faults and zeros than the product itself.
  const Tensor cols = Tensor::empty({K, NP}), y = Tensor::empty({Og, NP});
  for (int64_t g = 0; g < G; ++g) {
    im2col(x.data(), s, N, g * Cg, Cg, cols.data(), Layout::fields_in_rows);
    gemm(Og, NP, K, rows_of(wt.data() + g * Og * K, K), rows_of(cols.data(), NP), y.data(), NP, false);  // [Og, N P]
    parallel_for(N * Og, 1, [&](int64_t q0, int64_t q1) {  // to [N, O, P], the bias added
      for (int64_t q = q0; q < q1; ++q) {
        const int64_t n = q / Og, oc = q % Og;
        const float b = bias.defined() ? bias.data()[g * Og + oc] : 0.0f;
        const float* from = y.data() + oc * NP + n * P;
        float* to = out.data() + (n * O + g * Og + oc) * P;
        for (int64_t p = 0; p < P; ++p) to[p] = from[p] + b;
      }
    });
  }
  return attach(out, "conv2d", {x, wt, bias}, [x, wt, bias, s, N, O, G, Cg, Og, K, P, NP](const Tensor&, const Tensor& g) {
    float* dx = grad_sink(x);
    float* dw = grad_sink(wt);
    float* db = grad_sink(bias);
    const Tensor cols = dw ? Tensor::empty({NP, K}) : Tensor(), dcols = dx ? Tensor::empty({K, NP}) : Tensor(),
                 dy = Tensor::empty({Og, NP});
    for (int64_t grp = 0; grp < G; ++grp) {
      parallel_for(N * Og, 1, [&](int64_t q0, int64_t q1) {  // this group's gradient as [Og, N P]
        for (int64_t q = q0; q < q1; ++q) {
          const int64_t n = q / Og, oc = q % Og;
          std::copy_n(g.data() + (n * O + grp * Og + oc) * P, P, dy.data() + oc * NP + n * P);
        }
      });
      if (dw) {
        im2col(x.data(), s, N, grp * Cg, Cg, cols.data(), Layout::transposed);  // colsᵀ [N P, K]
        gemm(Og, K, NP, rows_of(dy.data(), NP), rows_of(cols.data(), K), dw + grp * Og * K, K, true);
      }
      if (dx) {
        gemm(K, NP, Og, rows_of(wt.data() + grp * Og * K, K).transposed(), rows_of(dy.data(), NP), dcols.data(), NP,
             false);
        col2im(dcols.data(), s, N, grp * Cg, Cg, dx);
      }
      if (db)
        for (int64_t oc = 0; oc < Og; ++oc) {
          double total = 0;
          for (int64_t q = 0; q < NP; ++q) total += dy.data()[oc * NP + q];
          db[grp * Og + oc] += static_cast<float>(total);
        }
    }
  });
}

Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, const Conv1dOptions& o) {
  if (input.dim() != 3 || weight.dim() != 3)
    throw std::invalid_argument(fmt::format("conv1d: input {} is not [N, C, L] or weight {} not [O, C/groups, k]",
                                            to_string(input.shape()), to_string(weight.shape())));
  const Window2d w{{1, o.stride}, {0, o.padding}, {1, o.dilation}};
  const Tensor y = conv2d(input.unsqueeze(2), weight.unsqueeze(2), bias, {.window = w, .groups = o.groups});
  return y.squeeze(2);
}

namespace {

// Each output element's window reduced by `kind`; the positions a max came from kept for backward.
enum class Pool { max, average };

Tensor pool2d(const Tensor& input, const Pool2dOptions& o, Pool kind) {
  const char* op = kind == Pool::max ? "max_pool2d" : "avg_pool2d";
  OpTimer timer(op);
  const int64_t kh = o.kernel[0], kw = o.kernel[1];
  const Window2d window{{o.stride[0] ? o.stride[0] : kh, o.stride[1] ? o.stride[1] : kw}, o.padding, {1, 1}};
  const Sweep s = sweep_of(op, input.shape(), kh, kw, window);
  for (int d = 0; d < 2; ++d)
    if (2 * window.padding[d] > o.kernel[d])
      throw std::invalid_argument(fmt::format("{}: padding {} is more than half the {}x{} kernel", op,
                                              window.padding[d], kh, kw));
  const Tensor x = input.contiguous();
  const int64_t planes = input.size(0) * s.C, P = s.OH * s.OW;
  Tensor out = Tensor::empty({input.size(0), s.C, s.OH, s.OW});
  std::vector<int64_t> from(kind == Pool::max ? static_cast<size_t>(planes * P) : 0);
  parallel_for(planes, 1, [&](int64_t p0, int64_t p1) {
    for (int64_t plane = p0; plane < p1; ++plane)
      for (int64_t oh = 0; oh < s.OH; ++oh)
        for (int64_t ow = 0; ow < s.OW; ++ow) {
          const float* in = x.data() + plane * s.H * s.W;
          float best = -std::numeric_limits<float>::infinity(), total = 0;
          int64_t at = -1;
          for (int64_t i = 0; i < kh; ++i)
            for (int64_t j = 0; j < kw; ++j) {
              const int64_t h = s.in_row(oh, i), w = s.in_col(ow, j);
              if (h < 0 || h >= s.H || w < 0 || w >= s.W) continue;
              const float v = in[h * s.W + w];
              total += v;
              if (at < 0 || v > best || (std::isnan(v) && !std::isnan(best))) {  // the first NaN wins, as torch's
                best = v;
                at = h * s.W + w;
              }
            }
          const int64_t o = plane * P + oh * s.OW + ow;
          if (kind == Pool::max) out.data()[o] = best, from[o] = at;
          else out.data()[o] = total / static_cast<float>(kh * kw);  // the padding counts, as torch's default
        }
  });
  return attach(out, op, {x}, [x, s, kh, kw, planes, P, kind, from = std::move(from)](const Tensor&, const Tensor& g) {
    float* dx = grad_sink(x);
    if (!dx) return;
    parallel_for(planes, 1, [&](int64_t p0, int64_t p1) {
      for (int64_t plane = p0; plane < p1; ++plane) {
        float* d = dx + plane * s.H * s.W;
        for (int64_t oh = 0; oh < s.OH; ++oh)
          for (int64_t ow = 0; ow < s.OW; ++ow) {
            const int64_t o = plane * P + oh * s.OW + ow;
            if (kind == Pool::max) {
              d[from[o]] += g.data()[o];
              continue;
            }
            const float share = g.data()[o] / static_cast<float>(kh * kw);
            for (int64_t i = 0; i < kh; ++i)
              for (int64_t j = 0; j < kw; ++j) {
                const int64_t h = s.in_row(oh, i), w = s.in_col(ow, j);
                if (h >= 0 && h < s.H && w >= 0 && w < s.W) d[h * s.W + w] += share;
              }
          }
      }
    });
  });
}

}  // namespace

Tensor max_pool2d(const Tensor& x, const Pool2dOptions& options) { return pool2d(x, options, Pool::max); }
Tensor avg_pool2d(const Tensor& x, const Pool2dOptions& options) { return pool2d(x, options, Pool::average); }

}  // namespace tinygpt
