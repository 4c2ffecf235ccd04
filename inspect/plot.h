#pragma once
// Loss curves from the trainer's CSV log, as an SVG plot.
#include <string>
#include <vector>

#include "../io/run_log.h"

namespace tinygpt::inspect {

// One run's log rows, and its name in the legend (empty for a plot of one run).
struct RunCurves {
  std::string name;
  std::vector<io::LogRow> rows;
};

// Panels over iterations: train and validation loss (one marker per evaluation); the gradient's
// norm before clipping on a log scale, a dot at each clipped step and a red ring at each step the
// spike guard skipped (when the logs keep them); tokens/s. Each run in its own colours.
std::string loss_plot_svg(const std::vector<RunCurves>& runs, const std::string& title);
inline std::string loss_plot_svg(const std::vector<io::LogRow>& rows, const std::string& title) {
  return loss_plot_svg(std::vector<RunCurves>{{"", rows}}, title);
}

// Reads the logs (CSV, or a run's .jsonl metrics) and writes their plot to `svg`: several logs are
// drawn together, each named by its file name without the directory and ".csv" or ".jsonl".
void write_loss_plot(const std::vector<std::string>& logs, const std::string& svg);

}  // namespace tinygpt::inspect
