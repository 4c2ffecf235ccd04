#include "tinygpt/nn/sampling.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "tinygpt/autograd/inference.h"

namespace tinygpt::nn {

namespace {

void linear(const Linear& layer, const float* x, float* y) {
  matvec(layer.weight.data(), layer.bias.defined() ? layer.bias.data() : nullptr, x, y, layer.weight.size(0),
         layer.weight.size(1));
}

void layer_norm(const LayerNorm& ln, const float* x, float* y, int64_t C) {
  layer_norm_row(x, C, ln.weight.data(), ln.bias.data(), ln.eps(), y);
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
    for (int64_t j = 0; j <= pos; ++j) {  // this query sees every cached key up to itself
      const float* k = keys_[l].data() + j * C + h * hs;
      float s = 0.0f;
      for (int64_t d = 0; d < hs; ++d) s += q[d] * k[d];
      scores_[j] = s * scale;
    }
    softmax_row(scores_.data(), pos + 1, scores_.data());  // the attention weights
    float* y = heads_.data() + h * hs;
    std::fill(y, y + hs, 0.0f);
    for (int64_t j = 0; j <= pos; ++j) {
      const float* v = values_[l].data() + j * C + h * hs;
      for (int64_t d = 0; d < hs; ++d) y[d] += scores_[j] * v[d];
    }
  }
  linear(attn.c_proj, heads_.data(), out_.data());
  for (int64_t j = 0; j < C; ++j) x_[j] += out_[j];
}

void Generator::feed_forward(int64_t l) {
  const int64_t C = model_.config().n_embd;
  layer_norm(model_.h[l]->ln_2, x_.data(), normed_.data(), C);
  linear(model_.h[l]->mlp.c_fc, normed_.data(), hidden_.data());
  gelu_row(hidden_.data(), static_cast<int64_t>(hidden_.size()), hidden_.data());
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
