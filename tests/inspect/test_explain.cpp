// The explain page's contents: the numbers it carries are the model's (attention --steps and the
// forward pass), its script is the one its CSP allows, it loads nothing from outside, and text or
// snapshots that do not fit are cut or refused with a clear message. tests/browser/explain_page.js
// uses the page in a real browser.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "tinygpt/autograd/graph.h"
#include "tinygpt/data/bpe_tokenizer.h"
#include "tinygpt/data/char_tokenizer.h"
#include "tinygpt/data/json.h"
#include "tinygpt/inspect/attention_steps.h"
#include "tinygpt/inspect/explain.h"
#include "tinygpt/data/sha256.h"

using namespace tinygpt;

namespace {

std::string between(const std::string& s, const std::string& open, const std::string& close) {
  const size_t a = s.find(open);
  REQUIRE(a != std::string::npos);
  const size_t b = s.find(close, a + open.size());
  REQUIRE(b != std::string::npos);
  return s.substr(a + open.size(), b - a - open.size());
}

std::vector<uint8_t> unbase64(const std::string& text) {
  std::vector<uint8_t> out;
  uint32_t bits = 0;
  int count = 0;
  for (const char ch : text) {
    const char* digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const char* at = std::strchr(digits, ch);
    if (ch == '=' || !at) continue;
    bits = (bits << 6) | static_cast<uint32_t>(at - digits);
    if ((count += 6) >= 8) out.push_back(static_cast<uint8_t>(bits >> (count -= 8)));
  }
  return out;
}

// An array of the page's data: {"shape": [...], "f32": base64}.
std::vector<float> floats(const data::json::Value& arrays, const std::string& name) {
  const data::json::Value* entry = arrays.find(name);
  REQUIRE(entry);
  const std::vector<uint8_t> bytes = unbase64(entry->find("f32")->text);
  std::vector<float> out(bytes.size() / 4);
  std::memcpy(out.data(), bytes.data(), out.size() * 4);
  return out;
}

struct Page {
  std::string html;
  data::json::Value data;
  std::vector<std::string> notes;
};

Page page_of(const inspect::ExplainInput& in) {
  inspect::ExplainPage p = inspect::explain_page(in);
  std::string json = between(p.html, "<script type=\"application/json\" id=\"tinygpt-data\">", "</script>");
  return {p.html, data::json::parse(json, "the page's data"), p.notes};
}

}  // namespace

TEST_CASE("explain: the page carries the model's own attention steps, bit for bit", "[explain]") {
  const std::string text = "to be or not to be, that is the question";
  const data::CharTokenizer tokenizer = data::CharTokenizer::from_text(text);
  nn::GPT model{nn::GPTConfig{.vocab_size = tokenizer.vocab_size(), .block_size = 16, .n_layer = 2, .n_head = 2, .n_embd = 8}, 3};
  nn::GPT snapshot{model.config(), 4};
  const std::string shown = text.substr(0, 16);
  const Page page = page_of({shown, &tokenizer, {"run.h5", 100, &model}, {{"run.step50.h5", 50, &snapshot}}, {}, "en"});
  const data::json::Value& arrays = *page.data.find("model")->find("arrays");
  for (int64_t layer = 0; layer < 2; ++layer)
    for (int64_t head = 0; head < 2; ++head) {
      const inspect::AttentionSteps s = inspect::attention_steps(model, tokenizer, shown, layer, head);
      const int64_t T = s.size();
      for (const auto& [name, expected] : {std::pair{"scores", &s.scores}, {"scaled", &s.scaled}, {"weights", &s.weights}}) {
        const std::vector<float> all = floats(arrays, fmt::format("l{}.{}", layer, name));
        REQUIRE(all.size() == size_t(2 * T * T));
        REQUIRE(std::vector<float>(all.begin() + head * T * T, all.begin() + (head + 1) * T * T) == *expected);
      }
    }
  // The snapshot's maps are its own model's, not the main one's.
  const data::json::Value& snap = *(*page.data.find("snapshots")->array)[0].find("arrays");
  const inspect::AttentionSteps other = inspect::attention_steps(snapshot, tokenizer, shown, 1, 1);
  const std::vector<float> weights = floats(snap, "l1.weights");
  REQUIRE(std::vector<float>(weights.begin() + 16 * 16, weights.end()) == other.weights);
  // The next-token logits are the forward pass's.
  const std::vector<int32_t> ids = tokenizer.encode(shown);
  NoGradGuard no_grad;
  REQUIRE(floats(arrays, "logits") == model.forward(ids, 1, 16).logits.to_vector());
}

