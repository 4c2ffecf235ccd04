// tinygpt: train a small GPT on text, resume it, evaluate it, sample from it.
// Exit status: 0 when the command did all it was asked; 1 on any error (one line on stderr,
// "tinygpt: error: ..."); 128 + the signal when a run was stopped by one after saving (130 for
// Ctrl-C, 143 for SIGTERM).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <exception>
#include <string>
#include <vector>

#include "commands.h"
#include "../data/utf8.h"
#include "../train/distributed.h"
#include "../train/options.h"

namespace {

// The message for words CLI11 did not expect: the first flag that `command` does not have, with the
// nearest one it has ("unknown flag --iter (did you mean --iters?)"), or the stray value.
std::string unexpected(const CLI::App& command, const std::vector<std::string>& words) {
  std::vector<std::string> flags;
  for (const CLI::Option* o : command.get_options())
    for (const std::string& name : o->get_lnames()) flags.push_back("--" + name);
  for (const std::string& word : words) {
    if (!word.starts_with("-")) continue;
    const std::string flag = word.substr(0, word.find('='));
    if (std::find(flags.begin(), flags.end(), flag) != flags.end()) continue;
    const std::string nearest = tinygpt::train::nearest_name(flag, flags);
    return fmt::format("unknown flag {}{}; see tinygpt {} --help", flag,
                       nearest.empty() ? "" : fmt::format(" (did you mean {}?)", nearest), command.get_name());
  }
  for (const std::string& word : words)
    if (!word.starts_with("-"))
      return fmt::format("unexpected value '{}': every value follows its flag (see tinygpt {} --help)", word,
                         command.get_name());
  return "unexpected arguments";
}

// One line in tinygpt's words for a command line CLI11 refused.
std::string parse_problem(const CLI::App& app, const CLI::ParseError& e, int argc, char** argv) {
  const CLI::App* command = argc > 1 && argv[1][0] != '-' ? app.get_subcommand(argv[1]) : nullptr;
  if (command && dynamic_cast<const CLI::ExtrasError*>(&e)) return unexpected(*command, {argv + 2, argv + argc});
  return command ? fmt::format("{} (see tinygpt {} --help)", e.what(), command->get_name())
                 : fmt::format("{} (see tinygpt --help)", e.what());
}

}  // namespace

int main(int argc, char** argv) {
  // Under mpirun: one rank of a data-parallel run (train, bench); otherwise MPI is never started.
  tinygpt::train::MpiSession mpi(argc, argv);
  CLI::App app{"tinygpt: train a small GPT on a CPU, evaluate it and sample from it", "tinygpt"};
  app.set_version_flag("--version", "tinygpt " TINYGPT_VERSION);
  app.require_subcommand(1);
  tinygpt::cli::add_prepare(app);
  tinygpt::cli::add_train(app);
  tinygpt::cli::add_eval(app);
  tinygpt::cli::add_sample(app);
  tinygpt::cli::add_info(app);
  tinygpt::cli::add_bench(app);
  tinygpt::cli::add_tokens(app);
  tinygpt::cli::add_attention(app);
  tinygpt::cli::add_plot(app);
  tinygpt::cli::add_explain(app);
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
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "tinygpt: error: {}\n", tinygpt::data::printable(parse_problem(app, e, argc, argv)));
    return 1;
  } catch (const tinygpt::cli::Stopped& stopped) {
    return 128 + stopped.signal;  // the command said what it saved and how to go on
  } catch (const std::exception& e) {
    const auto world = tinygpt::train::Communicator::world();
    if (world.size() == 1) {
      // One line, whatever a file put into the message: its control characters shown escaped.
      fmt::print(stderr, "tinygpt: error: {}\n", tinygpt::data::printable(e.what()));
      return 1;
    }
    // The other ranks would wait for this one forever: end them all now.
    fmt::print(stderr, "tinygpt: error on rank {} of {}: {}\n", world.rank(), world.size(),
               tinygpt::data::printable(e.what()));
    std::fflush(stderr);
    tinygpt::train::MpiSession::abort_all(1);
  }
  return 0;
}
