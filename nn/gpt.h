#pragma once
// The GPT model, as nanoGPT with bias=True (docs/architectures.md, the model):
//   x = wte[idx] + wpe[0..T-1]
//   per block: x = x + attn(ln_1(x));  x = x + mlp(ln_2(x))
//   logits = ln_f(x) wteᵀ  (the output layer is tied to the token embedding)
// and the Llama family's pieces, each switched on by the config on its own (docs/architectures.md):
// RMSNorm for LayerNorm, rotary positions (RoPE) for wpe, SwiGLU for the GELU MLP, fewer key/value
// heads than query heads (grouped-query attention), no biases, an output layer of its own.
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "../autograd/random.h"
#include "layers.h"

namespace tinygpt::nn {

// The largest sizes a GPT may have: far beyond any CPU run, and small enough that no shape or
// parameter count overflows a 64-bit integer.
constexpr int64_t kMaxVocab = int64_t{1} << 24, kMaxBlock = 65536, kMaxLayers = 1024, kMaxHeads = 1024,
                  kMaxEmbd = 65536, kMaxFfnHidden = 4 * kMaxEmbd;
// The normalization's epsilon is in (0, kMaxNormEps] (above 1 it swamps any activation's scale);
// RoPE's base in (0, kMaxRopeTheta] (published models use 1e4 to 1e6; beyond this a file is damaged).
constexpr double kMaxNormEps = 1.0, kMaxRopeTheta = 1e12;

enum class NormKind { layernorm, rmsnorm };
enum class PositionKind { learned, rope };  // a wpe table, or queries and keys turned by position
enum class MlpKind { gelu, swiglu };
// How a model's weight matrices are stored for inference: as trained, or in 8 bits by groups of
// kInt8Group weights of a row (GPT::use_int8_weights).
enum class WeightFormat { fp32, int8 };
constexpr int64_t kInt8Group = 32;  // weights per scale: as fast as 64 to 256 and the most exact (docs/performance.md)

struct GPTConfig {
  int64_t vocab_size = 65;
  int64_t block_size = 64;  // longest context
  int64_t n_layer = 4;
  int64_t n_head = 4;
  int64_t n_embd = 128;
  float dropout = 0.0f;
  // The Llama family's settings (docs/checkpoint-format.md, format_version 3); each default is GPT-2's.
  NormKind norm = NormKind::layernorm;
  float norm_eps = 1e-5f;
  PositionKind position = PositionKind::learned;
  float rope_theta = 10000.0f;
  MlpKind mlp = MlpKind::gelu;
  int64_t ffn_hidden = 0;      // the MLP's hidden width H; 0: 4 n_embd
  int64_t n_kv_head = 0;       // key/value heads, dividing n_head (1: multi-query); 0: n_head
  bool bias = true;            // on every Linear and LayerNorm
  bool tie_embeddings = true;  // logits = ln_f(x) wteᵀ; false: an lm_head [V, C] of its own

