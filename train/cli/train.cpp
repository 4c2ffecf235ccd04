// tinygpt train: a new run, or --resume of a saved one.
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <set>

#include "train/cli/commands.h"
#include "train/trainer.h"

namespace tinygpt::cli {

namespace {

struct TrainCommand {
  train::TrainOptions options;
  std::string resume;
  int64_t mpi_timeout = 300;
  CLI::App* cmd = nullptr;

  void run() {
    const auto comm = train::Communicator::world(std::chrono::seconds(mpi_timeout));
    std::unique_ptr<train::Trainer> trainer;
    if (resume.empty()) {
      if (std::filesystem::exists(options.out))
        throw std::invalid_argument(fmt::format("'{}' already exists: continue it with --resume {}, or choose another "
                                                "--out (it is never overwritten by a new run)",
                                                options.out, options.out));
      trainer = std::make_unique<train::Trainer>(options, comm);
    } else {
      trainer = std::make_unique<train::Trainer>(resume, resumed_iters(), comm);
    }
    const auto& t = *trainer;
    const auto& s = t.state();
    if (!comm.is_root()) {  // rank 0 speaks for the run
      std::FILE* quiet = std::fopen("/dev/null", "w");
      train::Progress progress(quiet, false, s.options.log_every);
      train::InterruptWatch interrupt;
      trainer->run(progress, &interrupt);
      std::fclose(quiet);
      return;
    }
    if (comm.size() > 1)
      fmt::print("tinygpt: {} ranks, each {} sequences per micro-batch: {} tokens per iteration\n", comm.size(),
                 s.options.batch, comm.size() * s.options.batch * s.options.block * s.options.grad_accum);
    fmt::print("tinygpt: {} parameters; {} tokenizer, {} tokens; {} training and {} validation tokens\n",
               t.model().parameter_count(), t.corpus().tokenizer->kind(), t.corpus().tokenizer->vocab_size(),
               t.corpus().train.size(), t.corpus().val.size());
    fmt::print("tinygpt: {} at iteration {} of {}; checkpoint {}, log {}\n", resume.empty() ? "starting" : "resuming",
               s.iteration, s.options.iters, s.options.out, t.log_path());
    train::InterruptWatch interrupt;
    train::Progress progress(stdout, isatty(fileno(stdout)), s.options.log_every);
    if (trainer->run(progress, &interrupt) == train::Trainer::Outcome::interrupted) {
      progress.message(fmt::format("tinygpt: stopped by signal {} at iteration {} of {}; checkpoint saved to {}\n"
                                   "tinygpt: continue with: {}tinygpt train --resume {}",
                                   interrupt.signal(), s.iteration, s.options.iters, s.options.out,
                                   comm.size() > 1 ? fmt::format("mpirun -np {} ", comm.size()) : "", s.options.out));
      return;
    }
    progress.message(fmt::format("tinygpt: done: {} iterations, train loss {:.4f}, val loss {:.4f}; checkpoint {}",
                                 s.iteration, s.train_loss, s.val_loss, s.options.out));
  }

  // On resume only --iters may change the run (and the flags that do not touch its numbers).
  std::optional<int64_t> resumed_iters() {
    static const std::set<std::string> allowed = {"iters", "threads", "log-every"};
    train::TrainOptions probe;
    train::for_each_option(probe, [&](const char* name, auto&, const char*) {
      if (cmd->count(std::string("--") + name) > 0 && !allowed.count(name))
        throw std::invalid_argument(fmt::format("--{} cannot change on --resume: the run continues with the settings "
                                                "saved in its checkpoint (only --iters, --threads and --log-every may)",
                                                name));
    });
    return cmd->count("--iters") ? std::optional<int64_t>(options.iters) : std::nullopt;
  }
};

}  // namespace

void add_train(CLI::App& app) {
  auto command = std::make_shared<TrainCommand>();
  CLI::App* cmd = app.add_subcommand("train", "train a GPT on text files (or continue a run with --resume)");
  command->cmd = cmd;
  train::for_each_option(command->options, [&](const char* name, auto& field, const char* help) {
    cmd->add_option(std::string("--") + name, field, help)->capture_default_str();
  });
  cmd->add_option("--resume", command->resume, "continue the run saved in this checkpoint, exactly");
  cmd->add_option("--mpi-timeout", command->mpi_timeout,
                  "under mpirun: seconds a rank waits for the others before it stops the run with an error")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->callback([command] { command->run(); });
}

}  // namespace tinygpt::cli