TEST_CASE("explain: the page's one script is what its CSP allows, and nothing loads from outside", "[explain]") {
  const data::CharTokenizer tokenizer = data::CharTokenizer::from_text("abc</script><b>");
  nn::GPT model{nn::GPTConfig{.vocab_size = tokenizer.vocab_size(), .block_size = 16, .n_layer = 1, .n_head = 1, .n_embd = 4}, 1};
  const Page page = page_of({"ab</script><b>", &tokenizer, {"m.h5", -1, &model}, {}, {}, "ko"});
  const std::string script = between(page.html, "<script>", "</script>\n</body>");
  data::Sha256 sha;
  sha.update(script.data(), script.size());
  const auto digest = sha.digest();
  static constexpr char kDigits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string b64;
  for (size_t i = 0; i < digest.size(); i += 3) {
    const uint32_t n = (uint32_t{digest[i]} << 16) | (i + 1 < 32 ? digest[i + 1] << 8 : 0) | (i + 2 < 32 ? digest[i + 2] : 0);
    b64 += {kDigits[n >> 18 & 63], kDigits[n >> 12 & 63], i + 1 < 32 ? kDigits[n >> 6 & 63] : '=', i + 2 < 32 ? kDigits[n & 63] : '='};
  }
  REQUIRE_THAT(page.html, Catch::Contains("script-src 'sha256-" + b64 + "'"));
  REQUIRE_THAT(page.html, Catch::Contains("default-src 'none'"));
  REQUIRE_THAT(page.html, !Catch::Contains("src=\"http") && !Catch::Contains("href=\"http"));
  // The text's "</script>" cannot end the data block early: the data parses, and holds it.
  REQUIRE(page.data.find("text")->text == "ab</script><b>");
  REQUIRE(page.data.find("language")->text == "ko");
  REQUIRE(page.data.find("tokens")->array->size() == 14);
}

TEST_CASE("explain: no string or number in the data can end its script element or break its JSON", "[explain]") {
  // Special tokens and a text that would open a comment or a script inside the data block, the
  // line separators older JavaScript ends lines at, and a skipped step's NaN and infinite losses.
  const data::BpeTokenizer tokenizer({}, data::Split::gpt2, {}, {{"<!--<script", 256}, {"\u2028", 257}});
  nn::GPT model{nn::GPTConfig{.vocab_size = 258, .block_size = 32, .n_layer = 1, .n_head = 1, .n_embd = 4}, 1};
  const std::vector<io::LogRow> log = {{1, NAN, std::nullopt, 0.1, 1, 1}, {2, 2.5, INFINITY, 0.1, 1, 2}};
  const std::string text = "a<!--<script b\u2028</script><!-- c\u2029";
  inspect::ExplainPage p = inspect::explain_page({text, &tokenizer, {"m.h5", 2, &model}, {}, log, "en"});
  const std::string data = between(p.html, "<script type=\"application/json\" id=\"tinygpt-data\">", "</script>");
  REQUIRE(data.find('<') == std::string::npos);
  REQUIRE(data.find("\u2028") == std::string::npos);
  REQUIRE(data.find("\u2029") == std::string::npos);
  REQUIRE(data.find("nan") == std::string::npos);
  REQUIRE(data.find("inf") == std::string::npos);
  const data::json::Value parsed = data::json::parse(data, "the page's data");
  REQUIRE(parsed.find("text")->text == text);
  const auto& loss = *parsed.find("loss")->array;
  REQUIRE(loss.at(0).array->at(1).type == data::json::Value::Type::null);
  REQUIRE(loss.at(1).array->at(1).number == 2.5);
  REQUIRE(loss.at(1).array->at(2).type == data::json::Value::Type::null);
  // The page after the data block is the template's own: one script element, the page's script.
  REQUIRE(std::count_if(p.html.begin(), p.html.end(), [&, i = size_t{0}](char) mutable {
            return p.html.compare(i++, 7, "<script") == 0;
          }) == 2);
}

