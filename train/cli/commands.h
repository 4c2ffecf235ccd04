#pragma once
// One file per subcommand; each adds itself to the application.
#include <CLI/CLI.hpp>

namespace tinygpt::cli {

void add_train(CLI::App& app);
void add_eval(CLI::App& app);
void add_sample(CLI::App& app);
void add_info(CLI::App& app);
void add_bench(CLI::App& app);

}  // namespace tinygpt::cli
