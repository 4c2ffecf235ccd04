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

}  // namespace

Generator::Generator(const GPT& model) : model_(model) {
  const GPTConfig& c = model.config();
  const int64_t C = c.n_embd, KV = c.kv_heads() * c.head_size(), H = c.hidden();
  keys_.assign(c.n_layer, std::vector<float>(c.block_size * KV));
  values_.assign(c.n_layer, std::vector<float>(c.block_size * KV));
  x_.resize(C), normed_.resize(C), qkv_.resize(C + 2 * KV), heads_.resize(C), angles_.resize(c.head_size());
  hidden_.resize(c.mlp == MlpKind::swiglu ? 2 * H : H), out_.resize(C), scores_.resize(c.block_size);
  logits_.resize(c.vocab_size);
}

void Generator::attend(int64_t l) {
  const GPTConfig& c = model_.config();
  const CausalSelfAttention& attn = model_.h[l]->attn;
  const int64_t C = c.n_embd, hs = c.head_size(), g = c.kv_heads(), KV = g * hs, pos = length_;
  model_.h[l]->ln_1.forward_row(x_.data(), normed_.data());
  linear(attn.c_attn, normed_.data(), qkv_.data());  // [C + 2 KV]: queries, keys, values
  if (c.position == PositionKind::rope)  // the queries and the key turn by this position
    rope_row(qkv_.data(), c.n_head + g, hs, pos, c.rope_theta, angles_.data());
  std::copy_n(qkv_.data() + C, KV, keys_[l].data() + pos * KV);
  std::copy_n(qkv_.data() + C + KV, KV, values_[l].data() + pos * KV);
  const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
  for (int64_t h = 0; h < c.n_head; ++h) {
    const float* q = qkv_.data() + h * hs;
    const int64_t kvh = h / (c.n_head / g);  // the key/value head this query head reads
    for (int64_t j = 0; j <= pos; ++j) {  // this query sees every cached key up to itself
      const float* k = keys_[l].data() + j * KV + kvh * hs;
      float s = 0.0f;
      for (int64_t d = 0; d < hs; ++d) s += q[d] * k[d];
      scores_[j] = s * scale;
    }
    softmax_row(scores_.data(), pos + 1, scores_.data());  // the attention weights
    float* y = heads_.data() + h * hs;
    std::fill(y, y + hs, 0.0f);
    for (int64_t j = 0; j <= pos; ++j) {
      const float* v = values_[l].data() + j * KV + kvh * hs;
      for (int64_t d = 0; d < hs; ++d) y[d] += scores_[j] * v[d];
    }
  }
  linear(attn.c_proj, heads_.data(), out_.data());
  for (int64_t j = 0; j < C; ++j) x_[j] += out_[j];
}

void Generator::feed_forward(int64_t l) {
  const GPTConfig& c = model_.config();
  const int64_t C = c.n_embd, H = c.hidden();
  model_.h[l]->ln_2.forward_row(x_.data(), normed_.data());
  linear(model_.h[l]->mlp.c_fc, normed_.data(), hidden_.data());
  if (c.mlp == MlpKind::swiglu) swiglu_row(hidden_.data(), H, hidden_.data());  // [2H] -> [H], in place
  else gelu_row(hidden_.data(), H, hidden_.data());
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
  const float* position = model_.wpe ? model_.wpe->weight.data() + length_ * C : nullptr;
  for (int64_t j = 0; j < C; ++j) x_[j] = model_.wte.weight.data()[token * C + j] + (position ? position[j] : 0.0f);
  for (int64_t l = 0; l < c.n_layer; ++l) {
    attend(l);
    feed_forward(l);
  }
  model_.ln_f.forward_row(x_.data(), normed_.data());
  matvec(model_.output_weight().data(), nullptr, normed_.data(), logits_.data(), c.vocab_size, C);
  ++length_;
  return logits_;
}

}  // namespace tinygpt::nn
