#include "explain.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <numeric>
#include <stdexcept>

#include "../autograd/graph.h"
#include "../data/tokenizer_record.h"
#include "../data/json.h"
#include "../data/utf8.h"
#include "attention_steps.h"
#include "inspect.h"
#include "../data/sha256.h"

namespace tinygpt::inspect {

const char* explain_page_html();  // inspect/page/explain.html, built in (explain_assets.cpp.in)
const char* explain_page_script();  // inspect/page/model.js, then explain.js

namespace {

static_assert(std::endian::native == std::endian::little, "the page reads float32 arrays little-endian");

std::string base64(const void* data, size_t size) {
  static constexpr char kDigits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const auto* p = static_cast<const uint8_t*>(data);
  std::string out;
  out.reserve((size + 2) / 3 * 4);
  for (size_t i = 0; i < size; i += 3) {
    const uint32_t n = (uint32_t{p[i]} << 16) | (i + 1 < size ? uint32_t{p[i + 1]} << 8 : 0) | (i + 2 < size ? p[i + 2] : 0);
    out += kDigits[(n >> 18) & 63];
    out += kDigits[(n >> 12) & 63];
    out += i + 1 < size ? kDigits[(n >> 6) & 63] : '=';
    out += i + 2 < size ? kDigits[n & 63] : '=';
  }
  return out;
}

// Named arrays as one JSON object: "name": {"shape": [...], "f32" | "i32": base64 of the values}.
class Arrays {
 public:
  void add(const std::string& name, const Shape& shape, const std::vector<float>& values) {
    put(name, shape, "f32", base64(values.data(), values.size() * sizeof(float)));
  }
  void add(const std::string& name, const Tensor& t) { add(name, t.shape(), t.contiguous().to_vector()); }
  void add_ids(const std::string& name, const Shape& shape, const std::vector<int32_t>& values) {
    put(name, shape, "i32", base64(values.data(), values.size() * sizeof(int32_t)));
  }
  std::string json() const { return "{" + members_ + "}"; }

