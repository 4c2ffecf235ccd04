// tinygpt: train a small GPT on text, resume it, evaluate it, sample from it.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <exception>
#include <string>
#include <vector>

#include "tinygpt/train/cli/commands.h"
#include "tinygpt/train/distributed.h"

int main(int argc, char** argv) {
  // Under mpirun: one rank of a data-parallel run (train, bench); otherwise MPI is never started.
  tinygpt::train::MpiSession mpi(argc, argv);
  CLI::App app{"tinygpt: train a small GPT on a CPU, evaluate it and sample from it", "tinygpt"};
  app.require_subcommand(1);
  tinygpt::cli::add_train(app);
  tinygpt::cli::add_eval(app);
  tinygpt::cli::add_sample(app);
  tinygpt::cli::add_info(app);
  tinygpt::cli::add_bench(app);
  tinygpt::cli::add_tokens(app);
  tinygpt::cli::add_attention(app);
  tinygpt::cli::add_plot(app);
  tinygpt::cli::add_import(app);
  tinygpt::cli::add_export(app);
  try {
    std::vector<std::string> names;  // checked here: CLI11 would only say "A subcommand is required"
    for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
    if (argc == 1)
      throw std::invalid_argument(fmt::format("no command given (commands: {}; see tinygpt --help)", fmt::join(names, ", ")));
    if (argv[1][0] != '-' && std::find(names.begin(), names.end(), argv[1]) == names.end())
      throw std::invalid_argument(fmt::format("unknown command '{}' (commands: {}; see tinygpt --help)", argv[1],
                                              fmt::join(names, ", ")));
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    const auto world = tinygpt::train::Communicator::world();
    if (world.size() == 1) {
      fmt::print(stderr, "tinygpt: error: {}\n", e.what());
      return 1;
    }
    // The other ranks would wait for this one forever: end them all now.
    fmt::print(stderr, "tinygpt: error on rank {} of {}: {}\n", world.rank(), world.size(), e.what());
    std::fflush(stderr);
    tinygpt::train::MpiSession::abort_all(1);
  }
  return 0;
}
