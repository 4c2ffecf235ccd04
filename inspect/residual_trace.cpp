#include "residual_trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "../autograd/graph.h"

namespace tinygpt::inspect {

namespace {

// |row `position`| of a [1, T, C] tensor, in double.
double norm_at(const Tensor& x, int64_t position) {
  const std::vector<float> row = x.slice(1, position, position + 1).contiguous().to_vector();
  double sum = 0;
  for (const float v : row) sum += static_cast<double>(v) * v;
  return std::sqrt(sum);
}

}  // namespace

ResidualTrace residual_trace(nn::GPT& model, const data::Tokenizer& tokenizer, const std::string& text,
                             std::optional<int64_t> followed, int64_t top) {
  const std::vector<int32_t> ids = encode_for_model(model, tokenizer, text);
  const auto T = static_cast<int64_t>(ids.size());
  const int64_t position = followed.value_or(T - 1);
  if (position < 0 || position >= T)
    throw std::out_of_range(
        fmt::format("--position {} is out of range: the text has {} tokens (0..{})", position, T, T - 1));
  ResidualTrace trace{token_views(tokenizer, ids), position, {}, {}};
  NoGradGuard no_grad;
  model.eval();
  // GPT::forward in eval mode, watched one addition to the residual stream at a time.
  std::vector<float> logits;  // [V] at the position followed
  const std::string embedding = model.wpe ? "embedding: wte[token] + wpe[position]" : "embedding: wte[token]";
  Tensor added;  // what the sublayer just added
  model.forward(ids, 1, T, {}, [&](int64_t l, nn::Tap tap, const Tensor& value) {
    switch (tap) {
      case nn::Tap::embedding: trace.stages.push_back({embedding, norm_at(value, position), 0}); break;
      case nn::Tap::attn: case nn::Tap::mlp: added = value; break;
      case nn::Tap::residual_attn:  // tokens gather context
        trace.stages.push_back({fmt::format("block {} + attn(ln_1(x))", l), norm_at(value, position), norm_at(added, position)});
        break;
      case nn::Tap::residual_mlp:  // each token on its own
        trace.stages.push_back({fmt::format("block {} + mlp(ln_2(x))", l), norm_at(value, position), norm_at(added, position)});
        break;
      case nn::Tap::ln_f: trace.stages.push_back({"ln_f(x)", norm_at(value, position), 0}); break;
      case nn::Tap::logits: logits = value.slice(1, position, position + 1).contiguous().to_vector(); break;
      default: break;
    }
  });
  // The next token's probabilities: softmax of the output layer's logits, in double.
  const double peak = *std::max_element(logits.begin(), logits.end());
  std::vector<double> p(logits.size());
  double sum = 0;
  for (size_t i = 0; i < p.size(); ++i) sum += p[i] = std::exp(static_cast<double>(logits[i]) - peak);
  std::vector<int32_t> order(p.size());
  std::iota(order.begin(), order.end(), 0);
  const auto shown = std::min<int64_t>(top, static_cast<int64_t>(order.size()));
  std::partial_sort(order.begin(), order.begin() + shown, order.end(),
                    [&](int32_t a, int32_t b) { return p[a] > p[b] || (p[a] == p[b] && a < b); });
  for (int64_t i = 0; i < shown; ++i)
    trace.next.push_back({token_views(tokenizer, {order[i]})[0], p[order[i]] / sum});
  return trace;
}

std::string residual_trace_text(const ResidualTrace& trace) {
  std::string context;
  for (int64_t i = 0; i <= trace.position; ++i) context += trace.tokens[i].label;
  std::string out = fmt::format(
      "the residual stream of token {} '{}' (it sees \"{}\"): the length |x| of its vector after each step,\n"
      "and the length of what the step added\n",
      trace.position, trace.tokens[trace.position].label, context);
  std::vector<std::string> names;
  for (const auto& s : trace.stages) names.push_back(s.name);
  out += text_table(names, {"|x|", "|added|"}, [&](int64_t i, int64_t c) {
    const auto& s = trace.stages[i];
    return c == 0 ? fmt::format("{:.3f}", s.norm) : s.added_norm > 0 ? fmt::format("{:.3f}", s.added_norm) : "";
  });
  out += fmt::format("\nnext token: softmax(ln_f(x) wteᵀ), the {} most likely\n", trace.next.size());
  std::vector<std::string> labels;
  for (const auto& c : trace.next) labels.push_back(c.token.label);
  out += text_table(labels, {"probability"},
                    [&](int64_t i, int64_t) { return fmt::format("{:.4f}", trace.next[i].probability); });
  return out;
}

}  // namespace tinygpt::inspect
