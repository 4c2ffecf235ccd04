#include "multiple_choice.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "../autograd/graph.h"
#include "../data/input_file.h"
#include "../data/json.h"
#include "../autograd/elementary.h"

namespace tinygpt::train {

namespace {

constexpr int64_t kMaxTaskBytes = int64_t{1} << 30;  // a benchmark's file: HellaSwag's validation set is 11 MB
constexpr data::json::Limits kLineLimits{.depth = 8, .values = 100'000, .string_bytes = int64_t{1} << 20,
                                         .why_values = "the most one example of a benchmark needs"};

const data::json::Value& field(const data::json::Value& object, const char* key, data::json::Value::Type type,
                               const std::string& where) {
  const data::json::Value* value = object.find(key);
  if (!value) throw std::invalid_argument(fmt::format("{}: no field \"{}\"", where, key));
  if (value->type != type)
    throw std::invalid_argument(fmt::format("{}: field \"{}\" is {}, not {}", where, key, value->type_name(),
                                            data::json::Value{.type = type}.type_name()));
  return *value;
}

ChoiceExample parse_example(std::string_view line, const std::string& where) {
  const data::json::Value v = data::json::parse(line, where, kLineLimits);
  if (v.type != data::json::Value::Type::object)
    throw std::invalid_argument(fmt::format("{}: is {}, not an object", where, v.type_name()));
  ChoiceExample e;
  e.context = field(v, "ctx", data::json::Value::Type::string, where).text;
  const data::json::Array& endings = *field(v, "endings", data::json::Value::Type::array, where).array;
  if (endings.size() < 2)
    throw std::invalid_argument(fmt::format("{}: field \"endings\" has {} ending{}; a choice needs at least 2", where,
                                            endings.size(), endings.size() == 1 ? "" : "s"));
  for (size_t k = 0; k < endings.size(); ++k) {
    if (endings[k].type != data::json::Value::Type::string)
      throw std::invalid_argument(fmt::format("{}: field \"endings\"[{}] is {}, not a string", where, k, endings[k].type_name()));
    e.endings.push_back(endings[k].text);
  }
  const data::json::Value& label = field(v, "label", data::json::Value::Type::number, where);
  if (!label.is_integer() || label.number < 0 || label.number >= static_cast<double>(endings.size()))
    throw std::invalid_argument(fmt::format("{}: field \"label\" is {}, not an index of the {} endings (0 to {})", where,
                                            label.text, endings.size(), endings.size() - 1));
  e.label = static_cast<int64_t>(label.number);
  return e;
}

}  // namespace

std::vector<ChoiceExample> read_choice_task(const std::string& path) {
  data::InputFile file(path, "task file");
  const data::FileBytes bytes = file.read_all(kMaxTaskBytes);
  const std::string_view text = bytes.view();
  std::vector<ChoiceExample> examples;
  int64_t number = 0;
  for (size_t start = 0; start < text.size();) {
    const size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view line = text.substr(start, end - start);
    start = end + 1, ++number;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    examples.push_back(parse_example(line, fmt::format("task file '{}' line {}", path, number)));
    examples.back().line = number;
  }
  if (examples.empty()) throw std::invalid_argument(fmt::format("task file '{}': holds no example", path));
  return examples;
}

ChoiceRows choice_rows(std::span<const ChoiceExample> examples, const data::Tokenizer& tokenizer, int64_t block_size,
                       const std::string& where) {
  ChoiceRows rows;
  for (const ChoiceExample& e : examples) {
    rows.first_row.push_back(static_cast<int64_t>(rows.tokens.size()));
    const std::vector<int32_t> context =
        tokenizer.encode(e.context, fmt::format("{} line {} field \"ctx\"", where, e.line));
    const auto context_size = static_cast<int64_t>(context.size());
    for (size_t k = 0; k < e.endings.size(); ++k) {
      const std::vector<int32_t> ending =
          tokenizer.encode(" " + e.endings[k], fmt::format("{} line {} field \"endings\"[{}]", where, e.line, k));
      // The last block_size tokens of context + ending, copied as such: a row holds at most a block.
      const auto cut = std::max<int64_t>(0, context_size + static_cast<int64_t>(ending.size()) - block_size);
      std::vector<int32_t> row;
      row.reserve(static_cast<size_t>(context_size + static_cast<int64_t>(ending.size()) - cut));
      row.insert(row.end(), context.begin() + std::min(cut, context_size), context.end());
      row.insert(row.end(), ending.begin() + std::max<int64_t>(0, cut - context_size), ending.end());
      const int64_t from = std::max<int64_t>(1, context_size - cut);
      if (from >= static_cast<int64_t>(row.size()))
        throw std::invalid_argument(fmt::format("{} line {}: ending {} leaves no token to score (each needs a token "
                                                "before it, and the context has none)", where, e.line, k));
      rows.tokens.push_back(std::move(row));
      rows.scored_from.push_back(from);
    }
  }
  rows.first_row.push_back(static_cast<int64_t>(rows.tokens.size()));
  return rows;
}

namespace {

// Cross-entropy of `target` under logits [V]: the exps and the log are elementary.h's (the same
// on every machine), the sum and the rest in double.
double token_loss(const float* logits, int64_t V, int32_t target) {
  const float top = *std::max_element(logits, logits + V);
  double sum = 0;
  for (int64_t v = 0; v < V; ++v) sum += vector_exp(logits[v] - top);
  return static_cast<double>(vector_log(static_cast<float>(sum))) + top - logits[target];
}

ChoiceResult pick(std::vector<EndingScore> endings) {
  ChoiceResult r{.endings = std::move(endings)};
  for (size_t k = 1; k < r.endings.size(); ++k) {
    if (r.endings[k].loss < r.endings[r.pick].loss) r.pick = static_cast<int64_t>(k);
    if (r.endings[k].mean() < r.endings[r.pick_norm].mean()) r.pick_norm = static_cast<int64_t>(k);
  }
  return r;
}

}  // namespace

std::vector<ChoiceGroup> choice_groups(const ChoiceRows& rows, int64_t batch) {
  const int64_t examples = static_cast<int64_t>(rows.first_row.size()) - 1;
  std::vector<ChoiceGroup> groups;
  for (int64_t e0 = 0; e0 < examples;) {
    int64_t e1 = e0 + 1;
    while (e1 < examples && rows.first_row[e1 + 1] - rows.first_row[e0] <= batch) ++e1;
    groups.push_back({e0, e1});
    e0 = e1;
  }
  return groups;
}

std::vector<ChoiceResult> score_group(nn::GPT& model, const ChoiceRows& rows, ChoiceGroup group, int64_t batch) {
  NoGradGuard no_grad;
  const bool training = model.training();
  model.eval();
  const int64_t V = model.config().vocab_size;
  const int64_t first = rows.first_row[group.begin], end = rows.first_row[group.end];
  std::vector<EndingScore> scores(static_cast<size_t>(end - first));
  for (int64_t r0 = first; r0 < end; r0 += batch) {
    const int64_t B = std::min(batch, end - r0);
    int64_t T = 0;
    for (int64_t r = r0; r < r0 + B; ++r) T = std::max<int64_t>(T, static_cast<int64_t>(rows.tokens[r].size()));
    std::vector<int32_t> idx(static_cast<size_t>(B * T), 0);  // rows padded at their end: causal attention never looks there
    for (int64_t r = 0; r < B; ++r) std::copy(rows.tokens[r0 + r].begin(), rows.tokens[r0 + r].end(), idx.begin() + r * T);
    const Tensor logits = model.forward(idx, B, T).logits;  // [B, T, V]
    if (!logits.is_contiguous()) throw std::logic_error("score_group: the logits are not contiguous");
    const float* l = logits.data();
    for (int64_t r = r0; r < r0 + B; ++r) {
      EndingScore& s = scores[static_cast<size_t>(r - first)];
      const std::vector<int32_t>& row = rows.tokens[r];
      for (auto p = rows.scored_from[r]; p < static_cast<int64_t>(row.size()); ++p, ++s.tokens)
        s.loss += token_loss(l + ((r - r0) * T + p - 1) * V, V, row[p]);
    }
  }
  if (training) model.train();
  std::vector<ChoiceResult> results;
  for (int64_t e = group.begin; e < group.end; ++e)
    results.push_back(pick(std::vector<EndingScore>(scores.begin() + (rows.first_row[e] - first),
                                                    scores.begin() + (rows.first_row[e + 1] - first))));
  return results;
}

std::vector<ChoiceResult> score_choices(nn::GPT& model, const ChoiceRows& rows, int64_t batch,
                                        const std::function<void(int64_t)>& on_done) {
  std::vector<ChoiceResult> results;
  for (const ChoiceGroup& group : choice_groups(rows, batch)) {
    for (ChoiceResult& r : score_group(model, rows, group, batch)) results.push_back(std::move(r));
    if (on_done) on_done(group.end);
  }
  return results;
}

double choice_task_bytes(std::span<const ChoiceExample> examples, const ChoiceRows& rows) {
  double bytes = 0;
  for (const ChoiceExample& e : examples) {
    bytes += static_cast<double>(sizeof e + e.context.capacity());
    for (const std::string& ending : e.endings) bytes += static_cast<double>(sizeof ending + ending.capacity());
  }
  for (const std::vector<int32_t>& row : rows.tokens)
    bytes += static_cast<double>(sizeof row + row.capacity() * sizeof(int32_t) + 2 * sizeof(int64_t));
  return bytes;
}

ChoiceScores tally(std::span<const ChoiceExample> examples, std::span<const ChoiceResult> results) {
  ChoiceScores s{.examples = static_cast<int64_t>(results.size())};
  for (size_t i = 0; i < results.size(); ++i) {
    s.correct += results[i].pick == examples[i].label;
    s.correct_norm += results[i].pick_norm == examples[i].label;
  }
  return s;
}

}  // namespace tinygpt::train
