#include <catch2/catch.hpp>

#include <cmath>

#include "tinygpt/autograd/graph.h"
#include "tinygpt/autograd/threads.h"
#include "tinygpt/autograd/random.h"
#include "sentencepiece_model.h"
#include "tinygpt/data/char_tokenizer.h"
#include "tinygpt/io/sentencepiece_model.h"
#include "tinygpt/nn/sampling.h"
#include "tinygpt/train/evaluate.h"
#include "threads.h"

using namespace tinygpt;

namespace {
std::unique_ptr<nn::GPT> small_model(int64_t vocab, int64_t block) {
  auto m = std::make_unique<nn::GPT>(
      nn::GPTConfig{.vocab_size = vocab, .block_size = block, .n_layer = 2, .n_head = 2, .n_embd = 16}, 5);
  NoGradGuard no_grad;  // a less uniform model than the initialization
  uint64_t seed = 9;
  for (Tensor& p : m->parameters()) p.copy_from_(p + Tensor::randn(p.shape(), ++seed, 0.2f));
  return m;
}
data::TokenArray random_tokens(int64_t n, int64_t vocab) {
  Rng rng(3);
  std::vector<int32_t> ids(n);
  for (auto& id : ids) id = static_cast<int32_t>(rng.below(vocab));
  data::TokenArray t(vocab);
  t.append(ids);
  return t;
}
}  // namespace

TEST_CASE("eval: equals the sum of per-window losses computed directly", "[eval]") {
  const auto owned = small_model(11, 8);
  nn::GPT& model = *owned;
  for (int64_t n : {2, 9, 17, 30}) {
    const data::TokenArray tokens = random_tokens(n, 11);
    const train::EvalResult r = train::evaluate(model, tokens, 3);
    double sum = 0;
    int64_t count = 0;
    NoGradGuard no_grad;
    for (int64_t start = 0; start + 1 < n; start += 8) {  // the evaluation rule, one window at a time
      const int64_t len = std::min<int64_t>(8, n - 1 - start);
      std::vector<int32_t> x(len), y(len);
      tokens.copy_to(start, len, x.data());
      tokens.copy_to(start + 1, len, y.data());
      sum += model.forward(x, 1, len, y).loss.item() * len;
      count += len;
    }
    REQUIRE(r.tokens == n - 1);
    REQUIRE(r.tokens == count);
    REQUIRE(r.loss == Approx(sum / count).epsilon(1e-6));
    REQUIRE(r.perplexity == Approx(std::exp(sum / count)).epsilon(1e-6));
  }
}

TEST_CASE("sample: the key/value cache gives the full forward pass's logits, and starts again past the block", "[sample]") {
  const auto owned = small_model(13, 6);
  nn::GPT& model = *owned;
  std::vector<int32_t> ids = {1, 5, 2, 12, 0, 7};
  NoGradGuard no_grad;
  const std::vector<float> full = model.forward(ids, 1, 6).logits.to_vector();  // [6, 13]
  nn::Generator gen(model);
  for (int64_t t = 0; t < 6; ++t) {
    const std::vector<float>& step = gen.feed(ids[t]);
    for (int64_t v = 0; v < 13; ++v) REQUIRE(step[v] == Approx(full[t * 13 + v]).margin(1e-5));
  }
  // Past the block, learned positions start again: the last 3 tokens (block 6 / 2) from position
  // 0, the two before this one in one batched forward pass. The logits are the forward pass's over
  // that window, and the model is left in the mode it was in.
  model.train();
  auto window_logits = [&](const std::vector<int32_t>& window) {
    const std::vector<float> all = model.forward(window, 1, static_cast<int64_t>(window.size())).logits.to_vector();
    return std::vector<float>(all.end() - 13, all.end());
  };
  const std::vector<float> past = gen.feed(9);
  REQUIRE(model.training());
  REQUIRE(gen.length() == 3);
  model.eval();
  std::vector<float> expected = window_logits({0, 7, 9});
  for (int64_t v = 0; v < 13; ++v) REQUIRE(past[v] == Approx(expected[v]).margin(1e-5));
  for (const int32_t id : {3, 4}) gen.feed(id);
  const std::vector<float> again = gen.feed(11);  // full again: 0 7 9 3 4 11, still the forward's
  expected = window_logits({0, 7, 9, 3, 4, 11});
  for (int64_t v = 0; v < 13; ++v) REQUIRE(again[v] == Approx(expected[v]).margin(1e-5));
  const std::vector<float> next = gen.feed(2);  // the next start: 4 11 2
  expected = window_logits({4, 11, 2});
  for (int64_t v = 0; v < 13; ++v) REQUIRE(next[v] == Approx(expected[v]).margin(1e-5));
}

