// A character-level language model that is not the built-in GPT, built from the library's parts:
// token and position embeddings, one pre-LayerNorm block (causal attention over several heads, an
// MLP as a Sequential), a final LayerNorm and an output layer of its own. Trained with the library's
// tokenizer, batches, schedule and clipping, then sampled.
//   usage: example_char_lm [text file] [steps]     (default: the fortunes package's fortunes)
#include <tinygpt/tinygpt.h>

#include <cstdio>
#include <string>
#include <vector>

using namespace tinygpt;

class TinyLM : public nn::Module {
 public:
  TinyLM(int64_t vocab, int64_t block, int64_t C, int64_t heads)
      : tok(add_module<nn::Embedding>("tok", vocab, C)), pos(add_module<nn::Embedding>("pos", block, C)),
        ln_1(add_module<nn::LayerNorm>("ln_1", C)), qkv(add_module<nn::Linear>("qkv", C, 3 * C)),
        proj(add_module<nn::Linear>("proj", C, C)), ln_2(add_module<nn::LayerNorm>("ln_2", C)),
        mlp(add_module<nn::Sequential>("mlp")), ln_f(add_module<nn::LayerNorm>("ln_f", C)),
        head(add_module<nn::Linear>("head", C, vocab)), heads_(heads) {
    mlp.add<nn::Linear>(C, 4 * C);
    mlp.add<nn::GELU>();
    mlp.add<nn::Linear>(4 * C, C);
  }

  // ids: B rows of T tokens -> logits [B, T, vocab]
  Tensor forward(std::span<const int32_t> ids, int64_t B, int64_t T) const {
    const int64_t C = tok.weight.size(1), hs = C / heads_;
    std::vector<int32_t> positions(static_cast<size_t>(T));
    for (int64_t t = 0; t < T; ++t) positions[t] = static_cast<int32_t>(t);
    Tensor x = tok.forward(ids, {B, T}) + pos.forward(positions, {T});  // [B, T, C]
    // Each head attends over its own slice of the query, key and value vectors.
    const std::vector<Tensor> q_k_v = split(qkv.forward(ln_1.forward(x)), C, 2);
    auto heads = [&](const Tensor& t) { return t.reshape({B, T, heads_, hs}).transpose(1, 2); };  // [B, nh, T, hs]
    const AttentionResult att = causal_attention(heads(q_k_v[0]), heads(q_k_v[1]), heads(q_k_v[2]));
    x = x + proj.forward(att.y.transpose(1, 2).reshape({B, T, C}));  // heads merged back
    x = x + mlp.forward(ln_2.forward(x));
    return head.forward(ln_f.forward(x));
  }

  nn::Embedding &tok, &pos;
  nn::LayerNorm& ln_1;
  nn::Linear &qkv, &proj;
  nn::LayerNorm& ln_2;
  nn::Sequential& mlp;
  nn::LayerNorm& ln_f;
  nn::Linear& head;

 private:
  int64_t heads_;
};

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "/usr/share/games/fortunes/fortunes";
  const int64_t steps = argc > 2 ? std::stoll(argv[2]) : 600;
  const int64_t B = 16, T = 32, C = 64, heads = 4;

  const std::string text = data::read_text_file(path);
  const data::CharTokenizer tokenizer = data::CharTokenizer::from_text(text);
  data::TokenArray tokens(tokenizer.vocab_size());
  tokens.append(tokenizer.encode(text));
  data::BatchSampler batches(tokens, B, T, /*seed=*/1);

  TinyLM model(tokenizer.vocab_size(), T, C, heads);
  model.reset_parameters(1);
  optim::AdamW optimizer(model.named_parameters(), {.lr = 3e-3f, .weight_decay = 0.01f});
  const optim::LrSchedule schedule{.lr = 3e-3f, .min_lr = 3e-4f, .warmup = steps / 10, .decay_iters = steps};
  std::printf("%lld characters, %lld distinct; %lld parameters\n", static_cast<long long>(tokens.size()),
              static_cast<long long>(tokenizer.vocab_size()), static_cast<long long>(model.parameter_count()));

  std::vector<int32_t> inputs, targets;
  float first_loss = 0, loss_value = 0;
  for (int64_t step = 0; step < steps; ++step) {
    schedule.apply(optimizer, step);
    optimizer.zero_grad();
    batches.next(inputs, targets);
    Tensor loss = cross_entropy(model.forward(inputs, B, T), targets);
    loss.backward();
    optim::clip_grad_norm(model.parameters(), 1.0);
    optimizer.step();
    loss_value = loss.item();
    if (step == 0) first_loss = loss_value;
    if ((step + 1) % 100 == 0 || step + 1 == steps)
      std::printf("step %4lld  loss %.4f  lr %.2e\n", static_cast<long long>(step + 1), loss_value, optimizer.lr());
  }

  NoGradGuard no_grad;
  std::vector<int32_t> context = {tokens[0]};
  Rng rng(7);
  for (int n = 0; n < 200; ++n) {
    const auto len = static_cast<int64_t>(std::min<size_t>(context.size(), T));
    const std::span<const int32_t> window(context.data() + context.size() - len, static_cast<size_t>(len));
    const Tensor last = model.forward(window, 1, len).slice(1, len - 1, len);  // logits of the next character
    context.push_back(nn::pick_token(last.to_vector(), {.temperature = 0.8}, rng.uniform()));
  }
  std::printf("---\n%s\n---\n", tokenizer.decode(context).c_str());
  return loss_value < first_loss - 0.5f ? 0 : 1;  // it learned something
}