TEST_CASE("explain: a tokenizer whose tokens would fill the page is refused, and counts in the budget", "[explain]") {
  // Chained merges: token k is token k-1 and one more byte, so the vocabulary's text grows as k^2.
  std::vector<data::Merge> merges;
  merges.push_back({'a', 'a'});
  for (int32_t k = 1; k < 3000; ++k) merges.push_back({255 + k, 'a'});
  const data::BpeTokenizer chained(merges, data::Split::none);
  nn::GPT model{nn::GPTConfig{.vocab_size = chained.vocab_size(), .block_size = 16, .n_layer = 1, .n_head = 1, .n_embd = 4}, 1};
  REQUIRE(inspect::vocabulary_page_bytes(chained, chained.vocab_size()) > inspect::kPageBudget / 2);
  REQUIRE_THROWS_WITH(inspect::explain_page({"aaaa", &chained, {"m.h5", 1, &model}, {}, {}, "en"}),
                      Catch::Contains("explain: the tokenizer's tokens would take") &&
                          Catch::Contains("a page cannot show this tokenizer"));
  // What a tokenizer takes is counted before the layers are chosen.
  const nn::GPTConfig gpt2{.vocab_size = 50257, .block_size = 1024, .n_layer = 12, .n_head = 12, .n_embd = 768};
  REQUIRE(inspect::explain_layers(gpt2, 64, 0, {}, 0).size() > inspect::explain_layers(gpt2, 64, 0, {}, 8'000'000).size());
}

TEST_CASE("explain: a long text is cut to the block size with a note, a snapshot of another model is refused", "[explain]") {
  const data::CharTokenizer tokenizer = data::CharTokenizer::from_text("abcdefgh");
  nn::GPT model{nn::GPTConfig{.vocab_size = 8, .block_size = 6, .n_layer = 1, .n_head = 2, .n_embd = 4}, 1};
  const Page page = page_of({"abcdefghab", &tokenizer, {"m.h5", 7, &model}, {}, {}, "en"});
  REQUIRE(page.data.find("tokens")->array->size() == 6);
  REQUIRE(page.notes.size() == 1);
  REQUIRE_THAT(page.notes[0], Catch::Contains("10 tokens") && Catch::Contains("first 6"));
  REQUIRE_THAT(page.html, Catch::Contains("first 6"));  // shown in the page too
  nn::GPT wider{nn::GPTConfig{.vocab_size = 8, .block_size = 6, .n_layer = 1, .n_head = 2, .n_embd = 8}, 1};
  REQUIRE_THROWS_WITH(inspect::explain_page({"abc", &tokenizer, {"m.h5", 7, &model}, {{"w.h5", 3, &wider}}, {}, "en"}),
                      Catch::Contains("'w.h5' is not a snapshot of the model in 'm.h5'") && Catch::Contains("8 embd"));
  REQUIRE_THROWS_WITH(inspect::explain_page({"", &tokenizer, {"m.h5", 7, &model}, {}, {}, "en"}),
                      Catch::Contains("empty"));
}

