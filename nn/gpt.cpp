#include "gpt.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <numeric>
#include <stdexcept>

#include "../autograd/inference.h"
#include "../autograd/for_products.h"
#include "../autograd/random.h"

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
  if (ffn_hidden != 0) in_range(ffn_hidden, "ffn_hidden", kMaxFfnHidden);
  if (n_kv_head != 0) in_range(n_kv_head, "n_kv_head", kMaxHeads);
  if (n_head % kv_heads() != 0)
    throw std::invalid_argument(fmt::format("GPT config: n_kv_head {} does not divide n_head {} (each key/value head "
                                            "serves n_head / n_kv_head query heads)",
                                            kv_heads(), n_head));
  if (position == PositionKind::rope && head_size() % 2 != 0)
    throw std::invalid_argument(fmt::format("GPT config: RoPE turns pairs, but the head size n_embd / n_head = {} is odd",
                                            head_size()));
  if (!(norm_eps > 0.0f && norm_eps <= kMaxNormEps))
    throw std::invalid_argument(
        fmt::format("GPT config: norm_eps {:g} is not in (0, {:g}]", static_cast<double>(norm_eps), kMaxNormEps));
  if (!(rope_theta > 0.0f && rope_theta <= kMaxRopeTheta))
    throw std::invalid_argument(
        fmt::format("GPT config: rope_theta {:g} is not in (0, {:g}]", static_cast<double>(rope_theta), kMaxRopeTheta));
}

bool GPTConfig::gpt2_shaped() const {
  return norm == NormKind::layernorm && norm_eps == 1e-5f && position == PositionKind::learned &&
         rope_theta == 10000.0f && mlp == MlpKind::gelu && hidden() == 4 * n_embd && kv_heads() == n_head && bias &&
         tie_embeddings;
}

int64_t llama_hidden(int64_t n_embd, int64_t multiple_of) {
  const int64_t two_thirds = 2 * (4 * n_embd) / 3;
  return (two_thirds + multiple_of - 1) / multiple_of * multiple_of;
}

GPTConfig llama_style(GPTConfig c, int64_t multiple_of) {
  c.norm = NormKind::rmsnorm;
  c.position = PositionKind::rope;
  c.mlp = MlpKind::swiglu;
  if (c.ffn_hidden == 0) c.ffn_hidden = llama_hidden(c.n_embd, multiple_of);
  c.bias = false;
  c.tie_embeddings = true;
  return c;
}

namespace {
template <class Kind>
Kind parse_kind(const std::string& text, const char* what, std::initializer_list<Kind> kinds) {
  for (Kind k : kinds)
    if (text == name(k)) return k;
  std::string names;
  for (Kind k : kinds) names += (names.empty() ? "" : " or ") + std::string(name(k));
  throw std::invalid_argument(fmt::format("unknown {} '{}' (expected {})", what, text, names));
}
}  // namespace

const char* name(NormKind kind) { return kind == NormKind::layernorm ? "layernorm" : "rmsnorm"; }
const char* name(PositionKind kind) { return kind == PositionKind::learned ? "learned" : "rope"; }
const char* name(MlpKind kind) { return kind == MlpKind::gelu ? "gelu" : "swiglu"; }
NormKind parse_norm(const std::string& text) {
  return parse_kind(text, "norm", {NormKind::layernorm, NormKind::rmsnorm});
}
PositionKind parse_position(const std::string& text) {
  return parse_kind(text, "position", {PositionKind::learned, PositionKind::rope});
}
MlpKind parse_mlp(const std::string& text) { return parse_kind(text, "mlp", {MlpKind::gelu, MlpKind::swiglu}); }

const char* name(Tap tap) {
  static constexpr const char* kNames[] = {"tok_emb", "pos_emb",      "embedding", "ln_1",       "c_attn", "qkv",
                                           "attn_weights", "attn_heads", "attn", "residual_attn", "ln_2", "mlp_fc",
                                           "mlp_act", "mlp", "residual_mlp", "ln_f", "logits"};
  static_assert(std::size(kNames) == static_cast<size_t>(Tap::logits) + 1);
  return kNames[static_cast<size_t>(tap)];
}

