#include "tinygpt/nn/generator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "tinygpt/autograd/kernels/fast_exp.h"
#include "tinygpt/autograd/kernels/simd.h"
#include "tinygpt/autograd/parallel.h"

namespace tinygpt::nn {

namespace {

// R rows of y = W x: the rows share each load of x, and each row keeps two accumulators so that
// the FMAs overlap. Every row is summed in the same order whatever R is (the bits of a row do not
// depend on how rows are split over threads).
template <int R>
void dot_rows(const float* w, const float* x, int64_t in, float* out) {
  using namespace simd;
  vfloat acc[R][2];
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = zero();
  int64_t i = 0;
  for (; i + 2 * kLanes <= in; i += 2 * kLanes) {
    const vfloat x0 = load(x + i), x1 = load(x + i + kLanes);
    for (int r = 0; r < R; ++r) {
      acc[r][0] = fma(load(w + r * in + i), x0, acc[r][0]);
      acc[r][1] = fma(load(w + r * in + i + kLanes), x1, acc[r][1]);
    }
  }
  if (i + kLanes <= in) {
    const vfloat x0 = load(x + i);
    for (int r = 0; r < R; ++r) acc[r][0] = fma(load(w + r * in + i), x0, acc[r][0]);
    i += kLanes;
  }
  for (int r = 0; r < R; ++r) {
    float lanes[kLanes];
    store(lanes, add(acc[r][0], acc[r][1]));
    float s = 0.0f;
    for (float lane : lanes) s += lane;
    for (int64_t j = i; j < in; ++j) s += w[r * in + j] * x[j];
    out[r] = s;
  }
}

// y[o] = b[o] + sum_i W[o, i] x[i] for W [out, in] (Linear's layout): a matrix-vector product reads
// each weight once, so it runs at memory speed when the rows stream through in vector loads.
void matvec(const float* w, const float* b, const float* x, float* y, int64_t out, int64_t in) {
  constexpr int kRows = 4;
  parallel_for((out + kRows - 1) / kRows, grain_for(kRows * in), [&](int64_t g0, int64_t g1) {
    for (int64_t o = g0 * kRows; o < std::min(out, g1 * kRows); o += kRows) {
      if (o + kRows <= out) dot_rows<kRows>(w + o * in, x, in, y + o);
      else
        for (int64_t r = o; r < out; ++r) dot_rows<1>(w + r * in, x, in, y + r);
    }
  });
  if (b)
    for (int64_t o = 0; o < out; ++o) y[o] += b[o];
}

void linear(const Linear& layer, const float* x, float* y) {
  matvec(layer.weight.data(), layer.bias.defined() ? layer.bias.data() : nullptr, x, y, layer.weight.size(0),
         layer.weight.size(1));
}

void layer_norm(const LayerNorm& ln, const float* x, float* y, int64_t C) {
  float mean = 0.0f, var = 0.0f;
  for (int64_t j = 0; j < C; ++j) mean += x[j];
  mean /= static_cast<float>(C);
  for (int64_t j = 0; j < C; ++j) var += (x[j] - mean) * (x[j] - mean);
  const float rstd = 1.0f / std::sqrt(var / static_cast<float>(C) + 1e-5f);
  for (int64_t j = 0; j < C; ++j) y[j] = (x[j] - mean) * rstd * ln.weight.data()[j] + ln.bias.data()[j];
}

}  // namespace

Generator::Generator(const GPT& model) : model_(model) {
  const GPTConfig& c = model.config();
  keys_.assign(c.n_layer, std::vector<float>(c.block_size * c.n_embd));
  values_.assign(c.n_layer, std::vector<float>(c.block_size * c.n_embd));
  x_.resize(c.n_embd), normed_.resize(c.n_embd), qkv_.resize(3 * c.n_embd), heads_.resize(c.n_embd);
  hidden_.resize(4 * c.n_embd), out_.resize(c.n_embd), scores_.resize(c.block_size), logits_.resize(c.vocab_size);
}

void Generator::attend(int64_t l) {
  const GPTConfig& c = model_.config();
  const CausalSelfAttention& attn = model_.h[l]->attn;
  const int64_t C = c.n_embd, hs = C / c.n_head, pos = length_;
  layer_norm(model_.h[l]->ln_1, x_.data(), normed_.data(), C);
  linear(attn.c_attn, normed_.data(), qkv_.data());  // [3C]: query, key, value
  std::copy_n(qkv_.data() + C, C, keys_[l].data() + pos * C);
  std::copy_n(qkv_.data() + 2 * C, C, values_[l].data() + pos * C);
  const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
  for (int64_t h = 0; h < c.n_head; ++h) {
    const float* q = qkv_.data() + h * hs;
    float m = -INFINITY, sum = 0.0f;
    for (int64_t j = 0; j <= pos; ++j) {  // this query sees every cached key up to itself
      const float* k = keys_[l].data() + j * C + h * hs;
      float s = 0.0f;
      for (int64_t d = 0; d < hs; ++d) s += q[d] * k[d];
      scores_[j] = s * scale;
      m = std::max(m, scores_[j]);
    }
    for (int64_t j = 0; j <= pos; ++j) sum += (scores_[j] = std::exp(scores_[j] - m));
    float* y = heads_.data() + h * hs;
    std::fill(y, y + hs, 0.0f);
    for (int64_t j = 0; j <= pos; ++j) {
      const float* v = values_[l].data() + j * C + h * hs;
      for (int64_t d = 0; d < hs; ++d) y[d] += scores_[j] / sum * v[d];
    }
  }
  linear(attn.c_proj, heads_.data(), out_.data());
  for (int64_t j = 0; j < C; ++j) x_[j] += out_[j];
}

void Generator::feed_forward(int64_t l) {
  constexpr float kS = 0.7978845608028654f, kC = 0.044715f;
  const int64_t C = model_.config().n_embd;
  layer_norm(model_.h[l]->ln_2, x_.data(), normed_.data(), C);
  linear(model_.h[l]->mlp.c_fc, normed_.data(), hidden_.data());
  for (float& v : hidden_) v = 0.5f * v * (1.0f + vector_tanh(kS * (v + kC * v * v * v)));
  linear(model_.h[l]->mlp.c_proj, hidden_.data(), out_.data());
  for (int64_t j = 0; j < C; ++j) x_[j] += out_[j];
}

const std::vector<float>& Generator::feed(int32_t token) {
  const GPTConfig& c = model_.config();
  if (length_ >= c.block_size)
    throw std::logic_error(fmt::format("Generator: the cache is full ({} positions)", c.block_size));
  if (token < 0 || token >= c.vocab_size)
    throw std::out_of_range(fmt::format("Generator: token id {} is out of range for vocab_size {}", token, c.vocab_size));
  const int64_t C = c.n_embd;
  for (int64_t j = 0; j < C; ++j)
    x_[j] = model_.wte.weight.data()[token * C + j] + model_.wpe.weight.data()[length_ * C + j];
  for (int64_t l = 0; l < c.n_layer; ++l) {
    attend(l);
    feed_forward(l);
  }
  layer_norm(model_.ln_f, x_.data(), normed_.data(), C);
  matvec(model_.wte.weight.data(), nullptr, normed_.data(), logits_.data(), c.vocab_size, C);  // tied lm_head
  ++length_;
  return logits_;
}

}  // namespace tinygpt::nn