TEST_CASE("explain: a large model keeps full detail for the layers that fit, spread first to last", "[explain]") {
  // GPT-2 124M's shape, 64 tokens: a layer in full is about 4.2 MB of the page, every layer's maps 3.1 MB.
  const nn::GPTConfig gpt2{.vocab_size = 50257, .block_size = 1024, .n_layer = 12, .n_head = 12, .n_embd = 768};
  REQUIRE(inspect::explain_layers(gpt2, 64, 0, {}) == std::vector<int64_t>{0, 6, 11});
  // Longer text or more snapshots leave room for fewer layers, never none; a short text keeps all.
  REQUIRE(inspect::explain_layers(gpt2, 64, 3, {}) == std::vector<int64_t>{0});
  REQUIRE(inspect::explain_layers(gpt2, 128, 0, {}) == std::vector<int64_t>{0});
  REQUIRE(inspect::explain_layers(gpt2, 16, 0, {}).size() == 12);
  // The small default model with a 64-token text and three snapshots keeps every layer.
  REQUIRE(inspect::explain_layers(nn::GPTConfig{}, 64, 3, {}) == std::vector<int64_t>{0, 1, 2, 3});
  // Layers asked for are kept, sorted and once each, whatever the size; others are refused.
  REQUIRE(inspect::explain_layers(gpt2, 128, 0, {7, 3, 7}) == std::vector<int64_t>{3, 7});
  REQUIRE_THROWS_WITH(inspect::explain_layers(gpt2, 128, 0, {12}), Catch::Contains("--layers 12: the model's layers are 0..11"));
}

TEST_CASE("explain: layers left out of full detail keep their maps and say how to get the rest", "[explain]") {
  const data::CharTokenizer tokenizer = data::CharTokenizer::from_text("abcdefgh");
  nn::GPT model{nn::GPTConfig{.vocab_size = 8, .block_size = 8, .n_layer = 3, .n_head = 2, .n_embd = 4}, 1};
  inspect::ExplainInput in{"abcdefgh", &tokenizer, {"m.h5", 7, &model}, {}, {}, "en", {2}};
  const Page page = page_of(in);
  const data::json::Value& arrays = *page.data.find("model")->find("arrays");
  for (const char* name : {"l0.weights", "l1.weights", "l2.weights", "l2.qkv", "l2.scaled", "l2.in", "l2.out", "norms"})
    REQUIRE(arrays.find(name));
  for (const char* name : {"l0.qkv", "l1.scaled", "l0.in", "l1.act"}) REQUIRE_FALSE(arrays.find(name));
  REQUIRE(page.data.find("detail_layers")->array->size() == 1);
  REQUIRE_THAT(page.notes.at(0), Catch::Contains("layer 2 shown in full") && Catch::Contains("--layers"));
  // l2.in is the residual stream after layer 1, as the norms saw it.
  const std::vector<float> x = floats(arrays, "l2.in"), norms = floats(arrays, "norms");
  double sum = 0;
  for (int c = 0; c < 4; ++c) sum += double(x[c]) * x[c];
  REQUIRE(static_cast<float>(std::sqrt(sum)) == norms[4 * 8]);  // stage 4: after block 1's MLP, token 0
}