RowScratch::RowScratch(const GPTConfig& c)
    : normed(c.n_embd), qkv((c.n_head + 2 * c.kv_heads()) * c.head_size()), heads(c.n_embd),
      hidden((c.mlp == MlpKind::swiglu ? 2 : 1) * c.hidden()), out(c.n_embd), scores(c.block_size),
      angles(c.head_size()) {}

std::vector<std::pair<std::string, Shape>> parameter_shapes(const GPTConfig& c) {
  const GPT plan(c, kDefaultSeed, Init::shapes);  // the modules themselves, holding no values
  std::vector<std::pair<std::string, Shape>> out;
  for (const auto& [name, p] : plan.named_parameters()) out.emplace_back(name, p.shape());
  return out;
}

double training_flops_per_token(const GPTConfig& c) {
  double parameters = 0;
  for (const auto& [name, shape] : parameter_shapes(c))
    if (name != "transformer.wpe.weight") parameters += static_cast<double>(numel(shape));
  return 6.0 * parameters + 12.0 * static_cast<double>(c.n_layer * c.block_size * c.n_embd);
}

// ---- Norm --------------------------------------------------------------------------------------

Norm::Norm(const GPTConfig& c, Init init) : kind_(c.norm), eps_(c.norm_eps) {
  weight = register_parameter("weight", unwritten_parameter(init, {c.n_embd}));
  if (c.bias && kind_ == NormKind::layernorm) bias = register_parameter("bias", unwritten_parameter(init, {c.n_embd}));
  if (init == Init::pytorch) reset_parameters(0);
  else keep_own_seed(0);  // placing it in a model must not write it
}

Tensor Norm::forward(const Tensor& x) const {
  // Read by a Linear only (c_attn, c_fc, lm_head): products' rounding stored, under bf16 (precision.h).
  if (kind_ == NormKind::rmsnorm) return rms_norm(x, weight, eps_, Readers::products);
  return layer_norm(x, weight, bias, eps_, Readers::products);
}

void Norm::forward_row(const float* x, float* y) const {
  const int64_t C = weight.numel();
  if (kind_ == NormKind::rmsnorm) return rms_norm_row(x, C, weight.data(), eps_, y);
  layer_norm_row(x, C, weight.data(), bias.defined() ? bias.data() : nullptr, eps_, y);
}

void Norm::reset_parameters(uint64_t) {
  weight.fill_(1.0f);
  if (bias.defined()) bias.fill_(0.0f);
}

// ---- MLP -------------------------------------------------------------------------------------

MLP::MLP(const GPTConfig& c, Init init)
    : c_fc(c.n_embd, (c.mlp == MlpKind::swiglu ? 2 : 1) * c.hidden(), c.bias, 0, init),
      c_proj(c.hidden(), c.n_embd, c.bias, 0, init),
      kind_(c.mlp) {
  register_module("c_fc", c_fc);
  register_module("c_proj", c_proj);
}

Tensor MLP::forward(const Tensor& x, const BlockTap& tap) const {
  const Tensor h = c_fc.forward(x);  // [B, T, H] (gelu) or [B, T, 2H]: the gate, then the up projection
  const Tensor a = kind_ == MlpKind::swiglu ? swiglu(h, Readers::products) : gelu(h, Readers::products);
  const Tensor y = c_proj.forward(a);  // [B, T, H] -> [B, T, C]
  if (tap) tap(Tap::mlp_fc, h), tap(Tap::mlp_act, a), tap(Tap::mlp, y);
  return y;
}

void MLP::forward_row(const float* x, RowScratch& s, float* y) const {
  const int64_t H = c_proj.weight.size(1);
  c_fc.forward_row(x, s.hidden.data());  // [H] or [2H]
  if (kind_ == MlpKind::swiglu) swiglu_row(s.hidden.data(), H, s.hidden.data());  // [2H] -> [H], in place
  else gelu_row(s.hidden.data(), H, s.hidden.data());
  c_proj.forward_row(s.hidden.data(), y);
}

