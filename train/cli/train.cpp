// tinygpt train: a new run, or --resume of a saved one.
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <set>
#include <type_traits>

#include "tinygpt/autograd/precision.h"
#include "tinygpt/train/cli/commands.h"
#include "tinygpt/train/cli/flags.h"
#include "tinygpt/train/trainer.h"

namespace tinygpt::cli {

namespace {

struct TrainCommand {
  train::TrainOptions options;
  std::string resume, init_from;
  int64_t mpi_timeout = 300;
  CLI::App* cmd = nullptr;

  void run() {
    const auto comm = train::Communicator::world(std::chrono::seconds(mpi_timeout));
    std::unique_ptr<train::Trainer> trainer;
    if (!init_from.empty()) {
      refuse_model_flags();
      refuse_existing(options.out);
      trainer = std::make_unique<train::Trainer>(options, train::InitFrom{init_from, cmd->count("--block") > 0}, comm);
    } else if (resume.empty()) {
      refuse_existing(options.out);
      trainer = std::make_unique<train::Trainer>(options, comm);
    } else {
      trainer = std::make_unique<train::Trainer>(resume, resumed_changes(), comm);
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
    fmt::print("tinygpt: {} at iteration {} of {}; checkpoint {}, log {}{}\n",
               !init_from.empty() ? fmt::format("fine-tuning {}", init_from) : resume.empty() ? "starting" : "resuming",
               s.iteration, s.options.iters, s.options.out, t.log_path(),
               s.options.precision == "bf16"
                   ? fmt::format("; bf16 products ({})", bf16_native() ? "native AVX512_BF16" : "portable")
                   : "");
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

  // A new run, or a resumed one sent elsewhere, never replaces an existing file.
  static void refuse_existing(const std::string& out) {
    std::error_code ec;
    if (std::filesystem::exists(std::filesystem::symlink_status(out, ec)))
      throw std::invalid_argument(fmt::format("'{}' already exists: continue it with --resume {}, or choose another "
                                              "--out (it is never overwritten by a new run)",
                                              out, out));
  }

  // --init-from takes the model's shape and tokenizer from the checkpoint: flags that would say
  // otherwise are mistakes, not settings to ignore.
  void refuse_model_flags() const {
    if (!resume.empty()) throw std::invalid_argument("--init-from starts a new run; it cannot be given with --resume");
    for (const char* flag : {"--layers", "--heads", "--embd", "--vocab-size", "--tokenizer"})
      if (cmd->count(flag))
        throw std::invalid_argument(fmt::format("{} cannot be given with --init-from: the model's shape and tokenizer "
                                                "come from '{}'",
                                                flag, init_from));
  }

  // On resume only --iters, --out, --threads and --log-every may be given (they do not change the
  // run's numbers); the run writes to the checkpoint it continues unless --out names a new file.
  train::Resume resumed_changes() {
    static const std::set<std::string> allowed = {"iters", "out", "threads", "log-every"};
    train::TrainOptions probe;
    train::for_each_option(probe, [&](const char* name, auto&, const char*, const train::Range&) {
      if (cmd->count(std::string("--") + name) > 0 && !allowed.count(name))
        throw std::invalid_argument(fmt::format("--{} cannot change on --resume: the run continues with the settings "
                                                "saved in its checkpoint (only --iters, --out, --threads and "
                                                "--log-every may be given)",
                                                name));
    });
    train::Resume changes;
    if (cmd->count("--iters")) changes.iters = options.iters;
    if (cmd->count("--threads")) changes.threads = options.threads;
    if (cmd->count("--log-every")) changes.log_every = options.log_every;
    if (cmd->count("--out")) {
      std::error_code ec;
      if (!std::filesystem::equivalent(options.out, resume, ec)) refuse_existing(options.out);
      changes.out = options.out;
    }
    return changes;
  }
};

}  // namespace

void add_train(CLI::App& app) {
  auto command = std::make_shared<TrainCommand>();
  CLI::App* cmd = app.add_subcommand("train", "train a GPT on text files (or continue a run with --resume)");
  command->cmd = cmd;
  train::for_each_option(command->options, [&](const char* name, auto& field, const char* help,
                                                const train::Range& range) {
    if constexpr (std::is_arithmetic_v<std::decay_t<decltype(field)>>)
      add_number(cmd, std::string("--") + name, field, range, help);
    else
      cmd->add_option(std::string("--") + name, field, help)->capture_default_str();
  });
  cmd->add_option("--resume", command->resume, "continue the run saved in this checkpoint, exactly");
  cmd->add_option("--init-from", command->init_from,
                  "start a new run (fine-tuning) from this checkpoint's weights and tokenizer; --block may shrink "
                  "its context");
  add_number(cmd, "--mpi-timeout", command->mpi_timeout, train::Range{1, 86400},
             "under mpirun: seconds a rank waits for the others before it stops the run with an error");
  cmd->callback([command] { command->run(); });
}

}  // namespace tinygpt::cli
