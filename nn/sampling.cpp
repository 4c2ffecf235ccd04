#include "tinygpt/nn/sampling.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <span>
#include <stdexcept>
#include <vector>

#include "tinygpt/autograd/random.h"
#include "tinygpt/data/utf8.h"

namespace tinygpt::nn {

int32_t pick_token(std::span<const float> logits, double temperature, int64_t top_k, double uniform) {
  const auto V = static_cast<int64_t>(logits.size());
  if (V == 0) throw std::invalid_argument("pick_token: no logits");
  if (!(temperature >= 0) || top_k < 0)
    throw std::invalid_argument(fmt::format("pick_token: temperature {} and top_k {} must not be negative", temperature,
                                            top_k));
  if (temperature == 0) return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
  const int64_t k = top_k > 0 ? std::min(top_k, V) : V;
  std::vector<int32_t> order(V);
  std::iota(order.begin(), order.end(), 0);
  const float top = *std::max_element(logits.begin(), logits.end());
  if (k < V) {  // the k most likely, highest first; ties by id, so the choice never depends on sort details
    std::partial_sort(order.begin(), order.begin() + k, order.end(),
                      [&](int32_t a, int32_t b) { return logits[a] != logits[b] ? logits[a] > logits[b] : a < b; });
  }  // all of them: in id order (a sort of a whole vocabulary would cost more than the model's step)
  std::vector<double> p(k);
  double total = 0;
  for (int64_t i = 0; i < k; ++i) total += (p[i] = std::exp((logits[order[i]] - top) / temperature));
  double r = uniform * total;
  for (int64_t i = 0; i < k; ++i)
    if ((r -= p[i]) < 0) return order[i];
  return order[k - 1];
}

std::vector<int32_t> start_of_text(const data::Tokenizer& tokenizer) {
  if (const std::optional<int32_t> document = tokenizer.document_token()) return {*document};
  try {
    std::vector<int32_t> newline = tokenizer.encode("\n");
    if (!newline.empty()) return newline;  // a SentencePiece model may normalize it away
  } catch (const std::exception&) {  // a character vocabulary without a newline
  }
  return {0};
}

std::string generate(nn::GPT& model, const data::Tokenizer& tokenizer, const SampleOptions& o,
                     const std::function<void(const std::string&)>& on_text) {
  if (o.temperature < 0) throw std::invalid_argument(fmt::format("--temperature {} must not be negative", o.temperature));
  if (o.top_k < 0) throw std::invalid_argument(fmt::format("--top-k {} must not be negative", o.top_k));
  if (tokenizer.vocab_size() > model.config().vocab_size)
    throw std::invalid_argument(fmt::format("sample: the tokenizer has {} tokens, the model only {} rows",
                                            tokenizer.vocab_size(), model.config().vocab_size));
  std::vector<int32_t> context = o.prompt.empty() ? std::vector<int32_t>{} : tokenizer.encode(o.prompt, "the prompt");
  if (context.empty()) context = start_of_text(tokenizer);
  const int64_t block = model.config().block_size;
  Generator gen(model);
  // A prompt longer than the block: its last block_size tokens.
  const std::vector<float>* logits = nullptr;
  for (size_t i = context.size() - std::min<size_t>(context.size(), block); i < context.size(); ++i)
    logits = &gen.feed(context[i]);
  Rng rng(o.seed);
  std::string text, pending;  // pending: bytes of a character not yet complete
  for (int64_t n = 0; n < o.tokens; ++n) {
    // Rows past the tokenizer's last token are padding that no text produces: never picked.
    const auto tokens = std::span<const float>(*logits).first(static_cast<size_t>(tokenizer.vocab_size()));
    const int32_t next = pick_token(tokens, o.temperature, o.top_k, rng.uniform());
    pending += tokenizer.token_bytes(next);
    size_t valid = 0;  // the longest prefix of whole characters
    for (size_t i = 0; i < pending.size();) {
      if (data::next_code_point(pending, i) < 0) break;
      valid = i;
    }
    if (valid > 0 || pending.size() >= 4) {
      const std::string piece = valid > 0 ? pending.substr(0, valid) : data::sanitize_utf8(pending);
      pending.erase(0, valid > 0 ? valid : pending.size());
      text += piece;
      if (on_text) on_text(piece);
    }
    if (n + 1 == o.tokens) break;
    logits = &gen.feed(next);
  }
  if (!pending.empty()) {
    const std::string piece = data::sanitize_utf8(pending);
    text += piece;
    if (on_text) on_text(piece);
  }
  return text;
}

}  // namespace tinygpt::nn