// ---- CausalSelfAttention -----------------------------------------------------------------------

CausalSelfAttention::CausalSelfAttention(const GPTConfig& c, Init init, Tensor angles)
    : c_attn(c.n_embd, (c.n_head + 2 * c.kv_heads()) * c.head_size(), c.bias, 0, init),
      c_proj(c.n_embd, c.n_embd, c.bias, 0, init),
      n_head_(c.n_head),
      n_kv_head_(c.kv_heads()),
      rope_theta_(c.rope_theta) {
  register_module("c_attn", c_attn);
  register_module("c_proj", c_proj);
  if (c.position == PositionKind::rope && init != Init::shapes)
    rope_angles_ = angles.defined() ? angles : rope_angles(c.block_size, c.head_size(), c.rope_theta);
}

Tensor CausalSelfAttention::turned(const Tensor& qkv) const {
  if (!rope_angles_.defined()) return qkv;
  // Each query and key head turns by its token's position; the values pass through.
  return rope(qkv, rope_angles_.size(1), n_head_ + n_kv_head_, rope_angles_);
}

Tensor CausalSelfAttention::forward(const Tensor& x, const BlockTap& tap) {
  // Queries, keys, values side by side; turned by RoPE, read by more than attention's products.
  const Tensor projected =
      linear(x, c_attn.weight, c_attn.bias, rope_angles_.defined() ? Readers::anyone : Readers::products);
  const Tensor made = turned(projected);  // [B, T, (nh + 2 g) hs]
  if (tap) tap(Tap::c_attn, projected), tap(Tap::qkv, made);
  // Each query head attends over the keys and values of its group's head; heads merged: [B, T, C].
  AttentionResult att = causal_self_attention(made, n_head_, n_kv_head_, tap ? AttentionMemory::weights : memory_,
                                              Readers::products);
  weights_ = att.weights;  // [B, nh, T, T]
  const Tensor y = c_proj.forward(att.y);
  if (tap) tap(Tap::attn_weights, att.weights), tap(Tap::attn_heads, att.y), tap(Tap::attn, y);
  return y;
}

void CausalSelfAttention::forward_row(const float* x, int64_t pos, KVCache& cache, RowScratch& s, float* y) const {
  const int64_t hs = c_attn.weight.size(0) / (n_head_ + 2 * n_kv_head_), C = n_head_ * hs, KV = n_kv_head_ * hs;
  float* qkv = s.qkv.data();
  c_attn.forward_row(x, qkv);  // [C + 2 KV]: queries, keys, values
  if (rope_angles_.defined()) rope_row(qkv, n_head_ + n_kv_head_, hs, pos, rope_theta_, s.angles.data());
  const int64_t here = cache.slot(pos);
  std::copy_n(qkv + C, KV, cache.key(here));
  std::copy_n(qkv + C + KV, KV, cache.value(here));
  const int64_t first = std::max<int64_t>(0, pos - cache.capacity() + 1), n = pos - first + 1;  // the keys it sees
  const int64_t oldest = cache.slot(first), slots = cache.capacity();
  const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
  for (int64_t h = 0; h < n_head_; ++h) {
    const float* q = qkv + h * hs;
    const int64_t kvh = h / (n_head_ / n_kv_head_);  // the key/value head this query head reads
    for (int64_t j = 0, slot = oldest; j < n; ++j, slot = slot + 1 == slots ? 0 : slot + 1) {  // Q·Kᵀ ÷ √d_k, oldest first
      const float* k = cache.key(slot) + kvh * hs;
      float dot = 0.0f;
      for (int64_t d = 0; d < hs; ++d) dot += q[d] * k[d];
      s.scores[j] = dot * scale;
    }
    softmax_row(s.scores.data(), n, s.scores.data());  // the attention weights
    float* out = s.heads.data() + h * hs;
    std::fill(out, out + hs, 0.0f);
    for (int64_t j = 0, slot = oldest; j < n; ++j, slot = slot + 1 == slots ? 0 : slot + 1) {  // weights · V
      const float* v = cache.value(slot) + kvh * hs;
      for (int64_t d = 0; d < hs; ++d) out[d] += s.scores[j] * v[d];
    }
  }
  c_proj.forward_row(s.heads.data(), y);
}

