#pragma once
// The CSV log a training run keeps beside its checkpoint: one row per iteration, losses with 9
// significant digits (enough to tell any two floats apart), the validation loss only on rows where
// it was estimated.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tinygpt::io {

constexpr const char* kLogHeader = "iter,train_loss,val_loss,lr,tokens_per_s,seconds";

struct LogRow {
  int64_t iter;
  double train_loss;
  std::optional<double> val_loss;  // only on evaluation rows
  double lr, tokens_per_s, seconds;
};

std::string format_log_row(const LogRow& row);  // without the newline

struct LogLine {
  LogRow row;
  std::string text;  // as written
};

// Reads a log with the columns iter, train_loss, val_loss, lr, tokens_per_s, seconds (in any
// order). A missing column or a malformed row is an error naming the file and the line; a last
// line without its newline (a write cut short by a crash) is left out.
std::vector<LogLine> read_log_lines(const std::string& path);
std::vector<LogRow> read_log(const std::string& path);  // the rows; at least one

// Whether a file's first line is a log's header (the six columns in any order).
bool is_log_header(const std::string& line);

}  // namespace tinygpt::io
