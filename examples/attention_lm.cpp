// A character language model whose attention is written out step by step from tensor ops, as in
// the explanation: Q·Kᵀ -> ÷√d_k -> causal mask -> softmax -> ·V, over several heads. It checks
// those steps against the library's fused causal_attention, then trains on a text and shows the loss fall.
//   usage: example_attention_lm text.txt [steps]
#include <tinygpt/tinygpt.h>

#include <cmath>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

using namespace tinygpt;

namespace {

constexpr int64_t kBlock = 32, kEmbd = 48, kHeads = 4, kBatch = 16;

// Causal attention from its steps. q, k, v: [B, heads, T, d_k] -> [B, heads, T, d_k].
Tensor attention_by_hand(const Tensor& q, const Tensor& k, const Tensor& v) {
  const int64_t T = q.size(2), d_k = q.size(3);
  const Tensor scores = matmul(q, k.transpose(2, 3)) / std::sqrt(static_cast<float>(d_k));  // [B, h, T, T]
  const Tensor future = triu(Tensor::ones({T, T}), 1);  // 1 where a key comes after its query
  const Tensor weights = softmax(masked_fill(scores, future, -INFINITY), -1);
  return matmul(weights, v);
}

struct AttentionLM : nn::Module {
  explicit AttentionLM(int64_t vocab) : tokens(vocab, kEmbd), positions(kBlock, kEmbd), qkv(kEmbd, 3 * kEmbd),
                                        proj(kEmbd, kEmbd), ln(kEmbd), head(kEmbd, vocab) {
    register_module("tokens", tokens);
    register_module("positions", positions);
    register_module("qkv", qkv);
    register_module("proj", proj);
    register_module("ln", ln);
    register_module("head", head);
  }
  // The heads' queries, keys and values: [B, T, C] -> three [B, heads, T, C / heads].
  std::vector<Tensor> heads(const Tensor& x) const {
    const int64_t B = x.size(0), T = x.size(1);
    std::vector<Tensor> parts = split(qkv.forward(ln.forward(x)), kEmbd, 2);
    for (Tensor& p : parts) p = p.view({B, T, kHeads, kEmbd / kHeads}).transpose(1, 2);
    return parts;
  }
  // Token plus position embeddings: ids [B * T] -> [B, T, C].
  Tensor embed(std::span<const int32_t> ids, int64_t B, int64_t T) const {
    std::vector<int32_t> where(static_cast<size_t>(B * T));
    for (int64_t i = 0; i < B * T; ++i) where[i] = static_cast<int32_t>(i % T);
    return tokens.forward(ids, {B, T}) + positions.forward(where, {B, T});
  }
  Tensor forward(std::span<const int32_t> ids, int64_t B, int64_t T) const {  // -> logits [B, T, vocab]
    const Tensor x = embed(ids, B, T);
    const std::vector<Tensor> qkv_heads = heads(x);
    const Tensor y = attention_by_hand(qkv_heads[0], qkv_heads[1], qkv_heads[2]).transpose(1, 2).reshape({B, T, kEmbd});
    return head.forward(x + proj.forward(y));  // the residual: attention adds to each token
  }
  nn::Embedding tokens, positions;
  nn::Linear qkv, proj;
  nn::LayerNorm ln;
  nn::Linear head;
};

}  // namespace

int main(int argc, char** argv) try {
  if (argc < 2) throw std::invalid_argument("usage: example_attention_lm text.txt [steps]");
  const std::string text = data::read_text_file(argv[1]);
  const int steps = argc > 2 ? std::stoi(argv[2]) : 300;
  const data::CharTokenizer tokenizer = data::CharTokenizer::from_text(text);
  data::TokenArray tokens(tokenizer.vocab_size());
  tokens.append(tokenizer.encode(text));
  AttentionLM model(tokenizer.vocab_size());
  data::BatchSampler batches(tokens, kBatch, kBlock, 1);
  std::vector<int32_t> inputs, targets;

  // The hand-written steps compute what the fused kernel computes.
  {
    NoGradGuard no_grad;
    batches.next(inputs, targets);
    const std::vector<Tensor> h = model.heads(model.embed(inputs, kBatch, kBlock));
    const Tensor difference = attention_by_hand(h[0], h[1], h[2]) - causal_attention(h[0], h[1], h[2]).y;
    const float gap = max(abs(difference).flatten(), 0).item();
    std::printf("hand-written attention vs causal_attention: largest difference %.2g\n", gap);
    if (!(gap < 1e-5f)) return 1;
  }

  optim::AdamW optimizer(model.named_parameters(), {.lr = 3e-3f});
  float first = 0, last = 0;
  for (int step = 0; step < steps; ++step) {
    batches.next(inputs, targets);
    optimizer.zero_grad();
    const Tensor loss = cross_entropy(model.forward(inputs, kBatch, kBlock).view({kBatch * kBlock, -1}), targets);
    loss.backward();
    optimizer.step();
    (step == 0 ? first : last) = loss.item();
    if (step % 100 == 0) std::printf("step %4d  loss %.3f\n", step, loss.item());
  }
  std::printf("loss %.3f -> %.3f\n", first, last);
  return last < first - 0.5f ? 0 : 1;  // a character model gains far more than this in 300 steps
} catch (const std::exception& e) {
  std::fprintf(stderr, "example_attention_lm: %s\n", e.what());
  return 2;
}
