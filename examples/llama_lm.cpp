// A Llama-shaped language model written out from the library's pieces: token embeddings without a
// position table, RMSNorm, a fused query/key/value Linear whose query and key heads RoPE turns,
// grouped-query attention (4 query heads sharing 2 key/value heads), a SwiGLU feed-forward, no
// biases, the output tied to the embeddings. Given the built-in GPT's weights (nn::llama_style),
// it computes the GPT's logits: the pieces are the model.
//   usage: example_llama_lm
#include <tinygpt/tinygpt.h>

#include <cmath>
#include <cstdio>
#include <vector>

using namespace tinygpt;

class LlamaLM : public nn::Module {
 public:
  LlamaLM(int64_t vocab, int64_t block, int64_t C, int64_t heads, int64_t kv_heads, int64_t hidden)
      : tok(add_module<nn::Embedding>("tok", vocab, C)), attn_norm(add_module<nn::RMSNorm>("attn_norm", C)),
        qkv(add_module<nn::Linear>("qkv", C, (heads + 2 * kv_heads) * (C / heads), false)),
        proj(add_module<nn::Linear>("proj", C, C, false)), ffn_norm(add_module<nn::RMSNorm>("ffn_norm", C)),
        gate_up(add_module<nn::Linear>("gate_up", C, 2 * hidden, false)),
        down(add_module<nn::Linear>("down", hidden, C, false)), final_norm(add_module<nn::RMSNorm>("final_norm", C)),
        angles_(rope_angles(block, C / heads)), heads_(heads), kv_heads_(kv_heads) {}

  // ids: B rows of T tokens -> logits [B, T, vocab]
  Tensor forward(std::span<const int32_t> ids, int64_t B, int64_t T) const {
    Tensor x = tok.forward(ids, {B, T});  // [B, T, C]: positions enter through RoPE, not a table
    // Queries, keys, values side by side; the query and key heads turned by their positions.
    const Tensor q_k_v = rope(qkv.forward(attn_norm.forward(x)), angles_.size(1), heads_ + kv_heads_, angles_);
    x = x + proj.forward(causal_self_attention(q_k_v, heads_, kv_heads_).y);
    x = x + down.forward(swiglu_.forward(gate_up.forward(ffn_norm.forward(x))));  // silu(gate) * up
    return linear(final_norm.forward(x), tok.weight, Tensor());                      // tied output layer
  }

  nn::Embedding& tok;
  nn::RMSNorm& attn_norm;
  nn::Linear &qkv, &proj;
  nn::RMSNorm& ffn_norm;
  nn::Linear &gate_up, &down;
  nn::RMSNorm& final_norm;

 private:
  nn::SwiGLU swiglu_;
  Tensor angles_;  // RoPE's cos and sin for every position, computed once
  int64_t heads_, kv_heads_;
};

int main() {
  const int64_t V = 50, T = 16, C = 32, heads = 4, kv_heads = 2;
  nn::GPTConfig config = nn::llama_style({.vocab_size = V, .block_size = T, .n_layer = 1, .n_head = heads, .n_embd = C});
  config.n_kv_head = kv_heads;
  nn::GPT gpt(config, /*seed=*/5);
  LlamaLM mine(V, T, C, heads, kv_heads, config.hidden());

  // The GPT's weights into the pieces (nanoGPT's names on the left).
  const nn::Block& block = *gpt.h[0];
  const std::vector<std::pair<const Tensor*, Tensor*>> copies = {
      {&gpt.wte.weight, &mine.tok.weight},          {&block.ln_1.weight, &mine.attn_norm.weight},
      {&block.attn.c_attn.weight, &mine.qkv.weight}, {&block.attn.c_proj.weight, &mine.proj.weight},
      {&block.ln_2.weight, &mine.ffn_norm.weight},  {&block.mlp.c_fc.weight, &mine.gate_up.weight},
      {&block.mlp.c_proj.weight, &mine.down.weight}, {&gpt.ln_f.weight, &mine.final_norm.weight}};
  NoGradGuard no_grad;
  for (const auto& [from, to] : copies) to->copy_from_(*from);

  std::vector<int32_t> ids(static_cast<size_t>(2 * T));
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>((i * 7 + 3) % V);
  const std::vector<float> a = gpt.forward(ids, 2, T).logits.to_vector(), b = mine.forward(ids, 2, T).to_vector();
  double most = 0;
  for (size_t i = 0; i < a.size(); ++i) most = std::max(most, static_cast<double>(std::abs(a[i] - b[i])));
  std::printf("%lld parameters; the largest difference from the built-in GPT's logits: %g\n",
              static_cast<long long>(mine.parameter_count()), most);
  return most == 0.0 ? 0 : 1;  // the same ops on the same weights: the same bits
}
