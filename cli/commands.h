#pragma once
// One file per subcommand (import and export, one format conversion each way, share interop.cpp);
// each adds itself to the application.
#include <CLI/CLI.hpp>

namespace tinygpt::cli {

// Thrown by a command that a signal stopped after it saved its work; main exits with 128 + signal
// (130 for SIGINT, 143 for SIGTERM), as a shell reports a process that the signal ended.
struct Stopped {
  int signal;
};

void add_train(CLI::App& app);
void add_eval(CLI::App& app);
void add_sample(CLI::App& app);
void add_info(CLI::App& app);
void add_bench(CLI::App& app);
void add_tokens(CLI::App& app);
void add_attention(CLI::App& app);
void add_plot(CLI::App& app);
void add_explain(CLI::App& app);
void add_import(CLI::App& app);     // interop.cpp
void add_export(CLI::App& app);     // interop.cpp
void add_prepare(CLI::App& app);

}  // namespace tinygpt::cli
