#include "tinygpt/nn/gpt.h"

#include <fmt/format.h>

#include <cmath>
#include <numeric>
#include <stdexcept>

#include "tinygpt/autograd/random.h"

namespace tinygpt::nn {

void GPTConfig::validate() const {
  auto in_range = [](int64_t v, const char* name, int64_t max) {
    if (v < 1 || v > max)
      throw std::invalid_argument(
          fmt::format("GPT config: {} must be {} (got {})", name, v < 1 ? "at least 1" : fmt::format("at most {}", max), v));
  };
  in_range(vocab_size, "vocab_size", kMaxVocab);
  in_range(block_size, "block_size", kMaxBlock);
  in_range(n_layer, "n_layer", kMaxLayers);
  in_range(n_head, "n_head", kMaxHeads);
  in_range(n_embd, "n_embd", kMaxEmbd);
  if (n_embd % n_head != 0)
    throw std::invalid_argument(
        fmt::format("GPT config: n_embd {} is not divisible by n_head {} (each head gets n_embd / n_head)", n_embd,
                    n_head));
  if (!(dropout >= 0.0f && dropout < 1.0f))
    throw std::invalid_argument(fmt::format("GPT config: dropout {} is not in [0, 1)", dropout));
}

std::vector<std::pair<std::string, Shape>> parameter_shapes(const GPTConfig& c) {
  const int64_t C = c.n_embd;
  std::vector<std::pair<std::string, Shape>> out = {{"transformer.wte.weight", {c.vocab_size, C}},
                                                    {"transformer.wpe.weight", {c.block_size, C}}};
  const std::vector<std::pair<std::string, Shape>> block = {
      {"ln_1.weight", {C}},          {"ln_1.bias", {C}},          {"attn.c_attn.weight", {3 * C, C}},
      {"attn.c_attn.bias", {3 * C}}, {"attn.c_proj.weight", {C, C}}, {"attn.c_proj.bias", {C}},
      {"ln_2.weight", {C}},          {"ln_2.bias", {C}},          {"mlp.c_fc.weight", {4 * C, C}},
      {"mlp.c_fc.bias", {4 * C}},    {"mlp.c_proj.weight", {C, 4 * C}}, {"mlp.c_proj.bias", {C}}};
  for (int64_t i = 0; i < c.n_layer; ++i)
    for (const auto& [name, shape] : block) out.emplace_back(fmt::format("transformer.h.{}.{}", i, name), shape);
  out.emplace_back("transformer.ln_f.weight", Shape{C});
  out.emplace_back("transformer.ln_f.bias", Shape{C});
  return out;
}

// ---- MLP -------------------------------------------------------------------------------------

MLP::MLP(const GPTConfig& c, Init init) : c_fc(c.n_embd, 4 * c.n_embd, true, 0, init), c_proj(4 * c.n_embd, c.n_embd, true, 0, init) {
  register_module("c_fc", c_fc);
  register_module("c_proj", c_proj);
}

Tensor MLP::forward(const Tensor& x) const {
  return c_proj.forward(gelu(c_fc.forward(x)));  // [B, T, C] -> [B, T, 4C] -> [B, T, C]
}

// ---- CausalSelfAttention -----------------------------------------------------------------------

CausalSelfAttention::CausalSelfAttention(const GPTConfig& c, Init init)
    : c_attn(c.n_embd, 3 * c.n_embd, true, 0, init), c_proj(c.n_embd, c.n_embd, true, 0, init), n_head_(c.n_head) {
  register_module("c_attn", c_attn);
  register_module("c_proj", c_proj);
}

Tensor CausalSelfAttention::forward(const Tensor& x) {
  const Tensor qkv = c_attn.forward(x);  // [B, T, 3C]: query, key, value side by side
  // Each of the n_head heads attends over its C / n_head slice of them; heads merged: [B, T, C].
  AttentionResult att = causal_self_attention(qkv, n_head_, memory_);
  weights_ = att.weights;  // [B, nh, T, T]
  return c_proj.forward(att.y);
}

// ---- Block -------------------------------------------------------------------------------------

Block::Block(const GPTConfig& c, Init init) : ln_1(c.n_embd), attn(c, init), ln_2(c.n_embd), mlp(c, init) {
  register_module("ln_1", ln_1);
  register_module("attn", attn);
  register_module("ln_2", ln_2);
  register_module("mlp", mlp);
}

Tensor Block::forward(const Tensor& x, const std::function<Tensor(const Tensor&)>& residual_dropout) {
  const Tensor r = x + residual_dropout(attn.forward(ln_1.forward(x)));  // tokens gather context
  return r + residual_dropout(mlp.forward(ln_2.forward(r)));             // each token thinks alone
}

// ---- GPT ---------------------------------------------------------------------------------------

namespace {
const GPTConfig& validated(const GPTConfig& c) {
  c.validate();
  return c;
}
}  // namespace

GPT::GPT(const GPTConfig& c, uint64_t seed) : GPT(c, seed, Init::none) { init_weights(seed); }

std::shared_ptr<GPT> GPT::unwritten(const GPTConfig& config) {
  return std::shared_ptr<GPT>(new GPT(config, 1337, Init::none));
}

GPT::GPT(const GPTConfig& c, uint64_t seed, Init init)
    : wte(validated(c).vocab_size, c.n_embd, 0, init),  // a bad config fails before anything is allocated
      wpe(c.block_size, c.n_embd, 0, init),
      ln_f(c.n_embd),
      config_(c),
      dropout_seed_(0) {
  set_dropout_seed(seed);
  register_module("transformer.wte", wte);
  register_module("transformer.wpe", wpe);
  for (int64_t i = 0; i < c.n_layer; ++i)
    h.push_back(&add_module<Block>(fmt::format("transformer.h.{}", i), c, init));
  register_module("transformer.ln_f", ln_f);
}

void GPT::init_weights(uint64_t seed) {
  const float residual_std = 0.02f / std::sqrt(2.0f * static_cast<float>(config_.n_layer));
  auto ends_with = [](const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
  };
  uint64_t index = 0;
  for (auto& [name, p] : named_parameters()) {
    const uint64_t p_seed = splitmix64(seed + 0x9e37 * ++index);  // each tensor its own stream
    if (ends_with(name, ".bias")) p.fill_(0.0f);
    else if (name.find(".ln_") != std::string::npos) p.fill_(1.0f);  // LayerNorm weights
    else if (ends_with(name, "c_proj.weight")) p.normal_(p_seed, residual_std);
    else p.normal_(p_seed, 0.02f);
  }
}

void GPT::set_dropout_seed(uint64_t seed) { dropout_seed_ = splitmix64(seed ^ 0xd50f); }

void GPT::set_dropout(float p) {
  GPTConfig c = config_;
  c.dropout = p;
  c.validate();
  config_ = c;
}

Tensor GPT::dropout_(const Tensor& x) {
  if (config_.dropout == 0.0f || !training()) return x;
  return dropout(x, config_.dropout, splitmix64(dropout_seed_ + dropout_counter_++), true);
}

Tensor GPT::embed(std::span<const int32_t> idx, int64_t B, int64_t T) {
  if (B <= 0 || T <= 0 || static_cast<int64_t>(idx.size()) != B * T)
    throw std::invalid_argument(fmt::format("GPT: {} token ids for a batch of B={} rows of T={}", idx.size(), B, T));
  if (T > config_.block_size)
    throw std::invalid_argument(
        fmt::format("GPT: sequence length {} exceeds block_size {}", T, config_.block_size));
  for (size_t i = 0; i < idx.size(); ++i)
    if (idx[i] < 0 || idx[i] >= config_.vocab_size)
      throw std::out_of_range(fmt::format("GPT: token id {} at position {} is out of range for vocab_size {}",
                                          idx[i], i, config_.vocab_size));
  memory::Vector<int32_t> positions(T);
  std::iota(positions.begin(), positions.end(), 0);

  return dropout_(wte.forward(idx, {B, T}) + wpe.forward(positions, {T}));  // [B, T, C]
}

GPTOutput GPT::forward(std::span<const int32_t> idx, int64_t B, int64_t T, std::span<const int32_t> targets) {
  Tensor x = embed(idx, B, T);  // [B, T, C]
  auto residual_dropout = [this](const Tensor& t) { return dropout_(t); };
  for (auto& block : h) x = block->forward(x, residual_dropout);
  x = ln_f.forward(x);
  GPTOutput out;
  // [B, T, V], tied to the token embedding: x Wᵀ with W = wte [V, C] read in place, and its
  // gradient written straight into wte's (a transposed view would pass it through a [C, V] copy).
  out.logits = linear(x, wte.weight, Tensor());
  if (!targets.empty()) {
    if (static_cast<int64_t>(targets.size()) != B * T)
      throw std::invalid_argument(fmt::format("GPT: {} targets for {} positions", targets.size(), B * T));
    out.loss = cross_entropy(out.logits, targets);
  }
  return out;
}

const Tensor& GPT::attention_weights(int64_t layer) const {
  if (layer < 0 || layer >= config_.n_layer)
    throw std::out_of_range(fmt::format("GPT: layer {} out of range for n_layer {}", layer, config_.n_layer));
  const Tensor& w = h[layer]->attn.weights();
  if (!w.defined())
    throw std::logic_error("GPT: attention weights are read after a forward pass (for contexts of 512 tokens or "
                           "more, one made after set_attention_memory(AttentionMemory::weights))");
  return w;
}

void GPT::set_attention_memory(AttentionMemory memory) {
  for (auto& block : h) block->attn.set_attention_memory(memory);
}

}  // namespace tinygpt::nn