  int64_t hidden() const { return ffn_hidden ? ffn_hidden : 4 * n_embd; }
  int64_t kv_heads() const { return n_kv_head ? n_kv_head : n_head; }
  int64_t head_size() const { return n_embd / n_head; }
  // Every Llama-family setting at its default: a GPT-2, stored as format_version 1 or 2.
  bool gpt2_shaped() const;
  // Throws on a size outside [1, its kMax], n_embd % n_head != 0, n_head % n_kv_head != 0, an odd
  // head size with RoPE, dropout outside [0, 1), an eps or theta that is not positive and finite.
  void validate() const;
};

// llama2.c's model on these sizes: RMSNorm, RoPE, SwiGLU whose width is 2/3 of 4C rounded up to
// a multiple of `multiple_of` (unless ffn_hidden is set), no biases, the output layer tied to wte.
GPTConfig llama_style(GPTConfig sizes, int64_t multiple_of = 32);
int64_t llama_hidden(int64_t n_embd, int64_t multiple_of = 32);

const char* name(NormKind kind);  // "layernorm", "rmsnorm"; parse_* throw on other names
const char* name(PositionKind kind);
const char* name(MlpKind kind);
NormKind parse_norm(const std::string& name);
PositionKind parse_position(const std::string& name);
MlpKind parse_mlp(const std::string& name);

// The names and shapes of a GPT's parameters for `config`, in named_parameters() order, read from
// a plan of the model (Init::shapes) that allocates no parameter: a checkpoint's datasets and the
// Hugging Face and llama2.c files are checked against them before a model is allocated.
std::vector<std::pair<std::string, Shape>> parameter_shapes(const GPTConfig& config);

// One token's training FLOPs (forward and backward), as nanoGPT estimates them: 6 per parameter
// other than the learned positions, and 12 per layer, position and channel for attention's products.
double training_flops_per_token(const GPTConfig& config);

// ---- What a forward pass shows -----------------------------------------------------------------
// The intermediates of a forward pass, in the order they are made. A view of the model (explain,
// attention --steps and --trace) watches the one forward pass through a tap; none computes its own.
enum class Tap {
  tok_emb,        // wte[idx] [B, T, C]
  pos_emb,        // wpe[0..T-1] [T, C]; learned positions only
  embedding,      // x: the residual stream's start [B, T, C]
  ln_1,           // [B, T, C]
  c_attn,         // c_attn(ln_1(x)): every head's query, key and value [B, T, (nh + 2 g) hs]
  qkv,            // the same, queries and keys turned by RoPE (c_attn's own tensor without RoPE)
  attn_weights,   // softmax(mask(Q Kᵀ / √d_k)) [B, nh, T, T]
  attn_heads,     // weights V, the heads side by side [B, T, C]
  attn,           // c_proj(heads) [B, T, C]
  residual_attn,  // x + attn [B, T, C]
  ln_2,           // [B, T, C]
  mlp_fc,         // c_fc(ln_2(x)): [B, T, H] (gelu) or [B, T, 2H] (swiglu: the gate, then up)
  mlp_act,        // gelu(fc), or silu(gate) * up [B, T, H]
  mlp,            // c_proj(act) [B, T, C]
  residual_mlp,   // x + mlp: the block's output [B, T, C]
  ln_f,           // [B, T, C]
  logits,         // [B, T, V]
};
const char* name(Tap tap);  // "ln_1", "attn_weights", ...
// Receives each intermediate as it is made; layer: the block's index, -1 outside the blocks. A
// forward pass with a tap keeps every layer's attention weights, whatever the context.
using ForwardTap = std::function<void(int64_t layer, Tap tap, const Tensor& value)>;
using BlockTap = std::function<void(Tap tap, const Tensor& value)>;  // a block's, its index bound

// ---- Decoding one position at a time (Generator) ----------------------------------------------
// One layer's keys and values, a row of n_kv_head hs per position, for `capacity` positions in a
// ring: position p lives in slot p % capacity, so once full each new position overwrites the oldest.
class KVCache {
 public:
  KVCache(int64_t capacity, int64_t width)
      : keys_(capacity * width), values_(capacity * width), capacity_(capacity), width_(width) {}
  float* key(int64_t slot) { return keys_.data() + slot * width_; }
  float* value(int64_t slot) { return values_.data() + slot * width_; }
  int64_t slot(int64_t position) const { return position % capacity_; }
  int64_t capacity() const { return capacity_; }

 private:
  std::vector<float> keys_, values_;
  int64_t capacity_, width_;
};

// The rows one position's pass writes into, sized for a config once: no allocation per token.
struct RowScratch {
  explicit RowScratch(const GPTConfig& config);
  std::vector<float> normed, qkv, heads, hidden, out, scores, angles;
};

// The normalization before each sublayer and at the end: LayerNorm (GPT-2's; with a bias when
// the config has biases) or RMSNorm (Llama's: weight only).
class Norm : public Module {
 public:
  explicit Norm(const GPTConfig& config, Init init = Init::pytorch);
  Tensor forward(const Tensor& x) const;  // [..., C] -> [..., C]
  void forward_row(const float* x, float* y) const;  // one position, as forward computes it
  void reset_parameters(uint64_t seed) override;
  NormKind kind() const { return kind_; }
  float eps() const { return eps_; }
  Tensor weight, bias;  // bias undefined without one

 private:
  NormKind kind_;
  float eps_;
};

// Feed-forward, each token on its own. gelu: c_fc (C -> H), GELU (tanh), c_proj (H -> C).
// swiglu: c_fc (C -> 2H: the gate, then the up projection), silu(gate) * up, c_proj (H -> C).
class MLP : public Module {
 public:
  explicit MLP(const GPTConfig& config, Init init = Init::pytorch);
  Tensor forward(const Tensor& x, const BlockTap& tap = {}) const;  // [B, T, C] -> [B, T, C]
  void forward_row(const float* x, RowScratch& scratch, float* y) const;  // one position: [C] -> [C]
  MlpKind kind() const { return kind_; }
  Linear c_fc, c_proj;

 private:
  MlpKind kind_;
};

// Masked multi-head self-attention: c_attn makes query, key and value for every head at once
// (n_head query heads, then n_kv_head key heads and as many value heads); with RoPE the queries
// and keys are turned by their positions before they meet.
class CausalSelfAttention : public Module {
 public:
  // rope_angles: the model's table (rope_angles(block_size, hs, theta), shared by its layers); made
  // here when the config has RoPE and none is given.
  explicit CausalSelfAttention(const GPTConfig& config, Init init = Init::pytorch, Tensor rope_angles = {});
  Tensor forward(const Tensor& x, const BlockTap& tap = {});  // [B, T, C] -> [B, T, C]
  // One position's attention over the positions `cache` holds (its own key and value added first):
  // x the normalized row [C], y [C]. Position `position` counts from the text's start; a RoPE
  // model turns by it, past block_size too.
  void forward_row(const float* x, int64_t position, KVCache& cache, RowScratch& scratch, float* y) const;
  const Tensor& weights() const { return weights_; }  // [B, nh, T, T] of the last forward
  // automatic: the weights are kept below T = kTiledAttentionFrom and recomputed in backward from there on
  // (ops.h); weights: always kept, so that weights() can show them.
  void set_attention_memory(AttentionMemory memory) { memory_ = memory; }
  Linear c_attn, c_proj;