TEST_CASE("sample: the cache's vector matrix-vector products, at widths with every kind of tail", "[sample]") {
  // n_embd 52: AVX-512 walks 32 + 16 + 4 of it, AVX2 48 + 4, the portable path 52; 4C = 208; 37
  // rows of wte in fours and one left over. Bits equal for any thread count, past the block too.
  auto m = std::make_unique<nn::GPT>(nn::GPTConfig{.vocab_size = 37, .block_size = 5, .n_layer = 1, .n_head = 4,
                                                   .n_embd = 52}, 3);
  NoGradGuard no_grad;
  uint64_t seed = 40;
  for (Tensor& p : m->parameters()) p.copy_from_(p + Tensor::randn(p.shape(), ++seed, 0.2f));
  const std::vector<int32_t> ids = {3, 36, 0, 17, 8};
  const std::vector<float> full = m->forward(ids, 1, 5).logits.to_vector();  // [5, 37]
  std::vector<std::vector<float>> by_threads;
  for (int threads : {1, 2, 3}) tinygpt::testing::with_threads(threads, [&] {
    nn::Generator gen(*m);
    by_threads.emplace_back();
    for (int64_t t = 0; t < 5; ++t) {
      const std::vector<float>& step = gen.feed(ids[t]);
      for (int64_t v = 0; v < 37; ++v) REQUIRE(step[v] == Approx(full[t * 37 + v]).margin(1e-5));
      by_threads.back().insert(by_threads.back().end(), step.begin(), step.end());
    }
    for (const int32_t id : {5, 6, 7, 9}) {  // past the block: encoded again (a batched pass) twice
      const std::vector<float>& step = gen.feed(id);
      by_threads.back().insert(by_threads.back().end(), step.begin(), step.end());
    }
  });
  REQUIRE(by_threads[0] == by_threads[1]);
  REQUIRE(by_threads[0] == by_threads[2]);
}

TEST_CASE("sample: same seed same text, slides past block_size, top-k and greedy", "[sample]") {
  const auto owned = small_model(5, 4);
  nn::GPT& model = *owned;
  const data::CharTokenizer tok(std::vector<int32_t>{'\n', 'a', 'b', 'c', 'd'});
  nn::SampleOptions o{.prompt = "ab", .tokens = 20, .pick = {.temperature = 1.0}, .seed = 4};
  std::string streamed;
  const nn::SampleResult r = nn::generate(model, tok, o, [&](const std::string& piece) { streamed += piece; });
  const std::string& text = r.text;
  REQUIRE(text.size() == 20);  // well past block_size 4: the context slid
  REQUIRE(r.generated_tokens == 20);
  REQUIRE(r.prompt_tokens == 2);
  REQUIRE(r.stopped == nn::StopReason::length);
  REQUIRE(streamed == text);
  REQUIRE(nn::generate(model, tok, o).text == text);
  o.seed = 5;
  REQUIRE(nn::generate(model, tok, o).text != text);
  REQUIRE(nn::pick_token(std::vector<float>{0.1f, 3.0f, 2.0f}, {.temperature = 0.0}, 0.99) == 1);   // greedy
  REQUIRE(nn::pick_token(std::vector<float>{0.1f, 3.0f, 2.0f}, {.temperature = 1.0, .top_k = 1}, 0.99) == 1);   // top-1
  REQUIRE(nn::pick_token(std::vector<float>{5.0f, 0.0f, 5.0f}, {.temperature = 1.0, .top_k = 2}, 0.75) == 2);   // top-2 of two equals
  o.prompt = "abz";
  REQUIRE_THROWS_WITH(nn::generate(model, tok, o), Catch::Contains("'z' (U+007A)") && Catch::Contains("the prompt"));
}

