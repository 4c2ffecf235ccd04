#include "sampling.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <span>
#include <stdexcept>
#include <vector>

#include "../autograd/random.h"
#include "../data/utf8.h"
#include "../autograd/elementary.h"

namespace tinygpt::nn {

namespace {

void check_pick(const PickOptions& pick) {
  if (!(pick.temperature >= 0)) throw std::invalid_argument(fmt::format("--temperature {} must not be negative", pick.temperature));
  if (pick.top_k < 0) throw std::invalid_argument(fmt::format("--top-k {} must not be negative", pick.top_k));
  if (!(pick.top_p > 0 && pick.top_p <= 1))
    throw std::invalid_argument(fmt::format("--top-p {} must be above 0 and at most 1", pick.top_p));
}

}  // namespace

int32_t pick_token(std::span<const float> logits, const PickOptions& pick, double uniform) {
  const auto V = static_cast<int64_t>(logits.size());
  if (V == 0) throw std::invalid_argument("pick_token: no logits");
  check_pick(pick);
  if (pick.temperature == 0) return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
  const int64_t k = pick.top_k > 0 ? std::min(pick.top_k, V) : V;
  const bool nucleus = pick.top_p < 1;
  std::vector<int32_t> order(V);
  std::iota(order.begin(), order.end(), 0);
  const float top = *std::max_element(logits.begin(), logits.end());
  // The k most likely, highest first, ties by id (so the choice never depends on sort details); the
  // nucleus needs them ranked, the whole vocabulary when top_k is 0. Otherwise all of them in id
  // order: a sort of a whole vocabulary can cost more than a small model's step.
  if (k < V || nucleus)
    std::partial_sort(order.begin(), order.begin() + k, order.end(),
                      [&](int32_t a, int32_t b) { return logits[a] != logits[b] ? logits[a] > logits[b] : a < b; });
  std::vector<double> p(k);
  double total = 0;
  for (int64_t i = 0; i < k; ++i) total += (p[i] = vector_exp((logits[order[i]] - top) / pick.temperature));
  int64_t kept = k;
  if (nucleus) {  // the fewest most likely whose share reaches top_p
    double sum = 0;
    for (kept = 0; kept < k && sum < pick.top_p * total;) sum += p[kept++];
    total = sum;
  }
  double r = uniform * total;
  for (int64_t i = 0; i < kept; ++i)
    if ((r -= p[i]) < 0) return order[i];
  return order[kept - 1];
}

const char* name(StopReason reason) {
  switch (reason) {
    case StopReason::length: return "length";
    case StopReason::end_of_text: return "end of text";
    case StopReason::stop_text: return "stop text";
  }
  return "?";
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

namespace {

// Where the first stop text starts in text[from..), or npos.
size_t find_stop(const std::string& text, size_t from, const std::vector<std::string>& stops) {
  size_t first = std::string::npos;
  for (const std::string& stop : stops) first = std::min(first, text.find(stop, from));
  return first;
}

// How many bytes at the end of text[from..) may begin a stop text: they wait for the next token.
size_t may_begin_stop(const std::string& text, size_t from, const std::vector<std::string>& stops) {
  size_t longest = 0;
  for (const std::string& stop : stops)
    for (size_t k = std::min(stop.size() - 1, text.size() - from); k > longest; --k)
      if (text.compare(text.size() - k, k, stop, 0, k) == 0) {
        longest = k;
        break;
      }
  return longest;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

void check(const SampleOptions& options) {
  check_pick(options.pick);
  for (const std::string& stop : options.stop) {
    if (stop.empty()) throw std::invalid_argument("--stop: an empty text would stop before the first token");
    if (const size_t bad = data::find_invalid_utf8(stop); bad != std::string::npos)
      throw std::invalid_argument(fmt::format(
          "--stop: the text is not valid UTF-8 (byte {} of {}): a sample is UTF-8 text and would never hold it", bad + 1,
          stop.size()));
  }
}

SampleResult generate(nn::GPT& model, const data::Tokenizer& tokenizer, const SampleOptions& o,
                      const std::function<void(const std::string&)>& on_text) {
  check(o);
  if (tokenizer.vocab_size() > model.config().vocab_size)
    throw std::invalid_argument(fmt::format("sample: the tokenizer has {} tokens, the model only {} rows",
                                            tokenizer.vocab_size(), model.config().vocab_size));
  auto t0 = std::chrono::steady_clock::now();
  std::vector<int32_t> context = o.prompt.empty() ? std::vector<int32_t>{} : tokenizer.encode(o.prompt, "the prompt");
  const bool text_starts = context.empty();  // the sample is a text's start, decoded as one
  if (text_starts) context = start_of_text(tokenizer);
  const int64_t block = model.config().block_size;
  Generator gen(model);
  // A prompt longer than the block: its last block_size tokens.
  const std::vector<float>* logits = nullptr;
  SampleResult result;
  for (size_t i = context.size() - std::min<size_t>(context.size(), block); i < context.size(); ++i, ++result.prompt_tokens)
    logits = &gen.feed(context[i]);
  result.prompt_seconds = seconds_since(t0);
  t0 = std::chrono::steady_clock::now();
  Rng rng(o.seed);
  std::string& text = result.text;
  std::string pending;  // bytes of a character not yet complete
  size_t shown = 0;     // text[0..shown) has gone to on_text
  const auto show = [&](size_t end) {
    if (end > shown && on_text) on_text(text.substr(shown, end - shown));
    shown = std::max(shown, end);
  };
  for (int64_t n = 0; n < o.tokens; ++n) {
    // Rows past the tokenizer's last token are padding that no text produces: never picked.
    const auto tokens = std::span<const float>(*logits).first(static_cast<size_t>(tokenizer.vocab_size()));
    const int32_t next = pick_token(tokens, o.pick, rng.uniform());
    ++result.generated_tokens;
    result.ids.push_back(next);
    if (o.end_of_text == EndOfText::stop && tokenizer.ends_text(next)) {
      result.stopped = StopReason::end_of_text;
      break;
    }
    const bool first = text_starts && text.empty() && pending.empty();
    pending += first ? tokenizer.first_token_bytes(next) : tokenizer.token_bytes(next);
    size_t valid = 0;  // the longest prefix of whole characters
    for (size_t i = 0; i < pending.size();) {
      if (data::next_code_point(pending, i) < 0) break;
      valid = i;
    }
    if (valid > 0 || pending.size() >= 4) {
      text += valid > 0 ? pending.substr(0, valid) : data::sanitize_utf8(pending);
      pending.erase(0, valid > 0 ? valid : pending.size());
      if (const size_t at = find_stop(text, shown, o.stop); at != std::string::npos) {
        text.resize(at);
        result.stopped = StopReason::stop_text;
        break;
      }
      show(text.size() - may_begin_stop(text, shown, o.stop));
    }
    if (n + 1 == o.tokens) break;
    logits = &gen.feed(next);
  }
  if (result.stopped != StopReason::stop_text && !pending.empty()) {
    text += data::sanitize_utf8(pending);
    if (const size_t at = find_stop(text, shown, o.stop); at != std::string::npos) {
      text.resize(at);
      result.stopped = StopReason::stop_text;
    }
  }
  show(text.size());
  result.generate_seconds = seconds_since(t0);
  return result;
}

}  // namespace tinygpt::nn