 private:
  Tensor turned(const Tensor& qkv) const;  // c_attn's product, queries and keys turned by RoPE
  int64_t n_head_, n_kv_head_;
  float rope_theta_;
  Tensor rope_angles_;  // [block_size, hs]; undefined without RoPE
  AttentionMemory memory_ = AttentionMemory::automatic;
  Tensor weights_;
};

// Pre-norm transformer block with two residual connections.
class Block : public Module {
 public:
  explicit Block(const GPTConfig& config, Init init = Init::pytorch, Tensor rope_angles = {});
  Tensor forward(const Tensor& x, const std::function<Tensor(const Tensor&)>& residual_dropout,
                 const BlockTap& tap = {});
  // forward for one position, x [C] updated in place (no dropout: decoding).
  void forward_row(float* x, int64_t position, KVCache& cache, RowScratch& scratch) const;
  Norm ln_1;
  CausalSelfAttention attn;
  Norm ln_2;
  MLP mlp;
};

struct GPTOutput {
  Tensor logits;  // [B, T, vocab_size]
  Tensor loss;    // mean cross-entropy; undefined when no targets were given
};

class GPT : public Module {
 public:
  explicit GPT(const GPTConfig& config, uint64_t seed = kDefaultSeed);
  // A GPT whose parameters are allocated but not written, for a loader that fills every one (a
  // 124M model skips drawing 124M random numbers twice).
  static std::shared_ptr<GPT> unwritten(const GPTConfig& config);
  const GPTConfig& config() const { return config_; }

  // GPT-2's initialization from a seed: weights N(0, 0.02), the residual projections
  // (attn.c_proj, mlp.c_proj) N(0, 0.02 / sqrt(2 n_layer)), biases 0, norm weights 1.
  void init_weights(uint64_t seed);
  void reset_parameters(uint64_t seed) override { init_weights(seed); }

  // idx, targets: B*T token ids, row-major [B, T]; 1 <= T <= block_size. `tap` sees every
  // intermediate (Tap) as it is made.
  GPTOutput forward(std::span<const int32_t> idx, int64_t B, int64_t T, std::span<const int32_t> targets = {},
                    const ForwardTap& tap = {});
  // The residual stream's start, forward's first step: x = wte[idx] + wpe[0..T-1], [B, T, C]
  // (wte[idx] alone with RoPE; dropout applied while training). The blocks, ln_f and the output
  // layer follow.
  Tensor embed(std::span<const int32_t> idx, int64_t B, int64_t T, const ForwardTap& tap = {});
  // The row forms of embed and of the end of forward, for one position (Generator): x [C] of
  // `token` at `position` (below block_size with learned positions); logits [V] of the row x.
  void embed_row(int32_t token, int64_t position, float* x) const;
  void logits_row(const float* x, RowScratch& scratch, float* logits) const;

  // After a forward pass: the attention weights of `layer`, [B, nh, T, T]; row i of head h of
  // batch row b is how much query i drew from each key j <= i. Contexts of kTiledAttentionFrom tokens or more
  // keep them only after set_attention_memory(AttentionMemory::weights).
  const Tensor& attention_weights(int64_t layer) const;
  void set_attention_memory(AttentionMemory memory);  // for every layer (ops.h)

  // Dropout masks come from (seed, call counter): restoring both makes a resume exact.
  uint64_t dropout_counter() const { return dropout_counter_; }
  void set_dropout_counter(uint64_t counter) { dropout_counter_ = counter; }
  void set_dropout_seed(uint64_t seed);  // the seed given to the constructor sets it too
  void set_dropout(float p);             // a training setting, not part of a checkpoint's /config

  // For inference (sample, eval): every Linear of the blocks, lm_head and wte stored in 8 bits by
  // groups of `group` weights of a row (Linear::use_int8); the parameters then hold the weights the
  // int8 ones stand for, so forward and the row forms compute the same model. wpe, the norms and
  // the biases stay float.
  void use_int8_weights(int64_t group = kInt8Group);
  WeightFormat weight_format() const { return weight_format_; }

  // The output layer's weight [V, C]: wte's, or lm_head's when untied.
  const Tensor& output_weight() const { return lm_head ? lm_head->weight : wte.weight; }

  Embedding wte;
  Embedding* wpe = nullptr;  // learned positions only; owned by the module tree, as h and lm_head
  std::vector<Block*> h;
  Norm ln_f;
  Linear* lm_head = nullptr;  // untied only

 private:
  GPT(const GPTConfig& config, uint64_t seed, Init init);  // every layer built, none written
  std::shared_ptr<const Int8Matrix> output_int8_;  // wte's int8 form when it is the output layer
  WeightFormat weight_format_ = WeightFormat::fp32;
  friend std::vector<std::pair<std::string, Shape>> parameter_shapes(const GPTConfig& config);
  Tensor dropout_(const Tensor& x);
  GPTConfig config_;
  uint64_t dropout_seed_;
  uint64_t dropout_counter_ = 0;
};

}  // namespace tinygpt::nn