TEST_CASE("sample: top-p keeps the fewest most likely tokens that reach p", "[sample]") {
  // Probabilities 0.2, 0.5, 0.3 at temperature 1, in id order; ranked: 1, 2, 0.
  const std::vector<float> logits = {std::log(0.2f), std::log(0.5f), std::log(0.3f)};
  const auto pick = [&](double top_p, double uniform) {
    return nn::pick_token(logits, {.temperature = 1.0, .top_p = top_p}, uniform);
  };
  for (double u : {0.0, 0.5, 0.999}) REQUIRE(pick(0.45, u) == 1);  // 0.5 alone reaches 0.45
  REQUIRE(pick(0.75, 0.6) == 1);    // {1, 2}: 0.6 x 0.8 = 0.48 falls in token 1's 0.5
  REQUIRE(pick(0.75, 0.7) == 2);    // 0.56 falls past it
  REQUIRE(pick(0.75, 0.999) == 2);  // never token 0
  REQUIRE(pick(0.81, 0.999) == 0); // 0.8 does not reach 0.81: all three
  REQUIRE(pick(1.0, 0.1) == 0);    // p = 1: id order, as without top-p (0.1 falls in token 0's 0.2)
  // With top-k first: the 2 most likely, then the nucleus of those (0.5 of 0.8 reaches 0.6).
  REQUIRE(nn::pick_token(logits, {.temperature = 1.0, .top_k = 2, .top_p = 0.6}, 0.999) == 1);
  REQUIRE_THROWS_WITH(pick(0.0, 0.5), Catch::Contains("--top-p 0 must be above 0"));
  REQUIRE_THROWS_WITH(pick(1.5, 0.5), Catch::Contains("at most 1"));
}

namespace {
// A character vocabulary whose newline (id 0) ends a text, as <|endoftext|> does GPT-2's.
struct NewlineEnds : data::CharTokenizer {
  using data::CharTokenizer::CharTokenizer;
  std::optional<int32_t> document_token() const override { return 0; }
};
}  // namespace

TEST_CASE("sample: a stop text ends the sample before it, and nothing of it is streamed", "[sample]") {
  const auto model = small_model(5, 4);
  const data::CharTokenizer tok(std::vector<int32_t>{'\n', 'a', 'b', 'c', 'd'});
  nn::SampleOptions o{.prompt = "ab", .tokens = 60, .pick = {.temperature = 1.0}, .seed = 4};
  const std::string whole = nn::generate(*model, tok, o).text;
  REQUIRE(whole.size() == 60);
  for (const std::string& stop : {whole.substr(20, 3), whole.substr(7, 1), whole.substr(58, 2)}) {
    INFO("stop '" << stop << "' in '" << whole << "'");
    o.stop = {"zz", stop};  // one that never appears beside it
    std::string streamed;
    const nn::SampleResult r = nn::generate(*model, tok, o, [&](const std::string& piece) { streamed += piece; });
    REQUIRE(r.text == whole.substr(0, whole.find(stop)));
    REQUIRE(streamed == r.text);
    REQUIRE(r.stopped == nn::StopReason::stop_text);
    REQUIRE(r.generated_tokens == static_cast<int64_t>(whole.find(stop) + stop.size()));
  }
  o.stop = {"zz"};
  REQUIRE(nn::generate(*model, tok, o).text == whole);
  o.stop = {""};
  REQUIRE_THROWS_WITH(nn::generate(*model, tok, o), Catch::Contains("empty text"));
}

TEST_CASE("sample: the tokenizer's end of text ends a sample unless told to go on", "[sample]") {
  const auto model = small_model(5, 4);
  const NewlineEnds tok(std::vector<int32_t>{'\n', 'a', 'b', 'c', 'd'});
  nn::SampleOptions o{.prompt = "ab", .tokens = 80, .pick = {.temperature = 1.0}, .end_of_text = nn::EndOfText::go_on,
                      .seed = 4};
  const std::string whole = nn::generate(*model, tok, o).text;
  REQUIRE(whole.find('\n') != std::string::npos);
  o.end_of_text = nn::EndOfText::stop;
  const nn::SampleResult r = nn::generate(*model, tok, o);
  REQUIRE(r.text == whole.substr(0, whole.find('\n')));
  REQUIRE(r.stopped == nn::StopReason::end_of_text);
  REQUIRE(r.generated_tokens == static_cast<int64_t>(whole.find('\n') + 1));
}

TEST_CASE("sample: a SentencePiece sample without a prompt is the library's decoding of its tokens", "[sample]") {
  testing::TempDir dir;
  // Without byte pieces: each piece is whole characters, so any sequence of them decodes alike.
  const auto tok = io::read_sentencepiece_file(testing::write_sentencepiece_model(dir, "sp", 400, "bpe", "--byte_fallback=false"));
  const auto model = small_model(tok->vocab_size(), 16);
  int spaced = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const nn::SampleResult r = nn::generate(*model, *tok, {.tokens = 6, .pick = {.temperature = 1.0}, .seed = seed});
    INFO(seed << ": '" << r.text << "'");
    REQUIRE(r.text == tok->decode(r.ids));
    spaced += !r.ids.empty() && tok->token_bytes(r.ids.front()).rfind(' ', 0) == 0;
  }
  REQUIRE(spaced >= 3);  // samples whose first piece begins with the dummy prefix's space
}
