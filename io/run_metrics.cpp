#include "run_metrics.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <stdexcept>

#include "../data/input_file.h"
#include "../data/json.h"

namespace tinygpt::io {

namespace {

constexpr int64_t kMaxMetricsBytes = int64_t{4} << 30;

using Style = data::json::NumberForm::Style;
// A float's value exactly (9 significant digits), or null.
std::string float_number(double v) { return data::json::number(v, {Style::general, 9}); }
std::string decimals(double v, int digits) { return data::json::number(v, {Style::fixed, digits}); }

}  // namespace

std::string step_json(const LogRow& r) {
  const StepColumns& s = r.step.value();
  std::string groups;
  for (size_t g = 0; g < kUpdateGroups.size(); ++g)
    groups += fmt::format("{}\"{}\": {}", g ? ", " : "", kUpdateGroups[g], float_number(s.group_ratio[g]));
  return fmt::format(
      R"({{"type": "step", "iter": {}, "train_loss": {}, "lr": {}, "tokens": {}, "tokens_per_s": {}, )"
      R"("seconds": {}, "grad_norm": {}, "clip_scale": {}, "update_ratio": {}, )"
      R"("update_ratio_by_group": {{{}}}, "peak_share": {}, "skipped": {}}})",
      r.iter, float_number(r.train_loss), data::json::number(r.lr, {Style::scientific, 6}), s.tokens,
      decimals(r.tokens_per_s, 1), decimals(r.seconds, 3), float_number(s.grad_norm), float_number(s.clip_scale),
      float_number(s.update_ratio), groups, decimals(s.peak_share, 4), s.skipped);
}

std::string eval_json(int64_t iter, double val_loss, const std::optional<TaskColumns>& task) {
  const std::string scores = task ? fmt::format(R"(, "task_examples": {}, "task_acc": {}, "task_acc_norm": {})",
                                                task->examples, decimals(task->acc, 6), decimals(task->acc_norm, 6))
                                  : "";
  return fmt::format(R"({{"type": "eval", "iter": {}, "val_loss": {}{}}})", iter, float_number(val_loss), scores);
}

bool is_metrics_header(std::string_view line) { return line == kMetricsHeader; }

std::vector<MetricsLine> read_metrics_lines(const std::string& path) {
  data::InputFile file(path, "metrics");
  const data::FileBytes bytes = file.read_all(kMaxMetricsBytes);
  const std::string_view all = bytes.view();
  const size_t header_end = all.find('\n');
  if (!is_metrics_header(all.substr(0, header_end)))
    throw std::invalid_argument(fmt::format("'{}' is not a tinygpt metrics file: its first line is not {}", path,
                                            kMetricsHeader));
  std::vector<MetricsLine> lines;
  int64_t number = 2;
  for (size_t start = header_end + 1; header_end != std::string_view::npos && start < all.size(); ++number) {
    const size_t end = all.find('\n', start);
    if (end == std::string_view::npos) break;  // cut short while being written
    const std::string_view line = all.substr(start, end - start);
    start = end + 1;
    const std::string where = fmt::format("'{}', line {}", path, number);
    const data::json::Value v = data::json::parse(line, where, {.depth = 2, .values = 64});
    const data::json::Value* iter = v.find("iter");
    int64_t n = 0;
    const auto parsed = iter && iter->is_integer()
                            ? std::from_chars(iter->text.data(), iter->text.data() + iter->text.size(), n)
                            : std::from_chars_result{nullptr, std::errc::invalid_argument};
    if (parsed.ec != std::errc() || n < 0)
      throw std::invalid_argument(fmt::format("metrics {}: an object without an iteration number \"iter\"", where));
    lines.push_back({n, std::string(line)});
  }
  return lines;
}

namespace {

double number_at(const data::json::Value& v, const char* key, const std::string& where) {
  const data::json::Value* x = v.find(key);
  if (!x || (x->type != data::json::Value::Type::number && x->type != data::json::Value::Type::null))
    throw std::invalid_argument(fmt::format("metrics {}: no number \"{}\"", where, key));
  return x->type == data::json::Value::Type::null ? NAN : x->number;
}

}  // namespace

std::vector<LogRow> read_metrics(const std::string& path) {
  std::vector<LogRow> rows;
  int64_t number = 1;
  for (const MetricsLine& line : read_metrics_lines(path)) {
    const std::string where = fmt::format("'{}', line {}", path, ++number);
    const data::json::Value v = data::json::parse(line.text, where, {.depth = 2, .values = 64});
    const data::json::Value* type = v.find("type");
    if (type && type->text == "eval" && !rows.empty() && rows.back().iter == line.iter) {
      rows.back().val_loss = number_at(v, "val_loss", where);
      continue;
    }
    if (!type || type->text != "step")
      throw std::invalid_argument(fmt::format("metrics {}: neither a step nor its evaluation", where));
    StepColumns s;
    const double tokens = number_at(v, "tokens", where);
    if (!(tokens >= 0 && tokens <= 9e18))  // as the CSV reads it: a count, never cast from nan or 1e300
      throw std::invalid_argument(fmt::format("metrics {}: \"tokens\" is not a count of tokens", where));
    s.tokens = static_cast<int64_t>(tokens);
    s.grad_norm = number_at(v, "grad_norm", where), s.clip_scale = number_at(v, "clip_scale", where);
    s.update_ratio = number_at(v, "update_ratio", where), s.peak_share = number_at(v, "peak_share", where);
    const data::json::Value* groups = v.find("update_ratio_by_group");
    for (size_t g = 0; g < kUpdateGroups.size(); ++g)
      s.group_ratio[g] = groups ? number_at(*groups, kUpdateGroups[g], where) : NAN;
    const data::json::Value* skipped = v.find("skipped");
    s.skipped = skipped && skipped->boolean;
    const LogRow row{line.iter, number_at(v, "train_loss", where), std::nullopt, number_at(v, "lr", where),
                     number_at(v, "tokens_per_s", where), number_at(v, "seconds", where), s};
    // The same numbers the CSV requires: finite, but a skipped step's loss and the ratios of groups
    // a model lacks.
    if (!std::isfinite(row.lr) || !std::isfinite(row.tokens_per_s) || !std::isfinite(row.seconds) ||
        !std::isfinite(s.clip_scale) || !std::isfinite(s.peak_share) || (!std::isfinite(row.train_loss) && !s.skipped))
      throw std::invalid_argument(fmt::format("metrics {}: a number that must be finite is not", where));
    rows.push_back(row);
  }
  if (rows.empty()) throw std::invalid_argument(fmt::format("metrics '{}' have no steps", path));
  return rows;
}

}  // namespace tinygpt::io
