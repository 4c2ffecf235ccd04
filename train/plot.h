#pragma once
// Loss curves from the trainer's CSV log, as an SVG plot.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tinygpt::train {

struct LogRow {
  int64_t iter;
  double train_loss;
  std::optional<double> val_loss;  // only on evaluation rows
  double lr, tokens_per_s, seconds;
};

// Reads a log with the columns iter, train_loss, val_loss, lr, tokens_per_s, seconds (in any
// order); a missing column or a malformed row is an error naming the file and the line.
std::vector<LogRow> read_log(const std::string& path);

// Two panels over iterations: train and validation loss (one marker per evaluation), tokens/s.
std::string loss_plot_svg(const std::vector<LogRow>& rows, const std::string& title);

// Reads `log` and writes its plot to `svg`.
void write_loss_plot(const std::string& log, const std::string& svg);

}  // namespace tinygpt::train
