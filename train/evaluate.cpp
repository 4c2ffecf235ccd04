#include "evaluate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "../autograd/graph.h"
#include "../autograd/memory.h"
#include "../data/batches.h"
#include "../autograd/elementary.h"

namespace tinygpt::train {

EvalResult evaluate(nn::GPT& model, const data::TokenArray& tokens, int64_t batch) {
  const int64_t T = model.config().block_size;
  const std::vector<data::EvalWindow> windows = data::evaluation_windows(tokens.size(), T);
  if (windows.empty()) throw std::invalid_argument(fmt::format("eval: the text has {} tokens; at least 2 are needed", tokens.size()));
  NoGradGuard no_grad;
  memory::Reuse reuse;  // every batch after the first runs in the memory the one before freed
  const bool was_training = model.training();
  model.eval();
  double sum = 0;
  int64_t scored = 0;
  std::vector<int32_t> inputs, targets, window;
  for (size_t w = 0; w < windows.size();) {
    // Consecutive windows of one length form a batch: all full ones, then the last short one.
    const int64_t len = windows[w].length;
    size_t end = w;
    while (end < windows.size() && end - w < static_cast<size_t>(batch) && windows[end].length == len) ++end;
    const auto B = static_cast<int64_t>(end - w);
    inputs.resize(B * len), targets.resize(B * len), window.resize(len + 1);
    for (int64_t b = 0; b < B; ++b) {
      tokens.copy_to(windows[w + b].start, len + 1, window.data());
      std::copy_n(window.begin(), len, inputs.begin() + b * len);
      std::copy_n(window.begin() + 1, len, targets.begin() + b * len);
    }
    const double mean = model.forward(inputs, B, len, targets).loss.item();
    sum += mean * static_cast<double>(B * len);
    scored += B * len;
    w = end;
  }
  model.train(was_training);
  return {sum / static_cast<double>(scored), exp_double(sum / static_cast<double>(scored)), scored};
}

const char* name(ByteCount of) { return of == ByteCount::text ? "text" : "tokens"; }

int64_t spelled_bytes(const data::Tokenizer& tokenizer, const data::TokenArray& tokens) {
  std::vector<int64_t> length(static_cast<size_t>(tokenizer.vocab_size()));
  for (int32_t id = 0; id < tokenizer.vocab_size(); ++id) length[id] = static_cast<int64_t>(tokenizer.token_bytes(id).size());
  int64_t bytes = 0;
  std::vector<int32_t> chunk(4096);  // read a stretch at a time: the tokens may be shards on disk
  for (int64_t i = 0; i < tokens.size(); i += static_cast<int64_t>(chunk.size())) {
    const int64_t n = std::min<int64_t>(static_cast<int64_t>(chunk.size()), tokens.size() - i);
    tokens.copy_to(i, n, chunk.data());
    for (int64_t k = 0; k < n; ++k) bytes += length.at(static_cast<size_t>(chunk[k]));
  }
  return bytes;
}

EvalResult per_byte(EvalResult r, int64_t bytes, ByteCount of) {
  r.bytes = bytes, r.bytes_of = of;
  const double nats = r.loss * static_cast<double>(r.tokens);
  r.bits_per_byte = bytes > 0 ? nats / (static_cast<double>(bytes) * 0.6931471805599453) : 0.0;
  return r;
}

}  // namespace tinygpt::train
