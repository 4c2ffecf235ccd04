#pragma once
// Loss curves from the trainer's CSV log, as an SVG plot.
#include <string>
#include <vector>

#include "tinygpt/io/run_log.h"

namespace tinygpt::inspect {

// One run's log rows, and its name in the legend (empty for a plot of one run).
struct RunCurves {
  std::string name;
  std::vector<io::LogRow> rows;
};

// Two panels over iterations: train and validation loss (one marker per evaluation), tokens/s;
// each run in its own colours.
std::string loss_plot_svg(const std::vector<RunCurves>& runs, const std::string& title);
inline std::string loss_plot_svg(const std::vector<io::LogRow>& rows, const std::string& title) {
  return loss_plot_svg(std::vector<RunCurves>{{"", rows}}, title);
}

// Reads the logs and writes their plot to `svg`: several logs are drawn together, each named by its
// file name without the directory and ".csv".
void write_loss_plot(const std::vector<std::string>& logs, const std::string& svg);

}  // namespace tinygpt::inspect
