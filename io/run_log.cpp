#include "run_log.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <string_view>

#include "../data/input_file.h"

namespace tinygpt::io {

namespace {

constexpr std::array<std::string_view, 6> kColumns = {"iter", "train_loss", "val_loss", "lr", "tokens_per_s", "seconds"};
constexpr std::array<std::string_view, 11> kStepColumns = {
    "tokens", "grad_norm", "clip_scale", "update_ratio", "update_embeddings", "update_attention", "update_mlp",
    "update_norms", "update_head", "peak_share", "skipped"};
constexpr int64_t kMaxLogBytes = int64_t{1} << 30;

std::vector<std::string_view> split_csv(std::string_view line) {
  std::vector<std::string_view> fields;
  for (size_t start = 0;;) {
    const size_t comma = line.find(',', start);
    fields.push_back(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) return fields;
    start = comma + 1;
  }
}

// Where each of kColumns is in a header; false when one is missing (named in `missing`).
bool column_positions(std::string_view header, std::array<size_t, 6>& at, std::string_view& missing) {
  const std::vector<std::string_view> names = split_csv(header);
  for (size_t c = 0; c < kColumns.size(); ++c) {
    size_t i = 0;
    while (i < names.size() && names[i] != kColumns[c]) ++i;
    if (i == names.size()) {
      missing = kColumns[c];
      return false;
    }
    at[c] = i;
  }
  return true;
}

template <class T>
bool parse_whole(std::string_view text, T& value) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size();
}

// Where each step column is, when the header has every one.
std::optional<std::array<size_t, kStepColumns.size()>> step_positions(std::string_view header) {
  const std::vector<std::string_view> names = split_csv(header);
  std::array<size_t, kStepColumns.size()> at{};
  for (size_t c = 0; c < kStepColumns.size(); ++c) {
    at[c] = static_cast<size_t>(std::find(names.begin(), names.end(), kStepColumns[c]) - names.begin());
    if (at[c] == names.size()) return std::nullopt;
  }
  return at;
}

// Where task_acc and task_acc_norm are, when the header has both.
std::optional<std::array<size_t, 2>> task_positions(std::string_view header) {
  const std::vector<std::string_view> names = split_csv(header);
  const auto acc = std::find(names.begin(), names.end(), "task_acc"), norm = std::find(names.begin(), names.end(), "task_acc_norm");
  if (acc == names.end() || norm == names.end()) return std::nullopt;
  return std::array<size_t, 2>{static_cast<size_t>(acc - names.begin()), static_cast<size_t>(norm - names.begin())};
}

std::string number_or_empty(double v) { return std::isfinite(v) ? fmt::format("{:.9g}", v) : ""; }

// A loss as the log writes it: "nan" for any NaN (whatever its sign bit), "inf", or 9 digits.
std::string loss_text(double v) { return std::isnan(v) ? "nan" : fmt::format("{:.9g}", v); }

// A finite number, or empty for NaN (a group the model lacks).
bool parse_or_nan(std::string_view text, double& value) {
  if (text.empty()) return value = NAN, true;
  return parse_whole(text, value) && std::isfinite(value);
}

std::optional<StepColumns> parse_step(const std::vector<std::string_view>& f,
                                      const std::array<size_t, kStepColumns.size()>& at) {
  StepColumns s;
  bool ok = parse_whole(f[at[0]], s.tokens) && parse_whole(f[at[1]], s.grad_norm) &&
            parse_whole(f[at[2]], s.clip_scale) && parse_or_nan(f[at[3]], s.update_ratio) &&
            parse_whole(f[at[9]], s.peak_share) && (f[at[10]] == "0" || f[at[10]] == "1");
  s.skipped = f[at[10]] == "1";
  for (size_t g = 0; g < s.group_ratio.size(); ++g) ok = ok && parse_or_nan(f[at[4 + g]], s.group_ratio[g]);
  if (!ok || (!std::isfinite(s.grad_norm) && !s.skipped) || !std::isfinite(s.clip_scale) || !std::isfinite(s.peak_share))
    return std::nullopt;
  return s;
}

}  // namespace

