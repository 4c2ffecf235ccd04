// LayerNorm over the last axis: y = (x - mean) * rstd * weight + bias, rstd = 1 / sqrt(var + eps).
#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "tinygpt/autograd/graph.h"
#include "tinygpt/autograd/kernels/rows.h"
#include "tinygpt/autograd/ops.h"
#include "tinygpt/autograd/profile.h"

namespace tinygpt {

namespace {
constexpr int64_t kRowsPerChunk = 32;  // fixed, so the weight/bias gradient sums never depend on threads
}

Tensor layer_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, float eps) {
  OpTimer timer("layer_norm");
  const int64_t C = input.dim() ? input.shape().back() : 0;
  if (input.dim() < 1 || weight.shape() != Shape{C} || bias.shape() != Shape{C})
    throw std::invalid_argument(fmt::format("layer_norm: input {} needs weight and bias [{}], got {} and {}",
                                            to_string(input.shape()), C, to_string(weight.shape()),
                                            to_string(bias.shape())));
  const Tensor x = input.contiguous(), w = weight.contiguous(), b = bias.contiguous();
  const int64_t rows = C ? x.numel() / C : 0;
  Tensor out = Tensor::empty(x.shape());
  auto mean = memory::make_shared<memory::Vector<float>>(rows);
  auto rstd = memory::make_shared<memory::Vector<float>>(rows);
  for_rows(rows, C, [&](int64_t r) {
    const float* xr = x.data() + r * C;
    const float m = row_sum(xr, C) / static_cast<float>(C);  // sums in lanes: vector speed, fixed bits
    const float v = sum_in_lanes<float>(0, C, [xr, m](int64_t j) { return (xr[j] - m) * (xr[j] - m); });
    const float s = 1.0f / std::sqrt(v / static_cast<float>(C) + eps);
    float* yr = out.data() + r * C;
    for (int64_t j = 0; j < C; ++j) yr[j] = (xr[j] - m) * s * w.data()[j] + b.data()[j];
    (*mean)[r] = m;
    (*rstd)[r] = s;
  });

  // With xhat = (x - mean) * rstd and dxhat = g * weight:
  //   dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)),  dweight = sum g*xhat,  dbias = sum g.
  return attach(out, "layer_norm", {x, w, b}, [x, w, b, mean, rstd, rows, C](const Tensor&, const Tensor& g) {
    float* dx = grad_sink(x);
    float* dw = grad_sink(w);
    float* db = grad_sink(b);
    const int64_t chunks = (rows + kRowsPerChunk - 1) / kRowsPerChunk;
    Buffer partial_w(dw ? chunks * C : 0, 0.0f), partial_b(db ? chunks * C : 0, 0.0f);
    parallel_for(chunks, grain_for(kRowsPerChunk * C * 8), [&](int64_t c0, int64_t c1) {
      for (int64_t chunk = c0; chunk < c1; ++chunk)
        for (int64_t r = chunk * kRowsPerChunk; r < std::min(rows, (chunk + 1) * kRowsPerChunk); ++r) {
          const float *xr = x.data() + r * C, *gr = g.data() + r * C, *wr = w.data();
          const float m = (*mean)[r], s = (*rstd)[r];
          if (dw)
            for (int64_t j = 0; j < C; ++j) partial_w[chunk * C + j] += gr[j] * ((xr[j] - m) * s);
          if (db)
            for (int64_t j = 0; j < C; ++j) partial_b[chunk * C + j] += gr[j];
          if (!dx) continue;
          const float sum_d = row_dot(gr, wr, C);
          const float sum_dx =
              sum_in_lanes<float>(0, C, [=](int64_t j) { return gr[j] * wr[j] * ((xr[j] - m) * s); });
          const float mean_d = sum_d / static_cast<float>(C), mean_dx = sum_dx / static_cast<float>(C);
          for (int64_t j = 0; j < C; ++j) {
            const float xhat = (xr[j] - m) * s;
            dx[r * C + j] += s * (gr[j] * wr[j] - mean_d - xhat * mean_dx);
          }
        }
    });
    parallel_for(C, 64, [&](int64_t j0, int64_t j1) {  // combine the chunks in order
      for (int64_t j = j0; j < j1; ++j)
        for (int64_t chunk = 0; chunk < chunks; ++chunk) {
          if (dw) dw[j] += partial_w[chunk * C + j];
          if (db) db[j] += partial_b[chunk * C + j];
        }
    });
  });
}

}  // namespace tinygpt