// ---- Block -------------------------------------------------------------------------------------

Block::Block(const GPTConfig& c, Init init, Tensor rope_angles)
    : ln_1(c, init), attn(c, init, std::move(rope_angles)), ln_2(c, init), mlp(c, init) {
  register_module("ln_1", ln_1);
  register_module("attn", attn);
  register_module("ln_2", ln_2);
  register_module("mlp", mlp);
}

Tensor Block::forward(const Tensor& x, const std::function<Tensor(const Tensor&)>& residual_dropout,
                      const BlockTap& tap) {
  const Tensor n1 = ln_1.forward(x);
  if (tap) tap(Tap::ln_1, n1);
  const Tensor r = x + residual_dropout(attn.forward(n1, tap));  // tokens gather context
  if (tap) tap(Tap::residual_attn, r);
  const Tensor n2 = ln_2.forward(r);
  if (tap) tap(Tap::ln_2, n2);
  const Tensor out = r + residual_dropout(mlp.forward(n2, tap));  // each token thinks alone
  if (tap) tap(Tap::residual_mlp, out);
  return out;
}

void Block::forward_row(float* x, int64_t position, KVCache& cache, RowScratch& s) const {
  const auto C = static_cast<int64_t>(s.out.size());
  ln_1.forward_row(x, s.normed.data());
  attn.forward_row(s.normed.data(), position, cache, s, s.out.data());
  for (int64_t j = 0; j < C; ++j) x[j] += s.out[j];
  ln_2.forward_row(x, s.normed.data());
  mlp.forward_row(s.normed.data(), s, s.out.data());
  for (int64_t j = 0; j < C; ++j) x[j] += s.out[j];
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
  return std::shared_ptr<GPT>(new GPT(config, kDefaultSeed, Init::none));
}

