// tinygpt plot: runs' loss curves from their CSV logs, as SVG.
#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "../inspect/plot.h"
#include "../io/output_files.h"
#include "../train/existing_outputs.h"
#include "commands.h"

namespace tinygpt::cli {

void add_plot(CLI::App& app) {
  struct Args {
    std::vector<std::string> logs;
    std::string out;
    bool force = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("plot", "draw runs' loss curves (and tokens/s) from their CSV logs as SVG");
  cmd->add_option("--log", args->logs, "the CSV log written beside a checkpoint; several draw the runs together")
      ->required();
  cmd->add_option("--out", args->out, "the SVG file to write")->required();
  cmd->add_flag("--force", args->force, "replace an SVG file that already lies at --out");
  cmd->callback([args] {
    train::refuse_replacing(args->out, io::OutputKind::svg, {.force = args->force, .inputs = args->logs});  // before reading
    inspect::write_loss_plot(args->logs, args->out);
    fmt::print("wrote {}\n", args->out);
  });
}

}  // namespace tinygpt::cli