std::string format_log_row(const LogRow& r) {
  std::string row = fmt::format("{},{},{},{:.6e},{:.1f},{:.3f}", r.iter, loss_text(r.train_loss),
                                r.val_loss ? number_or_empty(*r.val_loss) : "", r.lr, r.tokens_per_s, r.seconds);
  if (!r.step) {
    row += std::string(kStepColumns.size(), ',');
  } else {
    const StepColumns& s = *r.step;
    row += fmt::format(",{},{:.9g},{:.9g},{}", s.tokens, s.grad_norm, s.clip_scale, number_or_empty(s.update_ratio));
    for (double g : s.group_ratio) row += "," + number_or_empty(g);
    row += fmt::format(",{:.4f},{}", s.peak_share, s.skipped ? 1 : 0);
  }
  return row + (r.task ? fmt::format(",{:.6f},{:.6f}", r.task->acc, r.task->acc_norm) : ",,");
}

bool is_log_header(const std::string& line) {
  std::array<size_t, 6> at;
  std::string_view missing;
  return column_positions(line, at, missing);
}

std::vector<LogLine> read_log_lines(const std::string& path) {
  data::InputFile file(path, "log");
  const data::FileBytes bytes = file.read_all(kMaxLogBytes);
  const std::string_view all = bytes.view();
  const size_t header_end = all.find('\n');
  std::array<size_t, 6> at;
  std::string_view missing;
  if (!column_positions(all.substr(0, header_end), at, missing))
    throw std::invalid_argument(fmt::format("log '{}' has no column '{}' (expected {})", path, missing,
                                            fmt::join(kColumns, ", ")));
  const auto step_at = step_positions(all.substr(0, header_end));
  const auto task_at = task_positions(all.substr(0, header_end));
  std::vector<LogLine> lines;
  int64_t number = 2;
  for (size_t start = header_end == std::string_view::npos ? all.size() : header_end + 1; start < all.size(); ++number) {
    const size_t end = all.find('\n', start);
    if (end == std::string_view::npos) break;  // cut short while being written
    const std::string_view line = all.substr(start, end - start);
    start = end + 1;
    if (line.empty()) continue;
    const std::vector<std::string_view> f = split_csv(line);
    LogRow row{};
    double val = 0;
    const bool ok = f.size() > *std::max_element(at.begin(), at.end()) && parse_whole(f[at[0]], row.iter) &&
                    parse_whole(f[at[1]], row.train_loss) && (f[at[2]].empty() || parse_whole(f[at[2]], val)) &&
                    parse_whole(f[at[3]], row.lr) && parse_whole(f[at[4]], row.tokens_per_s) &&
                    parse_whole(f[at[5]], row.seconds);
    auto bad_row = [&] {
      return std::invalid_argument(fmt::format("log '{}', line {}: not a row of numbers: '{}'", path, number, line));
    };
    if (!ok || !std::isfinite(val) || !std::isfinite(row.lr) || !std::isfinite(row.tokens_per_s) ||
        !std::isfinite(row.seconds))
      throw bad_row();
    if (!f[at[2]].empty()) row.val_loss = val;
    if (step_at && std::ranges::any_of(*step_at, [&](size_t c) { return c < f.size() && !f[c].empty(); })) {
      if (std::ranges::any_of(*step_at, [&](size_t c) { return c >= f.size(); }) || !(row.step = parse_step(f, *step_at)))
        throw bad_row();
    }
    if (task_at && (*task_at)[0] < f.size() && !f[(*task_at)[0]].empty()) {
      TaskColumns task;
      if ((*task_at)[1] >= f.size() || !parse_whole(f[(*task_at)[0]], task.acc) ||
          !parse_whole(f[(*task_at)[1]], task.acc_norm) || !(task.acc >= 0 && task.acc <= 1) ||
          !(task.acc_norm >= 0 && task.acc_norm <= 1))
        throw bad_row();
      row.task = task;
    }
    if (!std::isfinite(row.train_loss) && !(row.step && row.step->skipped)) throw bad_row();  // only a skipped step's
    lines.push_back({row, std::string(line)});
  }
  return lines;
}

std::vector<LogRow> read_log(const std::string& path) {
  std::vector<LogRow> rows;
  for (const LogLine& line : read_log_lines(path)) rows.push_back(line.row);
  if (rows.empty()) throw std::invalid_argument(fmt::format("log '{}' has no rows", path));
  return rows;
}

}  // namespace tinygpt::io