GPT::GPT(const GPTConfig& c, uint64_t seed, Init init)
    : wte(validated(c).vocab_size, c.n_embd, 0, init),  // a bad config fails before anything is allocated
      ln_f(c, init),
      config_(c),
      dropout_seed_(0) {
  set_dropout_seed(seed);
  register_module("transformer.wte", wte);
  if (c.position == PositionKind::learned)
    wpe = &add_module<Embedding>("transformer.wpe", c.block_size, c.n_embd, 0, init);
  // RoPE's cos and sin for every position, computed once for all layers.
  const Tensor angles = c.position == PositionKind::rope && init != Init::shapes
                            ? rope_angles(c.block_size, c.head_size(), c.rope_theta)
                            : Tensor();
  for (int64_t i = 0; i < c.n_layer; ++i)
    h.push_back(&add_module<Block>(fmt::format("transformer.h.{}", i), c, init, angles));
  register_module("transformer.ln_f", ln_f);
  if (!c.tie_embeddings) lm_head = &add_module<Linear>("lm_head", c.n_embd, c.vocab_size, false, 0, init);
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
    else if (name.find(".ln_") != std::string::npos) p.fill_(1.0f);  // norm weights
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

Tensor GPT::embed(std::span<const int32_t> idx, int64_t B, int64_t T, const ForwardTap& tap) {
  if (B <= 0 || T <= 0 || static_cast<int64_t>(idx.size()) != B * T)
    throw std::invalid_argument(fmt::format("GPT: {} token ids for a batch of B={} rows of T={}", idx.size(), B, T));
  if (T > config_.block_size)
    throw std::invalid_argument(
        fmt::format("GPT: sequence length {} exceeds block_size {}", T, config_.block_size));
  for (size_t i = 0; i < idx.size(); ++i)
    if (idx[i] < 0 || idx[i] >= config_.vocab_size)
      throw std::out_of_range(fmt::format("GPT: token id {} at position {} is out of range for vocab_size {}",
                                          idx[i], i, config_.vocab_size));
  const Tensor tokens = wte.forward(idx, {B, T});  // [B, T, C]
  if (tap) tap(-1, Tap::tok_emb, tokens);
  Tensor x = tokens;  // RoPE: positions enter inside attention
  if (wpe) {
    memory::Vector<int32_t> positions(T);
    std::iota(positions.begin(), positions.end(), 0);
    const Tensor places = wpe->forward(positions, {T});  // [T, C]
    if (tap) tap(-1, Tap::pos_emb, places);
    x = tokens + places;
  }
  x = dropout_(x);
  if (tap) tap(-1, Tap::embedding, x);
  return x;
}

void GPT::embed_row(int32_t token, int64_t position, float* x) const {
  const int64_t C = config_.n_embd;
  const float* row = wte.weight.data() + token * C;
  if (!wpe) return void(std::copy_n(row, C, x));
  const float* place = wpe->weight.data() + position * C;
  for (int64_t j = 0; j < C; ++j) x[j] = row[j] + place[j];
}

void GPT::logits_row(const float* x, RowScratch& s, float* logits) const {
  ln_f.forward_row(x, s.normed.data());
  if (lm_head) return lm_head->forward_row(s.normed.data(), logits);
  if (output_int8_) return matvec_int8(*output_int8_, nullptr, s.normed.data(), logits);
  matvec(wte.weight.data(), nullptr, s.normed.data(), logits, config_.vocab_size, config_.n_embd);
}

void GPT::use_int8_weights(int64_t group) {
  for (Block* block : h)
    for (Linear* layer : {&block->attn.c_attn, &block->attn.c_proj, &block->mlp.c_fc, &block->mlp.c_proj})
      layer->use_int8(group);
  if (lm_head) lm_head->use_int8(group);
  const Tensor& table = wte.weight;
  auto int8 = std::make_shared<const Int8Matrix>(quantize_int8(table.data(), table.size(0), table.size(1), group));
  dequantize_int8(*int8, table.data());
  if (!lm_head) output_int8_ = std::move(int8);  // the output layer too: its logits read it whole
  weight_format_ = WeightFormat::int8;
}

GPTOutput GPT::forward(std::span<const int32_t> idx, int64_t B, int64_t T, std::span<const int32_t> targets,
                       const ForwardTap& tap) {
  Tensor x = embed(idx, B, T, tap);  // [B, T, C]
  auto residual_dropout = [this](const Tensor& t) { return dropout_(t); };
  for (size_t l = 0; l < h.size(); ++l) {
    BlockTap block_tap;
    if (tap) block_tap = [&tap, l](Tap t, const Tensor& v) { tap(static_cast<int64_t>(l), t, v); };
    x = h[l]->forward(x, residual_dropout, block_tap);
  }
  x = ln_f.forward(x);
  if (tap) tap(-1, Tap::ln_f, x);
  GPTOutput out;
  // [B, T, V]: x Wᵀ with W = wte [V, C] (tied) or lm_head's, read in place, and its gradient
  // written straight into W's (a transposed view would pass it through a [C, V] copy).
  out.logits = linear(x, output_weight(), Tensor());
  if (tap) tap(-1, Tap::logits, out.logits);
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
    throw std::logic_error(fmt::format("GPT: attention weights are read after a forward pass (for contexts of {} "
                                       "tokens or more, one made after set_attention_memory(AttentionMemory::weights))",
                                       kTiledAttentionFrom));
  return w;
}

void GPT::set_attention_memory(AttentionMemory memory) {
  for (auto& block : h) block->attn.set_attention_memory(memory);
}

}  // namespace tinygpt::nn