TEST_CASE("explain: a Llama-shaped model's page carries its RoPE turns, shared heads, RMSNorm and SwiGLU", "[explain]") {
  const std::string text = "to be or not to be, that is";
  const data::CharTokenizer tokenizer = data::CharTokenizer::from_text(text);
  nn::GPTConfig config = nn::llama_style(
      nn::GPTConfig{.vocab_size = tokenizer.vocab_size(), .block_size = 16, .n_layer = 2, .n_head = 4, .n_embd = 16});
  config.n_kv_head = 2;
  config.tie_embeddings = false;
  nn::GPT model{config, 5};
  const std::string shown = text.substr(0, 12);
  const Page page = page_of({shown, &tokenizer, {"llama.h5", 10, &model}, {}, {}, "en"});
  const data::json::Value& c = *page.data.find("config");
  REQUIRE(c.find("norm")->text == "rmsnorm");
  REQUIRE(c.find("position")->text == "rope");
  REQUIRE(c.find("mlp")->text == "swiglu");
  REQUIRE(c.find("n_kv_head")->number == 2);
  REQUIRE_FALSE(c.find("bias")->boolean);
  REQUIRE_FALSE(c.find("tie")->boolean);
  const data::json::Value& arrays = *page.data.find("model")->find("arrays");
  // Every head's steps are attention --steps' (query heads 2 and 3 read key/value head 1).
  const int64_t T = 12, d = 4, H = config.hidden();
  for (int64_t layer = 0; layer < 2; ++layer)
    for (int64_t head = 0; head < 4; ++head) {
      const inspect::AttentionSteps s = inspect::attention_steps(model, tokenizer, shown, layer, head);
      REQUIRE(s.kv_head == head / 2);
      for (const auto& [name, expected] : {std::pair{"scores", &s.scores}, {"weights", &s.weights}}) {
        const std::vector<float> all = floats(arrays, fmt::format("l{}.{}", layer, name));
        REQUIRE(std::vector<float>(all.begin() + head * T * T, all.begin() + (head + 1) * T * T) == *expected);
      }
    }
  // The queries and keys the model used are c_attn's turned by the page's cos and sin; values are not
  // turned. Width: 4 query heads, 2 key heads, 2 value heads of 4.
  const std::vector<float> before = floats(arrays, "l1.c_attn"), after = floats(arrays, "l1.qkv"), cs = floats(arrays, "rope");
  REQUIRE(before.size() == size_t(T * 8 * d));
  REQUIRE(cs.size() == size_t(T * d));
  for (int64_t t = 0; t < T; ++t)
    for (int64_t col = 0; col < 8 * d; col += 2) {
      const float x0 = before[t * 8 * d + col], x1 = before[t * 8 * d + col + 1];
      const float cos = cs[t * d + col % d], sin = cs[t * d + col % d + 1];
      const bool turned = col < 6 * d;
      REQUIRE(after[t * 8 * d + col] == Approx(turned ? x0 * cos - x1 * sin : x0).margin(1e-6));
      REQUIRE(after[t * 8 * d + col + 1] == Approx(turned ? x0 * sin + x1 * cos : x1).margin(1e-6));
    }
  REQUIRE(cs[5 * d + 2] == static_cast<float>(std::cos(5 * std::pow(10000.0, -2.0 / d))));  // position 5, pair 1
  // SwiGLU: the gate and the up projection side by side, and silu(gate) * up.
  const std::vector<float> fc = floats(arrays, "l0.fc"), act = floats(arrays, "l0.act");
  REQUIRE(fc.size() == size_t(T * 2 * H));
  for (int64_t j = 0; j < H; ++j) {
    const float gate = fc[3 * 2 * H + j], up = fc[3 * 2 * H + H + j];
    REQUIRE(act[3 * H + j] == Approx(gate / (1 + std::exp(-gate)) * up).margin(1e-6));
  }
  // RMSNorm's mean of squares, no mean or variance, no β; no position table.
  const std::vector<float> mid = floats(arrays, "l0.mid"), ms = floats(arrays, "l0.ln2.ms");
  double square = 0;
  for (int64_t j = 0; j < 16; ++j) square += double(mid[2 * 16 + j]) * mid[2 * 16 + j];
  REQUIRE(ms[2] == static_cast<float>(square / 16));
  for (const char* name : {"wpe", "l0.ln2.mean", "l0.ln_2.bias"}) REQUIRE_FALSE(arrays.find(name));
  // The logits are the forward pass's, through its own lm_head.
  NoGradGuard no_grad;
  REQUIRE(floats(arrays, "logits") == model.forward(tokenizer.encode(shown), 1, T).logits.to_vector());
}

