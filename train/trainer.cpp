#include "tinygpt/train/trainer.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "tinygpt/autograd/graph.h"
#include "tinygpt/autograd/parallel.h"
#include "tinygpt/autograd/precision.h"
#include "tinygpt/optim/grad_clip.h"
#include "tinygpt/train/memory_budget.h"
#include "tinygpt/train/output_files.h"
#include "tinygpt/train/plot.h"
#include "tinygpt/train/run_log.h"

namespace tinygpt::train {

namespace {

data::CorpusOptions corpus_options(const TrainOptions& o) {
  return {.files = training_files(o), .val_files = o.val_data, .val_fraction = o.val_fraction,
          .tokenizer = o.tokenizer, .vocab_size = o.vocab_size};
}

nn::GPTConfig model_config(const TrainOptions& o, int64_t vocab_size) {
  return {.vocab_size = vocab_size, .block_size = o.block, .n_layer = o.layers, .n_head = o.heads, .n_embd = o.embd,
          .dropout = static_cast<float>(o.dropout)};
}

optim::AdamWOptions adamw_options(const TrainOptions& o) {
  return {.lr = static_cast<float>(o.lr), .weight_decay = static_cast<float>(o.weight_decay)};
}

// Before any work: the checkpoint, its log and its plot can be written where they are to go.
void check_outputs(const std::string& checkpoint, const std::string& log, const std::string& plot) {
  if (checkpoint == log || checkpoint == plot)
    throw std::invalid_argument(fmt::format("--out '{}' would be its own log or plot (they take its name with .csv "
                                            "and .svg): choose a name ending in .h5",
                                            checkpoint));
  check_output_path(checkpoint, OutputKind::hdf5);
  check_output_path(log, OutputKind::log);
  check_output_path(plot, OutputKind::svg);
}

// A log with its header and `rows` (as written before), replacing the file.
void write_log(const std::string& path, const std::vector<std::string>& rows) {
  std::string text = std::string(kLogHeader) + "\n";
  for (const std::string& row : rows) text += row + "\n";
  write_output_file(path, OutputKind::log, text);
}

void check_enough_tokens(const data::Corpus& c, const TrainOptions& o) {
  if (c.train.size() < o.block + 1)
    throw std::invalid_argument(fmt::format("the training text has {} tokens; --block {} needs at least {}",
                                            c.train.size(), o.block, o.block + 1));
  if (c.val.size() > 0 && c.val.size() < o.block + 1)
    throw std::invalid_argument(fmt::format("the validation text has {} tokens; --block {} needs at least {} "
                                            "(give more text, a larger --val-fraction, or --val-fraction 0)",
                                            c.val.size(), o.block, o.block + 1));
}

// The memory a run needs: the model's training state and the token arrays of its text.
void require_run_memory(const nn::GPTConfig& config, const TrainOptions& o) {
  require_memory(training_bytes(config, o.batch, AttentionMemory::automatic) + corpus_bytes(training_files(o)) +
                     corpus_bytes(o.val_data),
                 "this run");
}

// Rank r's seed for its batches and dropout masks; rank 0 keeps the run's seed, so one process
// trains exactly as before.
uint64_t rank_seed(int64_t seed, int rank) {
  return rank == 0 ? static_cast<uint64_t>(seed) : splitmix64(static_cast<uint64_t>(seed) + 0x9e37ULL * rank);
}

}  // namespace

Trainer::Trainer(const TrainOptions& options, Communicator comm) : comm_(comm), options_(options) {
  validate(options_);
  set_num_threads(static_cast<int>(options_.threads));
  if (comm_.is_root()) check_outputs(options_.out, log_path(), plot_path());
  require_run_memory(model_config(options_, 1), options_);  // before reading data; below with the vocabulary
  corpus_ = data::load_corpus(corpus_options(options_));
  check_enough_tokens(corpus_, options_);
  require_run_memory(model_config(options_, corpus_.tokenizer->vocab_size()), options_);
  start(std::make_shared<nn::GPT>(model_config(options_, corpus_.tokenizer->vocab_size()),
                                  static_cast<uint64_t>(options_.seed)));
}

Trainer::Trainer(const TrainOptions& options, const InitFrom& init, Communicator comm) : comm_(comm), options_(options) {
  Checkpoint ck = read_checkpoint(init.checkpoint);
  const nn::GPTConfig& c = ck.config;
  if (init.crop_block && options_.block > c.block_size)
    throw std::invalid_argument(fmt::format("--block {} is longer than the context of '{}' ({} tokens): it can "
                                            "shrink the context, never grow it",
                                            options_.block, init.checkpoint, c.block_size));
  // The run's options describe the model it trains (a resume reads them back).
  options_.layers = c.n_layer, options_.heads = c.n_head, options_.embd = c.n_embd;
  if (!init.crop_block) options_.block = c.block_size;
  options_.tokenizer = ck.tokenizer->kind();
  if (options_.tokenizer == "bpe") options_.vocab_size = ck.tokenizer->vocab_size();
  validate(options_);
  set_num_threads(static_cast<int>(options_.threads));
  if (comm_.is_root()) check_outputs(options_.out, log_path(), plot_path());
  nn::GPTConfig config = c;
  config.block_size = options_.block;
  config.dropout = static_cast<float>(options_.dropout);
  require_run_memory(config, options_);
  corpus_ = data::load_corpus(corpus_options(options_), ck.tokenizer);
  check_enough_tokens(corpus_, options_);
  auto model = nn::GPT::unwritten(config);  // every parameter is copied below
  auto source = ck.model->named_parameters();
  auto target = model->named_parameters();
  for (size_t k = 0; k < target.size(); ++k) {  // the same names in the same order; wpe keeps its first rows
    const Tensor& from = source[k].second;
    std::copy(from.data(), from.data() + target[k].second.numel(), target[k].second.data());
  }
  ck.model.reset();
  start(std::move(model));
}

void Trainer::start(std::shared_ptr<nn::GPT> model) {
  model_ = std::move(model);
  optimizer_ = std::make_unique<optim::AdamW>(model_->named_parameters(), adamw_options(options_));
  state_.options = options_;
  model_->set_dropout_seed(rank_seed(options_.seed, comm_.rank()));
  state_.sampler_states.clear();
  for (int r = 0; r < comm_.size(); ++r) state_.sampler_states.push_back(Rng(rank_seed(options_.seed, r)).state());
  state_.val_loss = NAN;
  prepare();
  if (comm_.is_root()) write_log(log_path(), {});
}

Trainer::Trainer(const std::string& path, const Resume& changes, Communicator comm) : comm_(comm) {
  Checkpoint ck = read_checkpoint(path);
  if (!ck.train || !ck.optim)
    throw std::invalid_argument(fmt::format("checkpoint '{}' holds no training state to resume", path));
  state_ = *ck.train;
  const auto world = static_cast<int>(state_.sampler_states.size());
  if (world != comm_.size())
    throw std::invalid_argument(fmt::format(
        "checkpoint '{}' was written by a run of {} process{}, this one has {}: resume it with {} (each rank's "
        "batch sampler continues where it stopped, which needs the same number of ranks)",
        path, world, world == 1 ? "" : "es", comm_.size(),
        world == 1 ? "tinygpt train --resume, without mpirun" : fmt::format("mpirun -np {}", world)));
  if (changes.iters) state_.options.iters = *changes.iters;
  if (changes.threads) state_.options.threads = *changes.threads;
  if (changes.log_every) state_.options.log_every = *changes.log_every;
  state_.options.out = changes.out.empty() ? path : changes.out;
  options_ = state_.options;
  validate(options_);
  set_num_threads(static_cast<int>(options_.threads));
  if (state_.iteration > options_.iters)
    throw std::invalid_argument(fmt::format("the checkpoint is at iteration {}, past --iters {}", state_.iteration,
                                            options_.iters));
  const std::string old_log = std::filesystem::path(path).replace_extension(".csv").string();
  if (comm_.is_root()) check_outputs(options_.out, log_path(), plot_path());
  require_run_memory(ck.config, options_);
  corpus_ = data::load_corpus(corpus_options(options_), ck.tokenizer);
  if (corpus_.train.size() != state_.train_tokens || corpus_.val.size() != state_.val_tokens)
    throw std::invalid_argument(fmt::format(
        "the data changed since the checkpoint: {} training and {} validation tokens then, {} and {} now",
        state_.train_tokens, state_.val_tokens, corpus_.train.size(), corpus_.val.size()));
  check_enough_tokens(corpus_, options_);
  model_ = ck.model;
  model_->set_dropout(static_cast<float>(options_.dropout));
  model_->set_dropout_seed(rank_seed(options_.seed, comm_.rank()));
  model_->set_dropout_counter(state_.dropout_counter);
  optimizer_ = std::make_unique<optim::AdamW>(model_->named_parameters(), *ck.optim);
  optimizer_->set_steps(ck.optim_step);
  for (auto& s : optimizer_->state()) s.m.copy_from_(ck.m.at(s.name)), s.v.copy_from_(ck.v.at(s.name));
  prepare();
  if (!comm_.is_root()) return;
  // The log keeps its rows up to the checkpoint; later ones belong to the run that was cut short.
  std::vector<std::string> kept;
  if (std::filesystem::exists(old_log))
    for (const LogLine& line : read_log_lines(old_log))
      if (line.row.iter <= state_.iteration) kept.push_back(line.text);
  write_log(log_path(), kept);
}

void Trainer::prepare() {
  parameters_ = model_->parameters();
  sampler_ = std::make_unique<data::BatchSampler>(corpus_.train, options_.batch, options_.block, 0);
  sampler_->set_state(state_.sampler_states.at(static_cast<size_t>(comm_.rank())));
  schedule_ = {.lr = static_cast<float>(options_.lr), .min_lr = static_cast<float>(options_.min_lr),
               .warmup = options_.warmup, .decay_iters = options_.iters};
  state_.train_tokens = corpus_.train.size();
  state_.val_tokens = corpus_.val.size();
}

std::string Trainer::log_path() const {
  return std::filesystem::path(options_.out).replace_extension(".csv").string();
}

std::string Trainer::plot_path() const {
  return std::filesystem::path(options_.out).replace_extension(".svg").string();
}

double Trainer::train_step(float lr) {
  const PrecisionGuard precision(parse_precision(options_.precision));  // the products; all else stays float
  model_->zero_grad();
  double loss_sum = 0;
  for (int64_t micro = 0; micro < options_.grad_accum; ++micro) {
    sampler_->next(inputs_, targets_);
    Tensor loss = model_->forward(inputs_, options_.batch, options_.block, targets_).loss;
    loss_sum += loss.item();
    // The mean over micro-batches: each one's gradient counts 1 / grad_accum.
    (options_.grad_accum > 1 ? loss * (1.0f / static_cast<float>(options_.grad_accum)) : loss).backward();
  }
  comm_.average_gradients(parameters_, flat_grads_);  // several ranks: the mean of their gradients
  const double loss = comm_.mean(loss_sum / static_cast<double>(options_.grad_accum));
  const float norm = optim::global_grad_norm(parameters_);  // the same on every rank: all stop together
  if (!std::isfinite(loss) || !std::isfinite(norm))
    throw std::runtime_error(fmt::format(
        "the training {} became {} at iteration {}: the run stops here, without saving over '{}' (a lower --lr or a "
        "--grad-clip may help)",
        std::isfinite(loss) ? "gradient norm" : "loss", std::isfinite(loss) ? norm : loss, state_.iteration + 1,
        options_.out));
  optimizer_->set_lr(lr);
  optimizer_->step(lr, options_.grad_clip > 0 ? optim::clip_scale(norm, options_.grad_clip) : 1.0f);
  return loss;
}

double Trainer::estimate_val_loss() {
  if (corpus_.val.size() == 0) return NAN;
  NoGradGuard no_grad;
  const PrecisionGuard precision(parse_precision(options_.precision));
  model_->eval();
  // Seeded by the iteration, so that a resumed run evaluates on the same batches.
  data::BatchSampler val(corpus_.val, options_.batch, options_.block,
                         splitmix64(rank_seed(options_.seed, comm_.rank()) ^ static_cast<uint64_t>(state_.iteration)));
  std::vector<int32_t> x, y;
  double sum = 0;
  for (int64_t i = 0; i < options_.eval_iters; ++i) {
    val.next(x, y);
    sum += model_->forward(x, options_.batch, options_.block, y).loss.item();
  }
  model_->train();
  return comm_.mean(sum / static_cast<double>(options_.eval_iters));
}

void Trainer::save() {
  state_.sampler_states = comm_.all_gather(sampler_->state());
  state_.dropout_counter = model_->dropout_counter();
  if (comm_.is_root()) write_checkpoint(options_.out, *model_, *corpus_.tokenizer, optimizer_.get(), &state_);
}

Trainer::Outcome Trainer::run(Progress& progress, const InterruptWatch* interrupt, int64_t pause_at) {
  std::ofstream log;
  if (comm_.is_root()) {
    log.open(log_path(), std::ios::app);
    if (!log) throw std::runtime_error(fmt::format("cannot write the log '{}'", log_path()));
  }
  const double seconds_before = state_.seconds;
  const auto start = std::chrono::steady_clock::now();
  const int64_t tokens_per_step = options_.batch * options_.block * options_.grad_accum * comm_.size();
  while (state_.iteration < options_.iters) {
    const auto t0 = std::chrono::steady_clock::now();
    const float lr = schedule_.at(state_.iteration);
    state_.train_loss = train_step(lr);
    ++state_.iteration;
    state_.tokens_seen += tokens_per_step;
    const double step_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    state_.seconds = seconds_before + std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::optional<double> val;
    if (state_.iteration % options_.eval_every == 0 || state_.iteration == options_.iters) {
      val = estimate_val_loss();
      if (corpus_.val.size() > 0 && !std::isfinite(*val))
        throw std::runtime_error(fmt::format("the validation loss became {} at iteration {}: the run stops here, "
                                             "without saving over '{}'", *val, state_.iteration, options_.out));
      state_.val_loss = *val;
      if (comm_.size() > 1)  // cheap insurance that the ranks still apply the same updates
        comm_.require_same(parameter_checksum(parameters_),
                           fmt::format("parameter checksums at iteration {}", state_.iteration));
    }
    const double tokens_per_s = tokens_per_step / step_s;
    const bool stop = comm_.any(interrupt && interrupt->requested()) || state_.iteration == pause_at;
    if (stop || state_.iteration % options_.ckpt_every == 0 || state_.iteration == options_.iters) save();
    if (!comm_.is_root()) {
      if (stop) return Outcome::interrupted;
      continue;
    }
    log << format_log_row({state_.iteration, state_.train_loss, val, lr, tokens_per_s, state_.seconds}) << '\n';
    log.flush();
    if (val) write_loss_plot({log_path()}, plot_path());  // a fresh picture at every evaluation
    progress.step({state_.iteration, options_.iters, state_.train_loss, lr, tokens_per_s, state_.seconds, val});
    if (stop) return Outcome::interrupted;
  }
  return Outcome::finished;
}

}  // namespace tinygpt::train
