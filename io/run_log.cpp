#include "tinygpt/io/run_log.h"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <string_view>

#include "tinygpt/data/input_file.h"

namespace tinygpt::io {

namespace {

constexpr std::array<std::string_view, 6> kColumns = {"iter", "train_loss", "val_loss", "lr", "tokens_per_s", "seconds"};
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

}  // namespace

std::string format_log_row(const LogRow& r) {
  return fmt::format("{},{:.9g},{},{:.6e},{:.1f},{:.3f}", r.iter, r.train_loss,
                     r.val_loss && std::isfinite(*r.val_loss) ? fmt::format("{:.9g}", *r.val_loss) : "", r.lr,
                     r.tokens_per_s, r.seconds);
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
    const bool ok = f.size() >= kColumns.size() && parse_whole(f[at[0]], row.iter) &&
                    parse_whole(f[at[1]], row.train_loss) && (f[at[2]].empty() || parse_whole(f[at[2]], val)) &&
                    parse_whole(f[at[3]], row.lr) && parse_whole(f[at[4]], row.tokens_per_s) &&
                    parse_whole(f[at[5]], row.seconds);
    if (!ok || !std::isfinite(row.train_loss) || !std::isfinite(val) || !std::isfinite(row.lr) ||
        !std::isfinite(row.tokens_per_s) || !std::isfinite(row.seconds))
      throw std::invalid_argument(fmt::format("log '{}', line {}: not a row of numbers: '{}'", path, number, line));
    if (!f[at[2]].empty()) row.val_loss = val;
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