TEST_CASE("explain: a small model's page carries its weights and tokenizer, others say why not", "[explain]") {
  const std::string text = "to be or not to be";
  const data::CharTokenizer chars = data::CharTokenizer::from_text(text);
  nn::GPT small{nn::GPTConfig{.vocab_size = chars.vocab_size(), .block_size = 16, .n_layer = 1, .n_head = 2, .n_embd = 8}, 3};
  const data::json::Value typing = *page_of({text, &chars, {"run.h5", 1, &small}, {}, {}, "en"}).data.find("typing");
  REQUIRE(typing.find("refusal")->text.empty());
  REQUIRE(typing.find("most_tokens")->number == 16);
  // Every parameter by its state_dict name, bit for bit; the code points in the tokenizer's order.
  const data::json::Value& weights = *typing.find("weights");
  for (const auto& [name, value] : small.named_parameters()) REQUIRE(floats(weights, name) == value.to_vector());
  const data::json::Value& tokenizer = *typing.find("tokenizer");
  REQUIRE(tokenizer.find("kind")->text == "char");
  REQUIRE(tokenizer.find("code_points")->array->size() == chars.code_points().size());
  REQUIRE((*tokenizer.find("code_points")->array)[0].number == chars.code_points()[0]);
  REQUIRE(tokenizer.find("bytes")->array->size() == size_t(chars.vocab_size()));
  REQUIRE((*tokenizer.find("labels")->array)[0].text == "␣");  // the space, as every map labels it

  // BPE: the merges, flat, and whether each token is whole characters.
  const data::BpeTokenizer bpe = data::BpeTokenizer::train("안녕 안녕 안녕 hello hello hello", 256 + 6);
  nn::GPT on_bpe{nn::GPTConfig{.vocab_size = bpe.vocab_size(), .block_size = 16, .n_layer = 1, .n_head = 1, .n_embd = 4}, 3};
  const data::json::Value bpe_json = *page_of({"hello 안녕", &bpe, {"b.h5", 1, &on_bpe}, {}, {}, "en"}).data.find("typing")->find("tokenizer");
  REQUIRE(bpe_json.find("split")->text == "gpt2");
  REQUIRE(bpe_json.find("merges")->array->size() == 2 * bpe.merges().size());
  REQUIRE((*bpe_json.find("merges")->array)[1].number == bpe.merges()[0].second);
  REQUIRE((*bpe_json.find("partial")->array)[0xEC].number == 1);  // a lone byte of a Hangul syllable
  REQUIRE((*bpe_json.find("partial")->array)['h'].number == 0);

  // Past kMostTypedParameters: no weights, and the reason for the page to give.
  nn::GPT large{nn::GPTConfig{.vocab_size = chars.vocab_size(), .block_size = 16, .n_layer = 12, .n_head = 2, .n_embd = 128}, 3};
  REQUIRE(large.parameter_count() > inspect::kMostTypedParameters);
  const data::json::Value refused = *page_of({text, &chars, {"large.h5", 1, &large}, {}, {}, "en"}).data.find("typing");
  REQUIRE(refused.find("refusal")->text == "parameters");
  REQUIRE(refused.find("parameters")->number == large.parameter_count());
  REQUIRE_FALSE(refused.find("weights"));
  std::vector<int32_t> syllables(inspect::kFullVocab + 1);
  std::iota(syllables.begin(), syllables.end(), 0xAC00);  // 가, 각, ...
  const data::CharTokenizer hangul(syllables);
  // 2 wide: wte stays under the test JSON reader's 64 KiB per string.
  nn::GPT wide{nn::GPTConfig{.vocab_size = hangul.vocab_size(), .block_size = 16, .n_layer = 1, .n_head = 1, .n_embd = 2}, 3};
  // A vocabulary past kFullVocab: the page keeps each position's candidates, the tokenizer every label.
  const data::json::Value wide_typing = *page_of({"가각간", &hangul, {"wide.h5", 1, &wide}, {}, {}, "en"}).data.find("typing");
  REQUIRE(wide_typing.find("refusal")->text.empty());
  REQUIRE(wide_typing.find("tokenizer")->find("labels")->array->size() == syllables.size());
  REQUIRE((*wide_typing.find("tokenizer")->find("labels")->array)[1].text == "각");
}
