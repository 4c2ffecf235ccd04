// Each format's weights as a table (weight_map.h), side by side.
#include <fmt/format.h>

#include "weight_map.h"

namespace tinygpt::io {

WeightMap hf_gpt2_weights(const nn::GPTConfig& config) {
  WeightMap map;
  for (const auto& [name, shape] : nn::parameter_shapes(config)) {
    bool conv1d = false;  // GPT-2 keeps these four as Conv1D, whose weight is the transpose of nn.Linear's
    for (const char* end : {"attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight"})
      conv1d = conv1d || name.ends_with(end);
    map.push_back({.name = name, .parameter = name, .layout = conv1d ? Layout::transposed : Layout::same});
  }
  return map;
}

WeightMap hf_llama_weights(const nn::GPTConfig& c) {
  const int64_t C = c.n_embd, KV = c.kv_heads() * c.head_size(), H = c.hidden();
  WeightMap map = {{"model.embed_tokens.weight", "transformer.wte.weight"}};
  for (int64_t i = 0; i < c.n_layer; ++i) {
    const std::string ours = fmt::format("transformer.h.{}.", i), theirs = fmt::format("model.layers.{}.", i);
    map.insert(map.end(),
               {{theirs + "input_layernorm.weight", ours + "ln_1.weight"},
                {theirs + "self_attn.q_proj.weight", ours + "attn.c_attn.weight", 0, C, Layout::rope_halves},
                {theirs + "self_attn.k_proj.weight", ours + "attn.c_attn.weight", C, KV, Layout::rope_halves},
                {theirs + "self_attn.v_proj.weight", ours + "attn.c_attn.weight", C + KV, KV},
                {theirs + "self_attn.o_proj.weight", ours + "attn.c_proj.weight"},
                {theirs + "post_attention_layernorm.weight", ours + "ln_2.weight"},
                {theirs + "mlp.gate_proj.weight", ours + "mlp.c_fc.weight", 0, H},
                {theirs + "mlp.up_proj.weight", ours + "mlp.c_fc.weight", H, H},
                {theirs + "mlp.down_proj.weight", ours + "mlp.c_proj.weight"}});
  }
  map.push_back({"model.norm.weight", "transformer.ln_f.weight"});
  if (!c.tie_embeddings) map.push_back({"lm_head.weight", "lm_head.weight"});
  return map;
}

WeightMap llama2c_weights(const nn::GPTConfig& c) {
  const int64_t C = c.n_embd, KV = c.kv_heads() * c.head_size(), H = c.hidden();
  struct PerLayer {
    const char* name;  // run.c's
    const char* ours;  // in block i
    int64_t row = 0, rows = -1;
  };
  const PerLayer per_layer[] = {{"rms_att_weight", "ln_1.weight"},
                                {"wq", "attn.c_attn.weight", 0, C},
                                {"wk", "attn.c_attn.weight", C, KV},
                                {"wv", "attn.c_attn.weight", C + KV, KV},
                                {"wo", "attn.c_proj.weight"},
                                {"rms_ffn_weight", "ln_2.weight"},
                                {"w1", "mlp.c_fc.weight", 0, H},  // the gate
                                {"w2", "mlp.c_proj.weight"},
                                {"w3", "mlp.c_fc.weight", H, H}};  // the up projection
  WeightMap map = {{"token_embedding_table", "transformer.wte.weight"}};
  for (const PerLayer& p : per_layer)
    for (int64_t i = 0; i < c.n_layer; ++i)
      map.push_back({fmt::format("{} of layer {}", p.name, i), fmt::format("transformer.h.{}.{}", i, p.ours), p.row,
                     p.rows});
  map.push_back({"rms_final_weight", "transformer.ln_f.weight"});
  for (const char* rope : {"freq_cis_real", "freq_cis_imag"})  // RoPE's cos and sin, [seq_len, hs / 2]
    map.push_back({.name = rope, .table = {c.block_size, c.head_size() / 2}});
  if (!c.tie_embeddings) map.push_back({"wcls", "lm_head.weight"});
  return map;
}

}  // namespace tinygpt::io
