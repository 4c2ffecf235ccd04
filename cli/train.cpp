// tinygpt train: a new run, or --resume of a saved one.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "../data/text_files.h"
#include "../inspect/plot.h"
#include "../train/progress.h"
#include "../train/run_data.h"
#include "../train/settings_file.h"
#include "../train/trainer.h"
#include "commands.h"
#include "flags.h"

namespace tinygpt::cli {

namespace {

// Redraws the run's loss plot (SVG) from its log at every evaluation.
class LossPlot : public train::Reporter {
 public:
  LossPlot(std::string log, std::string plot) : log_(std::move(log)), plot_(std::move(plot)) {}
  void evaluation(const train::EvaluationReport&) override { inspect::write_loss_plot({log_}, plot_); }

 private:
  std::string log_, plot_;
};

struct TrainCommand {
  train::TrainOptions options;
  std::string resume, init_from, config;
  bool force = false;
  int64_t mpi_timeout = 300;
  CLI::App* cmd = nullptr;

  // The settings a --config file gave (names without --), beside those on the command line, and
  // the number of ranks of the run it came from.
  std::set<std::string> from_file;
  int64_t file_ranks = 1;

  void read_config() {
    if (config.empty()) return;
    for (const char* start : {"--resume", "--init-from"})
      if (cmd->count(start))
        throw std::invalid_argument(fmt::format("--config starts a new run from a settings file; {} takes its settings "
                                                "from a checkpoint: give one of them",
                                                start));
    const train::SettingsFile file = train::read_settings_file(config, options, given_settings());
    from_file = file.names, file_ranks = file.ranks;
    init_from = file.init_from;  // a fine-tuning run's file starts where that run started
  }

  // A run's batches depend on its number of ranks: a file's run is repeated only with as many.
  void check_config_ranks(const train::Communicator& comm) const {
    if (config.empty() || file_ranks == comm.size()) return;
    const auto launch = [](int64_t ranks) {
      return ranks == 1 ? std::string("without mpirun") : fmt::format("with mpirun -np {}", ranks);
    };
    throw std::invalid_argument(fmt::format(
        "settings file '{}' is of a run of {} rank{}, this one has {}: each rank draws its own batches, so the run "
        "would give other numbers; start it {}",
        config, file_ranks, file_ranks == 1 ? "" : "s", comm.size(), launch(file_ranks)));
  }

  void run() {
    read_config();
    const auto comm = train::Communicator::world(std::chrono::seconds(mpi_timeout));
    check_config_ranks(comm);
    if (!given_settings().count("min-lr")) options.min_lr = options.lr / 10;
    std::vector<std::string> arch_given = given_arch_flags(cmd);
    for (const std::string& name : from_file) arch_given.push_back(name);  // apply_arch looks for its own names
    train::apply_arch(options.arch, arch_given);
    if (comm.is_root()) suggest_prepare();
    std::unique_ptr<train::Trainer> trainer;
    const auto existing = force ? train::ExistingOutputs::replace : train::ExistingOutputs::refuse;
    if (!init_from.empty()) {
      refuse_model_flags();
      train::check_flags_apply(options, given_settings(), train::RunStart::init_from);
      trainer = std::make_unique<train::Trainer>(options, train::InitFrom{init_from, given_settings().count("block") > 0},
                                                 comm, existing);
      trainer->record_given_settings(given_settings());
    } else if (resume.empty()) {
      train::check_flags_apply(options, given_settings(), train::RunStart::fresh);
      trainer = std::make_unique<train::Trainer>(options, comm, existing);
      trainer->record_given_settings(given_settings());
    } else {
      trainer = std::make_unique<train::Trainer>(resume, resumed_changes(), comm);
    }
    train::InterruptWatch interrupt;
    if (!comm.is_root()) {  // rank 0 speaks for the run
      train::Reporter none;
      if (trainer->run(none, &interrupt) == train::Trainer::Outcome::interrupted) throw Stopped{interrupt.signal()};
      return;
    }
    train::Progress progress(stdout, isatty(fileno(stdout)), trainer->state().options.log_every);
    LossPlot plot(trainer->log_path(), trainer->plot_path());
    train::Reporters report{&progress, &plot};
    if (trainer->run(report, &interrupt) == train::Trainer::Outcome::interrupted) throw Stopped{interrupt.signal()};
  }

  // Text is tokenized at every start and resume: past a few hundred MB, shards pay.
  void suggest_prepare() const {
    constexpr double kLargeText = 256e6;  // bytes: about a minute of tokenizing at every start
    const auto bytes = static_cast<double>(data::regular_file_bytes(options.data));
    if (bytes > kLargeText)
      fmt::print("tinygpt: {:.0f} MB of text is tokenized at every start and resume; tokenize it once with `tinygpt "
                 "prepare --data FILES --out DIR` and train with `--data DIR`\n",
                 bytes / 1e6);
  }

  // --init-from takes the model's shape and tokenizer from the checkpoint: flags that would say
  // otherwise are mistakes, not settings to ignore.
  void refuse_model_flags() const {
    if (!resume.empty()) throw std::invalid_argument("--init-from starts a new run; it cannot be given with --resume");
    std::vector<std::string> flags = {"--layers", "--heads", "--embd"};
    for (const std::string& name : given_arch_flags(cmd)) flags.push_back("--" + name);
    for (const std::string& flag : flags)
      if (cmd->count(flag))
        throw std::invalid_argument(fmt::format("{} cannot be given with --init-from: the model's shape and tokenizer "
                                                "come from '{}'",
                                                flag, init_from));
  }

  // The names (without --) of the settings given on this command line.
  std::set<std::string> given_settings() const {
    std::set<std::string> given;
    train::TrainOptions probe;
    train::for_each_option(probe, [&](const char* name, auto&, const char*, const io::Range&, train::Choices) {
      if (cmd->count(std::string("--") + name) > 0 || from_file.count(name)) given.insert(name);
    });
    return given;
  }

  // The settings given with --resume; the trainer refuses those a resume may not change.
  train::Resume resumed_changes() { return {.options = options, .given = given_settings(), .force = force}; }
};

}  // namespace

void add_train(CLI::App& app) {
  auto command = std::make_shared<TrainCommand>();
  CLI::App* cmd = app.add_subcommand("train", "train a GPT on text files (or continue a run with --resume)");
  command->cmd = cmd;
  train::for_each_option(command->options, [&](const char* name, auto& field, const char* help,
                                                const io::Range& range, train::Choices choices) {
    add_option_flag(cmd, name, field, help, range, choices);
  });
  cmd->add_flag("--force", command->force,
                "replace a checkpoint, log or plot that another run left at --out; on --resume, also continue on text "
                "whose bytes changed (recorded in the checkpoint)");
  cmd->add_option("--resume", command->resume, "continue the run saved in this checkpoint, exactly");
  cmd->add_option("--config", command->config,
                  "read the settings from this JSON file (info --config writes a checkpoint's); flags given here win");
  cmd->add_option("--init-from", command->init_from,
                  "start a new run (fine-tuning) from this checkpoint's weights and tokenizer; --block may shrink "
                  "its context");
  add_number(cmd, "--mpi-timeout", command->mpi_timeout, io::Range{1, 86400},
             "under mpirun: seconds a rank waits for the others before it stops the run with an error");
  cmd->callback([command] { command->run(); });
}

}  // namespace tinygpt::cli
