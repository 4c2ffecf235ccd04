// A character-level language model of a recurrent network: characters embedded, an LSTM (or a
// GRU) over the sequence, a Linear layer to the next character's logits. Trained on a text with
// the library's tokenizer and batches, then sampled one character at a time, carrying the state.
// It checks that the model learned: the loss on the text's held-out last tenth must fall below
// 2.3 nats (a uniform guess over the README's ~100 characters is 4.6).
//   usage: example_rnn_lm [text file] [steps] [lstm|gru]
#include <tinygpt/tinygpt.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

using namespace tinygpt;

class CharRNN : public nn::Module {
 public:
  CharRNN(int64_t vocab, int64_t C, int64_t H, bool lstm)
      : embed(add_module<nn::Embedding>("embed", vocab, C)), head(add_module<nn::Linear>("head", H, vocab)) {
    if (lstm) rnn = &add_module<nn::LSTM>("rnn", C, H, nn::RecurrentOptions{.batch_first = true});
    else rnn = &add_module<nn::GRU>("rnn", C, H, nn::RecurrentOptions{.batch_first = true});
  }

  // ids: B rows of T characters -> logits [B, T, vocab], and the last states (for sampling on).
  std::pair<Tensor, nn::RecurrentResult> forward(std::span<const int32_t> ids, int64_t B, int64_t T,
                                                 const nn::RecurrentResult& state = {}) const {
    const nn::RecurrentResult r = rnn->forward(embed.forward(ids, {B, T}), state.h_n, state.c_n);
    return {head.forward(r.output), r};
  }

  nn::Embedding& embed;
  nn::Recurrent* rnn = nullptr;
  nn::Linear& head;
};

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "/usr/share/games/fortunes/fortunes";
  const int64_t steps = argc > 2 ? std::stoll(argv[2]) : 600;
  const bool lstm = argc <= 3 || std::string(argv[3]) != "gru";
  const int64_t B = 16, T = 32, C = 32, H = 128;

  const std::string text = data::read_text_file(path);
  const data::CharTokenizer tokenizer = data::CharTokenizer::from_text(text);
  const std::vector<int32_t> ids = tokenizer.encode(text);
  const size_t split = ids.size() * 9 / 10;
  data::TokenArray train(tokenizer.vocab_size()), held_out(tokenizer.vocab_size());
  train.append(std::vector<int32_t>(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(split)));
  held_out.append(std::vector<int32_t>(ids.begin() + static_cast<std::ptrdiff_t>(split), ids.end()));
  data::BatchSampler batches(train, B, T, /*seed=*/1);

  CharRNN model(tokenizer.vocab_size(), C, H, lstm);
  model.reset_parameters(1);
  optim::AdamW optimizer(model.named_parameters(), {.lr = 1e-2f, .weight_decay = 0.0f});
  const optim::LrSchedule schedule{.lr = 1e-2f, .min_lr = 1e-3f, .warmup = steps / 20, .decay_iters = steps};
  std::printf("%s, %lld characters, %lld distinct; %lld parameters\n", lstm ? "LSTM" : "GRU",
              static_cast<long long>(ids.size()), static_cast<long long>(tokenizer.vocab_size()),
              static_cast<long long>(model.parameter_count()));

  memory::Reuse reuse;  // steps take back the memory the last one freed
  std::vector<int32_t> inputs, targets;
  for (int64_t step = 0; step < steps; ++step) {
    schedule.apply(optimizer, step);
    optimizer.zero_grad();
    batches.next(inputs, targets);
    Tensor loss = cross_entropy(model.forward(inputs, B, T).first, targets);
    loss.backward();
    optim::clip_grad_norm(model.parameters(), 1.0);  // recurrent networks' gradients spike
    optimizer.step();
    if ((step + 1) % 100 == 0 || step + 1 == steps)
      std::printf("step %4lld  loss %.4f\n", static_cast<long long>(step + 1), loss.item());
  }

  NoGradGuard no_grad;
  data::BatchSampler held_batches(held_out, B, T, /*seed=*/2);
  double held = 0;
  const int batches_scored = 8;
  for (int b = 0; b < batches_scored; ++b) {
    held_batches.next(inputs, targets);
    held += cross_entropy(model.forward(inputs, B, T).first, targets).item();
  }
  held /= batches_scored;
  std::printf("held-out loss %.4f nats per character\n", held);

  // Sampling: one character at a time, the state carried from step to step.
  std::vector<int32_t> sample = {ids[0]};
  nn::RecurrentResult state;
  Rng rng(7);
  for (int n = 0; n < 200; ++n) {
    auto [logits, next_state] = model.forward(std::span<const int32_t>(&sample.back(), 1), 1, 1, state);
    state = next_state;
    sample.push_back(nn::pick_token(logits.to_vector(), {.temperature = 0.8}, rng.uniform()));
  }
  std::printf("---\n%s\n---\n", tokenizer.decode(sample).c_str());
  return held < 2.3 ? 0 : 1;
}
