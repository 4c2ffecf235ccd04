#include "attention_steps.h"

#include <fmt/format.h>

#include <cmath>

#include "../autograd/graph.h"
#include "../data/json.h"
#include "../data/utf8.h"

namespace tinygpt::inspect {

namespace {

// Columns [first, first + width) of a [T, cols] tensor, row-major.
std::vector<float> columns(const Tensor& t, int64_t first, int64_t width) {
  const Tensor rows = t.reshape({-1, t.size(-1)}).slice(1, first, first + width).contiguous();
  return rows.to_vector();
}

}  // namespace

AttentionSteps attention_steps(nn::GPT& model, const data::Tokenizer& tokenizer, const std::string& text,
                               int64_t layer, int64_t head) {
  const nn::GPTConfig& config = model.config();
  check_layer_and_head(config, layer, head);
  const std::vector<int32_t> ids = encode_for_model(model, tokenizer, text);
  NoGradGuard no_grad;
  model.eval();

  // The model's forward pass (eval mode: no dropout), watched at the layer asked for: c_attn's Q, K
  // and V for every head at once (turned by position with RoPE), the weights and the heads' output.
  Tensor qkv;
  AttentionResult attended;
  model.forward(ids, 1, static_cast<int64_t>(ids.size()), {}, [&](int64_t l, nn::Tap tap, const Tensor& value) {
    if (l != layer) return;
    if (tap == nn::Tap::qkv) qkv = value;  // [1, T, (nh + 2 g) d_k]
    if (tap == nn::Tap::attn_weights) attended.weights = value;
    if (tap == nn::Tap::attn_heads) attended.y = value;
  });
  AttentionSteps s = head_steps(qkv, attended, config.n_head, config.kv_heads(), head);
  s.ids = ids;
  s.tokens = token_views(tokenizer, ids);
  s.layer = layer;
  s.bias = config.bias;
  s.rope = config.position == nn::PositionKind::rope;
  return s;
}

AttentionSteps head_steps(const Tensor& qkv, const AttentionResult& result, int64_t n_head, int64_t n_kv_head,
                          int64_t head) {
  const int64_t T = qkv.size(1), d = qkv.size(2) / (n_head + 2 * n_kv_head), C = n_head * d, KV = n_kv_head * d;
  const int64_t kv = head / (n_head / n_kv_head);  // the key/value head this query head reads
  AttentionSteps s;
  s.head = head;
  s.d_k = d;
  s.heads = n_head, s.kv_heads = n_kv_head, s.kv_head = kv;
  s.q = columns(qkv, head * d, d);            // [T, d_k]
  s.k = columns(qkv, C + kv * d, d);          // [T, d_k]
  s.v = columns(qkv, C + KV + kv * d, d);     // [T, d_k]
  s.output = columns(result.y, head * d, d);  // [T, d_k]: the heads are merged side by side in y
  s.weights = result.weights.slice(1, head, head + 1).contiguous().to_vector();  // [T, T] of [1, nh, T, T]

  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  s.scores.resize(T * T);
  s.scaled.resize(T * T);
  for (int64_t i = 0; i < T; ++i)  // query
    for (int64_t j = 0; j < T; ++j) {  // key
      double dot = 0;
      for (int64_t c = 0; c < d; ++c) dot += static_cast<double>(s.q[i * d + c]) * s.k[j * d + c];
      s.scores[i * T + j] = static_cast<float>(dot);
      s.scaled[i * T + j] = static_cast<float>(dot * scale);
    }
  return s;
}

namespace {

std::string number(float v) { return fmt::format("{:.3f}", v); }

// The first `shown` of a [T, d] matrix's columns, tokens labelling the rows.
std::string head_table(const AttentionSteps& s, const std::vector<float>& m, int64_t shown) {
  std::vector<std::string> cols;
  for (int64_t c = 0; c < shown; ++c) cols.push_back(fmt::format("[{}]", c));
  if (shown < s.d_k) cols.push_back("");
  return text_table(token_labels(s.tokens), cols, [&](int64_t i, int64_t c) {
    return c < shown ? number(m[i * s.d_k + c]) : "…";
  });
}

// Which cells of a [T, T] table show: every one, or those a query sees (keys after it as ×), with
// or without each row's sum.
enum class Cells { all, seen, seen_and_sums };

std::string square_table(const AttentionSteps& s, const std::vector<float>& m, Cells cells) {
  const int64_t T = s.size();
  const bool masked = cells != Cells::all;
  std::vector<std::string> cols = token_labels(s.tokens);
  if (cells == Cells::seen_and_sums) cols.push_back("| sum");
  return text_table(token_labels(s.tokens), cols, [&](int64_t i, int64_t j) -> std::string {
    if (j == T) {
      double sum = 0;
      for (int64_t k = 0; k <= i; ++k) sum += m[i * T + k];
      return fmt::format("| {:.3f}", sum);
    }
    return masked && j > i ? "×" : number(m[i * T + j]);
  });
}

std::string heading(const std::string& formula, const std::string& code) {
  return fmt::format("\n{}\n  code: {}\n", formula, code);
}

}  // namespace

namespace {

// One score worked by hand, every product written out: the last query and the key it scores
// highest, so the table's number can be checked with a calculator. Factors at full precision,
// negative ones in parentheses.
std::string score_by_hand(const AttentionSteps& s) {
  const int64_t T = s.size(), d = s.d_k, i = T - 1;
  int64_t j = 0;
  for (int64_t k = 1; k <= i; ++k)
    if (s.scores[i * T + k] > s.scores[i * T + j]) j = k;
  const auto factor = [](float v) { return v < 0 ? fmt::format("({})", v) : fmt::format("{}", v); };
  std::string terms;
  double sum = 0;
  for (int64_t c = 0; c < d; ++c) {
    const float q = s.q[i * d + c], k = s.k[j * d + c];
    terms += fmt::format("{}{}·{}", c ? " + " : "", factor(q), factor(k));
    sum += static_cast<double>(q) * k;
  }
  return fmt::format("   by hand, query {} ({}) and key {} ({}): scores[{}, {}] = Σ_c Q[{}, c]·K[{}, c], {} products\n"
                     "   = {}\n   = {:.4f} (the table: {:.4f}); scaled: {:.4f} ÷ {:.4f} = {:.4f}\n",
                     i, s.tokens[i].label, j, s.tokens[j].label, i, j, i, j, d, terms, sum, s.scores[i * T + j],
                     s.scores[i * T + j], std::sqrt(static_cast<double>(d)), s.scaled[i * T + j]);
}

}  // namespace

std::string attention_steps_text(const AttentionSteps& s, int64_t dims) {
  const int64_t T = s.size(), shown = std::min(dims, s.d_k);
  const double root = std::sqrt(static_cast<double>(s.d_k));
  std::string out = fmt::format(
      "layer {}, head {}: {} tokens, d_k = {} (the head's width); Q, K, V and the output show {} of {} columns.\n"
      "A row is a query: the token whose attention is computed; a column of a T x T table is a key.\n",
      s.layer, s.head, T, s.d_k, shown, s.d_k);
  const std::string qkv_code =
      "nn/gpt.cpp, CausalSelfAttention::forward (c_attn makes every head's Q, K and V at once); "
      "autograd/ops/attention.cpp, causal_self_attention (the head's slices)";
  // Q = ln_1(x) W_q + b_q, with the model's own pieces: no bias, RoPE's turn, shared key/value heads.
  auto made = [&](const char* name, char m, bool turned) {
    const std::string product = fmt::format("{} = {}ln_1(x) W_{}{}{}", name, turned ? "RoPE(" : "", m,
                                            s.bias ? fmt::format(" + b_{}", m) : "", turned ? ", position)" : "");
    return fmt::format("{:<38}", product);
  };
  std::string shared;
  if (s.kv_heads != s.heads)
    shared = fmt::format("\n   K and V come from key/value head {} of {}, which query heads {}..{} share "
                         "(grouped-query attention)",
                         s.kv_head, s.kv_heads, s.kv_head * (s.heads / s.kv_heads),
                         (s.kv_head + 1) * (s.heads / s.kv_heads) - 1);
  const std::string turn =
      s.rope ? "\n   RoPE turns each pair (2i, 2i+1) of Q and K by position * theta^(-2i/d_k) (autograd/ops/rope.cpp): "
               "Q·K then depends on how far apart two tokens are"
             : "";
  out += heading(fmt::format("Q, K, V, before the five operations:\n{}[T, d_k] = [{}, {}]   (the query: what this token looks for){}{}", made("Q", 'q', s.rope),
                             T, s.d_k, turn, shared),
                 qkv_code) +
         head_table(s, s.q, shown);
  out += fmt::format("\n{}[{}, {}]   (the key: what this token offers to be found by)\n", made("K", 'k', s.rope), T,
                     s.d_k) + head_table(s, s.k, shown);
  out += fmt::format("\n{}[{}, {}]   (the value: what this token passes on)\n", made("V", 'v', false), T, s.d_k) +
         head_table(s, s.v, shown);
  const std::string kernel = "autograd/ops/attention.cpp, weights_strip";
  out += heading(fmt::format("1. scores = Q·Kᵀ   [T, T] = [{}, {}]   (row i, column j: how well query i matches key j)", T, T),
                 kernel + " (one small_gemm computes operations 1 and 2 together, for the keys a query can see)") +
         square_table(s, s.scores, Cells::all) + score_by_hand(s);
  out += heading(fmt::format("2. scaled = scores ÷ √d_k = scores ÷ {:.4f}   (keeps the softmax from saturating as d_k grows)",
                             root),
                 kernel + " (the 1/√d_k factor of the same small_gemm)") +
         square_table(s, s.scaled, Cells::all);
  out += heading("3. masked = causal mask(scaled)   a key after its query (×) becomes -∞: a token cannot see later ones",
                 kernel + " (the masked keys are never scored)") +
         square_table(s, s.scaled, Cells::seen);
  out += heading("4. weights = softmax(masked)   each row sums to 1 over the keys it sees; a masked key's weight is 0",
                 kernel + " and softmax_row (the masked keys' weights are set to 0)") +
         square_table(s, s.weights, Cells::seen_and_sums);
  out += heading(fmt::format("5. output = weights·V   [{}, {}]   (each query's weighted mix of the values)", T, s.d_k),
                 "autograd/ops/attention.cpp, attend (small_gemm y = P V); then the heads are put side by side "
                 "and c_proj mixes them (nn/gpt.cpp, CausalSelfAttention::forward)") +
         head_table(s, s.output, shown);
  return out;
}

namespace {

// Rows of `cols` floats as JSON arrays of arrays, each float as its shortest exact decimal.
std::string json_rows(const std::vector<float>& m, int64_t cols) {
  std::string out = "[";
  for (size_t i = 0; i < m.size(); i += cols) {
    out += i ? ", [" : "[";
    for (int64_t c = 0; c < cols; ++c) out += fmt::format("{}{}", c ? ", " : "", m[i + c]);
    out += "]";
  }
  return out + "]";
}

}  // namespace

std::string attention_steps_json(const AttentionSteps& s) {
  std::string ids, tokens;
  for (size_t i = 0; i < s.tokens.size(); ++i) {
    ids += fmt::format("{}{}", i ? ", " : "", s.ids[i]);
    tokens += (i ? ", " : "") + data::json::quote(data::sanitize_utf8(s.tokens[i].bytes));
  }
  const int64_t T = s.size(), d = s.d_k;
  return fmt::format(
      "{{\"ids\": [{}], \"tokens\": [{}], \"layer\": {}, \"head\": {}, \"d_k\": {}, \"q\": {}, \"k\": {}, \"v\": {}, "
      "\"scores\": {}, \"scaled\": {}, \"weights\": {}, \"output\": {}}}\n",
      ids, tokens, s.layer, s.head, d, json_rows(s.q, d), json_rows(s.k, d), json_rows(s.v, d),
      json_rows(s.scores, T), json_rows(s.scaled, T), json_rows(s.weights, T), json_rows(s.output, d));
}

}  // namespace tinygpt::inspect
