#pragma once
// The GPT model, as nanoGPT with bias=True (../shared/SPEC.md):
//   x = wte[idx] + wpe[0..T-1]
//   per block: x = x + attn(ln_1(x));  x = x + mlp(ln_2(x))
//   logits = ln_f(x) wteᵀ  (the output layer is tied to the token embedding)
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tinygpt/nn/layers.h"

namespace tinygpt::nn {

// The largest sizes a GPT may have: far beyond any CPU run, and small enough that no shape or
// parameter count overflows a 64-bit integer.
constexpr int64_t kMaxVocab = int64_t{1} << 24, kMaxBlock = 65536, kMaxLayers = 1024, kMaxHeads = 1024,
                  kMaxEmbd = 65536;

struct GPTConfig {
  int64_t vocab_size = 65;
  int64_t block_size = 64;  // longest context
  int64_t n_layer = 4;
  int64_t n_head = 4;
  int64_t n_embd = 128;
  float dropout = 0.0f;
  // Throws on a size outside [1, its kMax], n_embd % n_head != 0, dropout outside [0, 1).
  void validate() const;
};

// The names and shapes of a GPT's parameters for `config`, in named_parameters() order, without
// building one: a checkpoint's datasets are checked against them before a model is allocated.
std::vector<std::pair<std::string, Shape>> parameter_shapes(const GPTConfig& config);

// Feed-forward: c_fc (C -> 4C), GELU (tanh), c_proj (4C -> C).
class MLP : public Module {
 public:
  explicit MLP(const GPTConfig& config, Init init = Init::pytorch);
  Tensor forward(const Tensor& x) const;  // [B, T, C] -> [B, T, C]
  Linear c_fc, c_proj;
};

// Masked multi-head self-attention: c_attn makes query, key and value for every head at once.
class CausalSelfAttention : public Module {
 public:
  explicit CausalSelfAttention(const GPTConfig& config, Init init = Init::pytorch);
  Tensor forward(const Tensor& x);          // [B, T, C] -> [B, T, C]
  const Tensor& weights() const { return weights_; }  // [B, nh, T, T] of the last forward
  // automatic: the weights are kept below T = 512 and recomputed in backward from there on
  // (ops.h); weights: always kept, so that weights() can show them.
  void set_attention_memory(AttentionMemory memory) { memory_ = memory; }
  Linear c_attn, c_proj;

 private:
  int64_t n_head_;
  AttentionMemory memory_ = AttentionMemory::automatic;
  Tensor weights_;
};

// Pre-LayerNorm transformer block with two residual connections.
class Block : public Module {
 public:
  explicit Block(const GPTConfig& config, Init init = Init::pytorch);
  Tensor forward(const Tensor& x, const std::function<Tensor(const Tensor&)>& residual_dropout);
  LayerNorm ln_1;
  CausalSelfAttention attn;
  LayerNorm ln_2;
  MLP mlp;
};

struct GPTOutput {
  Tensor logits;  // [B, T, vocab_size]
  Tensor loss;    // mean cross-entropy; undefined when no targets were given
};

class GPT : public Module {
 public:
  explicit GPT(const GPTConfig& config, uint64_t seed = 1337);
  // A GPT whose parameters are allocated but not written, for a loader that fills every one (a
  // 124M model skips drawing 124M random numbers twice).
  static std::shared_ptr<GPT> unwritten(const GPTConfig& config);
  const GPTConfig& config() const { return config_; }

  // GPT-2's initialization from a seed: weights N(0, 0.02), the residual projections
  // (attn.c_proj, mlp.c_proj) N(0, 0.02 / sqrt(2 n_layer)), biases 0, LayerNorm weight 1, bias 0.
  void init_weights(uint64_t seed);
  void reset_parameters(uint64_t seed) override { init_weights(seed); }

  // idx, targets: B*T token ids, row-major [B, T]; 1 <= T <= block_size.
  GPTOutput forward(std::span<const int32_t> idx, int64_t B, int64_t T, std::span<const int32_t> targets = {});
  // The residual stream's start, forward's first step: x = wte[idx] + wpe[0..T-1], [B, T, C]
  // (dropout applied while training). The blocks, ln_f and the tied output layer follow.
  Tensor embed(std::span<const int32_t> idx, int64_t B, int64_t T);

  // After a forward pass: the attention weights of `layer`, [B, nh, T, T]; row i of head h of
  // batch row b is how much query i drew from each key j <= i. Contexts of 512 tokens or more
  // keep them only after set_attention_memory(AttentionMemory::weights).
  const Tensor& attention_weights(int64_t layer) const;
  void set_attention_memory(AttentionMemory memory);  // for every layer (ops.h)

  // Dropout masks come from (seed, call counter): restoring both makes a resume exact.
  uint64_t dropout_counter() const { return dropout_counter_; }
  void set_dropout_counter(uint64_t counter) { dropout_counter_ = counter; }
  void set_dropout_seed(uint64_t seed);  // the seed given to the constructor sets it too
  void set_dropout(float p);             // a training setting, not part of a checkpoint's /config

  Embedding wte, wpe;
  std::vector<Block*> h;  // the blocks, owned by the module tree
  LayerNorm ln_f;

 private:
  GPT(const GPTConfig& config, uint64_t seed, Init init);  // every layer built, none written
  Tensor dropout_(const Tensor& x);
  GPTConfig config_;
  uint64_t dropout_seed_;
  uint64_t dropout_counter_ = 0;
};

}  // namespace tinygpt::nn