 private:
  void put(const std::string& name, const Shape& shape, const char* type, const std::string& data) {
    members_ += fmt::format("{}{}: {{\"shape\": [{}], \"{}\": \"{}\"}}", members_.empty() ? "" : ", ",
                            data::json::quote(name), fmt::join(shape, ", "), type, data);
  }
  std::string members_;
};

// Row i of a [1, T, C] tensor's statistics, in double, as its norm divides by them: LayerNorm's
// mean and (biased) variance, RMSNorm's mean of squares.
void add_moments(Arrays& a, const std::string& name, const Tensor& x, nn::NormKind kind) {
  const int64_t T = x.size(1), C = x.size(2);
  const std::vector<float> v = x.contiguous().to_vector();
  std::vector<float> mean(T), var(T), square(T);
  for (int64_t t = 0; t < T; ++t) {
    double s = 0, ss = 0, sq = 0;
    for (int64_t c = 0; c < C; ++c) s += v[t * C + c], sq += static_cast<double>(v[t * C + c]) * v[t * C + c];
    const double m = s / C;
    for (int64_t c = 0; c < C; ++c) ss += (v[t * C + c] - m) * (v[t * C + c] - m);
    mean[t] = static_cast<float>(m);
    var[t] = static_cast<float>(ss / C);
    square[t] = static_cast<float>(sq / C);
  }
  if (kind == nn::NormKind::rmsnorm) return a.add(name + ".ms", {T}, square);
  a.add(name + ".mean", {T}, mean);
  a.add(name + ".var", {T}, var);
}

// |row t| of a [1, T, C] tensor for every t, in double (the figures of `attention --trace`), appended.
void append_row_norms(std::vector<float>& norms, const Tensor& x) {
  const int64_t T = x.size(1), C = x.size(2);
  const std::vector<float> v = x.contiguous().to_vector();
  for (int64_t t = 0; t < T; ++t) {
    double s = 0;
    for (int64_t c = 0; c < C; ++c) s += static_cast<double>(v[t * C + c]) * v[t * C + c];
    norms.push_back(static_cast<float>(std::sqrt(s)));
  }
}

// The logits [T, V]; past kFullVocab, each position's kTopCandidates largest with their ids (also
// added to `candidates`).
void add_logits(Arrays& a, const Tensor& logits, std::vector<int32_t>& candidates) {
  const int64_t T = logits.size(1), V = logits.size(2);
  const std::vector<float> all = logits.contiguous().to_vector();
  if (V <= kFullVocab) return a.add("logits", {T, V}, all);
  const int64_t k = kTopCandidates;
  std::vector<int32_t> ids(T * k), order(V);
  std::vector<float> top(T * k);
  for (int64_t t = 0; t < T; ++t) {
    const float* row = all.data() + t * V;
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + k, order.end(),
                      [&](int32_t x, int32_t y) { return row[x] > row[y] || (row[x] == row[y] && x < y); });
    for (int64_t i = 0; i < k; ++i) ids[t * k + i] = order[i], top[t * k + i] = row[order[i]];
  }
  candidates.insert(candidates.end(), ids.begin(), ids.end());
  a.add("logits", {T, k}, top);
  a.add_ids("logit_ids", {T, k}, ids);
}

// One layer's attention, every head, [H, T, T] each: the weights, and with `steps` the scores Q·Kᵀ
// and ÷√d_k, taken apart as attention --steps does (head_steps).
void add_heads(Arrays& a, const std::string& prefix, const Tensor& qkv, const AttentionResult& result, int64_t n_head,
               int64_t n_kv_head, bool steps) {
  const int64_t T = qkv.size(1);
  a.add(prefix + "weights", {n_head, T, T}, result.weights.contiguous().to_vector());  // [1, nh, T, T]
  if (!steps) return;
  std::vector<float> scores, scaled;
  for (int64_t h = 0; h < n_head; ++h) {
    const AttentionSteps s = head_steps(qkv, result, n_head, n_kv_head, h);
    scores.insert(scores.end(), s.scores.begin(), s.scores.end());
    scaled.insert(scaled.end(), s.scaled.begin(), s.scaled.end());
  }
  a.add(prefix + "scores", {n_head, T, T}, scores);
  a.add(prefix + "scaled", {n_head, T, T}, scaled);
}

// GPT::forward in eval mode, watched: every intermediate the page shows. `full`: the main model,
// whose layers in `detailed` keep every intermediate; a snapshot (not full) keeps its attention
// weights, its residual norms and its logits. Every layer keeps its weights.
std::string walk(nn::GPT& model, const std::vector<int32_t>& ids, bool full, const std::vector<bool>& detailed,
                 std::vector<int32_t>& candidates) {
  const nn::GPTConfig& c = model.config();
  const auto T = static_cast<int64_t>(ids.size());
  NoGradGuard no_grad;
  model.eval();
  Arrays a;
  std::vector<float> norms;  // [2 L + 2, T]: after the embedding, each attention and MLP addition, ln_f
  Tensor x, qkv, weights;    // the residual stream into the layer; the layer's Q, K, V and weights
  model.forward(ids, 1, T, {}, [&](int64_t l, nn::Tap tap, const Tensor& value) {
    const std::string p = fmt::format("l{}.", l);
    const bool detail = full && l >= 0 && detailed[l];
    const nn::Block* block = l >= 0 ? model.h[l] : nullptr;
    switch (tap) {
      case nn::Tap::tok_emb: if (full) a.add("wte", value); break;
      case nn::Tap::pos_emb: if (full) a.add("wpe", {1, T, c.n_embd}, value.contiguous().to_vector()); break;
      case nn::Tap::embedding:
        x = value;
        append_row_norms(norms, value);
        if (full) a.add("x0", value);
        if (full && c.position == nn::PositionKind::rope) a.add("rope", rope_angles(T, c.head_size(), c.rope_theta));
        break;
      case nn::Tap::ln_1: if (detail) a.add(p + "in", x); break;
      case nn::Tap::c_attn: if (detail && c.position == nn::PositionKind::rope) a.add(p + "c_attn", value); break;
      case nn::Tap::qkv: qkv = value; if (detail) a.add(p + "qkv", value); break;
      case nn::Tap::attn_weights: weights = value; break;
      case nn::Tap::attn_heads:
        add_heads(a, p, qkv, AttentionResult{value, weights}, c.n_head, c.kv_heads(), detail);
        if (detail) a.add(p + "y", value);
        break;
      case nn::Tap::attn: if (detail) a.add(p + "attn", value); break;
      case nn::Tap::residual_attn:
        append_row_norms(norms, value);
        if (detail) a.add(p + "mid", value), add_moments(a, p + "ln2", value, c.norm);
        break;
      case nn::Tap::ln_2: if (detail) a.add(p + "ln2", value); break;
      case nn::Tap::mlp_fc: if (detail && c.mlp == nn::MlpKind::swiglu) a.add(p + "fc", value); break;  // gate, up
      case nn::Tap::mlp_act: if (detail) a.add(p + "act", value); break;
      case nn::Tap::mlp: if (detail) a.add(p + "mlp", value); break;
      case nn::Tap::residual_mlp:
        x = value;
        append_row_norms(norms, value);
        if (detail) {  // γ (and β) of the norm the page opens up
          a.add(p + "ln_2.weight", block->ln_2.weight);
          if (block->ln_2.bias.defined()) a.add(p + "ln_2.bias", block->ln_2.bias);
          a.add(p + "out", value);
        }
        break;
      case nn::Tap::ln_f:
        append_row_norms(norms, value);
        if (full) a.add("lnf", value);
        a.add("norms", {2 * c.n_layer + 2, T}, norms);
        break;
      case nn::Tap::logits: add_logits(a, value, candidates); break;  // [1, T, V]
      default: break;
    }
  });
  return a.json();
}

void check_same_shape(const ExplainModel& main, const ExplainModel& other) {
  const nn::GPTConfig &a = main.model->config(), &b = other.model->config();
  if (a.vocab_size != b.vocab_size || a.n_layer != b.n_layer || a.n_head != b.n_head || a.n_embd != b.n_embd ||
      a.block_size != b.block_size)
    throw std::invalid_argument(fmt::format(
        "explain: '{}' is not a snapshot of the model in '{}': {} layers, {} heads, {} embd, block {}, vocab {} against "
        "{}, {}, {}, {}, {}",
        other.name, main.name, b.n_layer, b.n_head, b.n_embd, b.block_size, b.vocab_size, a.n_layer, a.n_head, a.n_embd,
        a.block_size, a.vocab_size));
}

// "E2 96 81": a token's bytes as the page's hover shows them.
std::string byte_list(const std::string& bytes) {
  std::string hex;
  for (const unsigned char ch : bytes) hex += fmt::format("{}{:02X}", hex.empty() ? "" : " ", ch);
  return hex;
}

std::string tokens_json(const std::vector<TokenView>& tokens) {
  std::string out;
  for (const TokenView& t : tokens) {
    out += fmt::format("{}{{\"id\": {}, \"text\": {}, \"label\": {}, \"bytes\": \"{}\", \"partial\": {}}}",
                       out.empty() ? "" : ", ", t.id, data::json::quote(data::sanitize_utf8(t.bytes)),
                       data::json::quote(data::sanitize_utf8(t.label)), byte_list(t.bytes), t.partial);
  }
  return "[" + out + "]";
}

std::string vocab_json(const data::Tokenizer& tokenizer, int64_t vocab_size) {
  if (vocab_size > kFullVocab) return "null";  // the candidates' own labels come with their ids
  std::vector<int32_t> ids(vocab_size);
  std::iota(ids.begin(), ids.end(), 0);
  std::string out;
  for (const TokenView& t : token_views(tokenizer, ids))
    out += (out.empty() ? "" : ", ") + data::json::quote(data::sanitize_utf8(t.label));
  return "[" + out + "]";
}

// Labels of the candidate ids a large vocabulary keeps, by id: {"464": "The", ...}.
std::string candidate_labels_json(const data::Tokenizer& tokenizer, std::vector<int32_t> ids) {
  if (ids.empty()) return "null";
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::string out;
  for (const TokenView& t : token_views(tokenizer, ids))
    out += fmt::format("{}\"{}\": {}", out.empty() ? "" : ", ", t.id, data::json::quote(data::sanitize_utf8(t.label)));
  return "{" + out + "}";
}

// The pieces the page draws differently: "norm", "position", "mlp", "n_kv_head", "hidden", "bias",
// "tie", "norm_eps", "rope_theta".
std::string architecture_json(const nn::GPTConfig& c) {
  return fmt::format("\"norm\": \"{}\", \"position\": \"{}\", \"mlp\": \"{}\", \"n_kv_head\": {}, \"hidden\": {}, "
                     "\"bias\": {}, \"tie\": {}, \"norm_eps\": {}, \"rope_theta\": {}",
                     nn::name(c.norm), nn::name(c.position), nn::name(c.mlp), c.kv_heads(), c.hidden(), c.bias,
                     c.tie_embeddings, c.norm_eps, c.rope_theta);
}

std::string model_json(const ExplainModel& m, const std::string& arrays) {
  return fmt::format("{{\"name\": {}, \"iteration\": {}, \"arrays\": {}}}", data::json::quote(m.name), m.iteration,
                     arrays);
}

std::string loss_json(const std::vector<io::LogRow>& rows) {
  std::string out;
  for (const io::LogRow& r : rows)
    out += fmt::format("{}[{}, {}, {}]", out.empty() ? "" : ", ", r.iter, data::json::number(r.train_loss),
                       r.val_loss ? data::json::number(*r.val_loss) : "null");
  return "[" + out + "]";
}

// Why the page cannot compute a typed text itself ("sentencepiece", "parameters"; the page says it
// in the reader's language), or "" when it can.
std::string typing_refusal(const nn::GPT& model, const data::Tokenizer& tokenizer) {
  if (tokenizer.kind() == data::TokenizerKind::sentencepiece) return "sentencepiece";
  if (model.parameter_count() > kMostTypedParameters) return "parameters";
  return "";
}

// What the page's own tokenizer needs: a character vocabulary's code points, or BPE's split,
// merges (flat: a0, b0, a1, b1, ...), byte ids and special tokens; and every token's label, bytes
// (hex) and whether they are whole characters, for the chips and candidates of a typed text.
std::string tokenizer_json(const data::Tokenizer& tokenizer, int64_t vocab_size) {
  std::string definition;
  const data::TokenizerRecord r = tokenizer.record();
  if (r.kind == data::TokenizerKind::chars) {
    definition = fmt::format("\"kind\": \"char\", \"code_points\": [{}]", fmt::join(r.code_points, ", "));
  } else {
    std::string merges, specials;
    for (const auto& [a, b] : r.merges) merges += fmt::format("{}{}, {}", merges.empty() ? "" : ", ", a, b);
    for (const data::SpecialToken& t : r.specials)
      specials += fmt::format("{}[{}, {}]", specials.empty() ? "" : ", ", data::json::quote(t.text), t.id);
    definition = fmt::format("\"kind\": \"bpe\", \"split\": \"{}\", \"merges\": [{}], \"byte_ids\": [{}], \"specials\": [{}]",
                             data::split_name(r.split), merges, fmt::join(r.byte_ids, ", "), specials);
  }
  std::vector<int32_t> ids(std::min(vocab_size, tokenizer.vocab_size()));
  std::iota(ids.begin(), ids.end(), 0);
  std::string labels, bytes, partial;
  for (const TokenView& t : token_views(tokenizer, ids)) {
    labels += (labels.empty() ? "" : ", ") + data::json::quote(data::sanitize_utf8(t.label));
    bytes += fmt::format("{}\"{}\"", bytes.empty() ? "" : ", ", byte_list(t.bytes));
    partial += fmt::format("{}{}", partial.empty() ? "" : ", ", t.partial ? 1 : 0);
  }
  return fmt::format("{{{}, \"labels\": [{}], \"bytes\": [{}], \"partial\": [{}]}}", definition, labels, bytes, partial);
}

// "typing": whether and with what the page computes a typed text: the refusal ("" when it can), the
// limits, and when it can, the tokenizer and every parameter by its state_dict name.
std::string typing_json(const nn::GPT& model, const data::Tokenizer& tokenizer) {
  const std::string refusal = typing_refusal(model, tokenizer);
  std::string out = fmt::format(
      "{{\"refusal\": \"{}\", \"parameters\": {}, \"most_parameters\": {}, \"most_tokens\": {}", refusal,
      model.parameter_count(), kMostTypedParameters, std::min(model.config().block_size, kMostTokens));
  if (refusal.empty()) {
    Arrays weights;
    for (const auto& [name, value] : model.named_parameters()) weights.add(name, value);
    out += fmt::format(", \"tokenizer\": {}, \"weights\": {}", tokenizer_json(tokenizer, model.config().vocab_size),
                       weights.json());
  }
  return out + "}";
}

// JSON inside <script>: "</", "<!--" and "<script" change the HTML parser's state there, so every '<'
// (found only inside strings in JSON) is written \u003c; U+2028 and U+2029 end a line in older
// JavaScript, so they too are escaped.
std::string script_safe(const std::string& json) {
  std::string out;
  out.reserve(json.size());
  for (size_t i = 0; i < json.size(); ++i) {
    if (json[i] == '<') {
      out += "\\u003c";
    } else if (json.compare(i, 3, "\xE2\x80\xA8") == 0 || json.compare(i, 3, "\xE2\x80\xA9") == 0) {
      out += json[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += json[i];
    }
  }
  return out;
}

std::string csp_hash(const std::string& script) {
  data::Sha256 sha;
  sha.update(script.data(), script.size());
  const auto digest = sha.digest();
  return "sha256-" + base64(digest.data(), digest.size());
}

void replace_once(std::string& page, const std::string& mark, const std::string& with) {
  const size_t at = page.find(mark);
  if (at == std::string::npos) throw std::logic_error("explain: the page template has no " + mark);
  page.replace(at, mark.size(), with);
}

// Bytes of base64 that n floats take in the page.
int64_t page_bytes(int64_t floats) { return floats * 4 * 4 / 3; }

}  // namespace

int64_t vocabulary_page_bytes(const data::Tokenizer& tokenizer, int64_t vocab_size) {
  // Per byte: its label at most twice (the vocabulary, the typing tokenizer) and its hex once;
  // per token, the quotes and commas around them.
  int64_t bytes = 0;
  for (int32_t id = 0; id < std::min<int64_t>(vocab_size, tokenizer.vocab_size()); ++id)
    bytes += 16 + 8 * static_cast<int64_t>(tokenizer.token_bytes(id).size());
  return bytes;
}

std::vector<int64_t> explain_layers(const nn::GPTConfig& c, int64_t T, int64_t snapshots, std::vector<int64_t> asked,
                                    int64_t vocabulary_bytes) {
  const int64_t L = c.n_layer, C = c.n_embd, H = c.n_head;
  for (const int64_t l : asked)
    if (l < 0 || l >= L)
      throw std::invalid_argument(fmt::format("explain: --layers {}: the model's layers are 0..{}", l, L - 1));
  std::sort(asked.begin(), asked.end());
  asked.erase(std::unique(asked.begin(), asked.end()), asked.end());
  if (!asked.empty()) return asked;
  // A layer in full: Q, K, V (and before RoPE); scores and ÷√d_k of every head; seven [T, C] rows;
  // the MLP's hidden rows (and SwiGLU's gate and up).
  const int64_t qkv = (H + 2 * c.kv_heads()) * c.head_size() * (c.position == nn::PositionKind::rope ? 2 : 1);
  const int64_t hidden = c.hidden() * (c.mlp == nn::MlpKind::swiglu ? 3 : 1);
  const int64_t per_layer = page_bytes(T * qkv + 2 * H * T * T + 7 * T * C + T * hidden);
  // Every model: its maps and its logits (or each position's candidates and their ids); wte, wpe, x.
  const int64_t logits = T * (c.vocab_size <= kFullVocab ? c.vocab_size : 2 * kTopCandidates);
  const int64_t always = page_bytes((1 + snapshots) * (H * T * T * L + logits) + 3 * T * C) + vocabulary_bytes;
  const int64_t fit = std::clamp<int64_t>((kPageBudget - always) / per_layer, 1, L);
  std::vector<int64_t> layers;
  for (int64_t i = 0; i < fit; ++i) layers.push_back(fit == 1 ? 0 : (i * (L - 1) + (fit - 1) / 2) / (fit - 1));
  return layers;
}

ExplainPage explain_page(const ExplainInput& in) {
  nn::GPT& model = *in.main.model;
  const nn::GPTConfig& c = model.config();
  ExplainPage page;
  const int64_t vocabulary = vocabulary_page_bytes(*in.tokenizer, c.vocab_size);
  if (vocabulary > kPageBudget / 2)
    throw std::invalid_argument(fmt::format(
        "explain: the tokenizer's tokens would take {} MB of the page (their labels and bytes; its tokens are long: "
        "chained merges), more than half of its {} MB budget: a page cannot show this tokenizer",
        vocabulary / 1'000'000, kPageBudget / 1'000'000));
  std::vector<int32_t> ids = in.tokenizer->encode(in.text, "--text");
  if (ids.empty()) throw std::invalid_argument("explain: --text is empty: give at least one character");
  const int64_t most = std::min(c.block_size, kMostTokens);
  if (static_cast<int64_t>(ids.size()) > most) {
    page.notes.push_back(fmt::format("the text is {} tokens: only its first {} ({}) are shown", ids.size(), most,
                                     most == c.block_size ? "the model's block size" : "the most a page shows"));
    ids.resize(most);
  }
  for (const ExplainModel& s : in.snapshots) check_same_shape(in.main, s);
  if (c.vocab_size > kFullVocab)
    page.notes.push_back(fmt::format("the vocabulary has {} tokens: each position keeps its {} most likely, and the "
                                     "probabilities shown are over those",
                                     c.vocab_size, kTopCandidates));

  const std::vector<int64_t> layers =
      explain_layers(c, static_cast<int64_t>(ids.size()), static_cast<int64_t>(in.snapshots.size()), in.layers, vocabulary);
  if (static_cast<int64_t>(layers.size()) < c.n_layer)
    page.notes.push_back(fmt::format("layer{} {} shown in full, the others as attention maps only{}: give --layers to choose",
                                     layers.size() > 1 ? "s" : "", fmt::join(layers, ", "),
                                     in.layers.empty() ? fmt::format(", to keep the page near {} MB", kPageBudget / 1000000)
                                                       : ""));
  std::vector<bool> detailed(c.n_layer, false);
  for (const int64_t l : layers) detailed[l] = true;
  std::vector<int32_t> candidates;  // of a large vocabulary: the ids whose labels the page needs
  const std::string main_arrays = walk(model, ids, true, detailed, candidates);
  std::string snapshots;
  for (const ExplainModel& s : in.snapshots)
    snapshots += (snapshots.empty() ? "" : ", ") + model_json(s, walk(*s.model, ids, false, detailed, candidates));
  const std::string labels = candidate_labels_json(*in.tokenizer, std::move(candidates));
  std::string notes;
  for (const std::string& n : page.notes) notes += (notes.empty() ? "" : ", ") + data::json::quote(n);
  const std::string data = fmt::format(
      "{{\"format\": \"tinygpt-explain\", \"version\": 1, \"language\": {}, \"text\": {}, \"config\": {{\"vocab_size\": {}, "
      "\"block_size\": {}, \"n_layer\": {}, \"n_head\": {}, \"n_embd\": {}, \"d_k\": {}, {}}}, \"tokenizer\": \"{}\", "
      "\"detail_layers\": [{}], \"tokens\": {}, \"vocab\": {}, \"candidate_labels\": {}, \"notes\": [{}], \"loss\": {}, "
      "\"model\": {}, \"snapshots\": [{}], \"typing\": {}}}",
      data::json::quote(in.language), data::json::quote(data::sanitize_utf8(in.tokenizer->decode(ids))), c.vocab_size,
      c.block_size, c.n_layer, c.n_head, c.n_embd, c.head_size(), architecture_json(c), data::name(in.tokenizer->kind()), fmt::join(layers, ", "),
      tokens_json(token_views(*in.tokenizer, ids)), vocab_json(*in.tokenizer, c.vocab_size), labels, notes,
      loss_json(in.loss), model_json(in.main, main_arrays), snapshots, typing_json(model, *in.tokenizer));

  const std::string script = explain_page_script();
  page.html = explain_page_html();
  // In document order's reverse but for the head's hash: no replacement lands before a mark still to find.
  replace_once(page.html, "{{CSP_SCRIPT_HASH}}", csp_hash(script));
  replace_once(page.html, "{{SCRIPT}}", script);
  replace_once(page.html, "{{DATA}}", script_safe(data));
  return page;
}

}  // namespace tinygpt::inspect
