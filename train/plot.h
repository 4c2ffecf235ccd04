#pragma once
// Loss curves from the trainer's CSV log, as an SVG plot.
#include <string>
#include <vector>

#include "tinygpt/train/run_log.h"

namespace tinygpt::train {

// Two panels over iterations: train and validation loss (one marker per evaluation), tokens/s.
std::string loss_plot_svg(const std::vector<LogRow>& rows, const std::string& title);

// Reads `log` and writes its plot to `svg`.
void write_loss_plot(const std::string& log, const std::string& svg);

}  // namespace tinygpt::train
