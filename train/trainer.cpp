#include "trainer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "../autograd/graph.h"
#include "../data/shards.h"
#include "../io/sentencepiece_model.h"
#include "../autograd/threads.h"
#include "../autograd/precision.h"
#include "../optim/grad_clip.h"
#include "memory_budget.h"
#include "../io/output_files.h"
#include "existing_outputs.h"
#include "run_data.h"
#include "../autograd/machine.h"
#include "../io/run_log.h"
#include "../io/run_metrics.h"
#include "step_stats.h"
#include "../nn/sampling.h"

namespace tinygpt::train {

namespace {

nn::GPTConfig model_config(const TrainOptions& o, int64_t vocab_size) {
  return with_arch({.vocab_size = vocab_size, .block_size = o.block, .n_layer = o.layers, .n_head = o.heads,
                    .n_embd = o.embd, .dropout = static_cast<float>(o.dropout)},
                   o.arch);
}

optim::AdamWOptions adamw_options(const TrainOptions& o) {
  return {.lr = static_cast<float>(o.lr), .beta1 = o.beta1, .beta2 = o.beta2,
          .weight_decay = static_cast<float>(o.weight_decay)};
}

// The text files with absolute paths, so that the stored run finds them from any folder.
std::vector<std::string> absolute_paths(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const std::string& p : paths) out.push_back(std::filesystem::absolute(p).lexically_normal().string());
  return out;
}

// Every file a new run reads, with absolute paths: the stored settings (and info --config's file)
// name them from any folder.
void make_inputs_absolute(TrainOptions& o) {
  o.data = absolute_paths(o.data), o.val_data = absolute_paths(o.val_data);
  for (std::string* file : {&o.tokenizer_from, &o.tokenizer_model, &o.eval_task})
    if (!file->empty()) *file = absolute_paths({*file}).front();
}

// A setting's value as the command line writes it.
template <class T>
std::string flag_text(const T& value) {
  if constexpr (std::is_same_v<T, bool>) return value ? "on" : "off";
  else if constexpr (std::is_enum_v<T>) return name(value);  // nn's or options.h's name()
  else if constexpr (std::is_same_v<T, std::vector<std::string>>) return fmt::format("{}", fmt::join(value, " "));
  else return fmt::format("{}", value);
}

// A log with its header and `rows` (as written before), replacing the file.
void write_log(const std::string& path, const std::vector<std::string>& rows) {
  std::string text = std::string(io::kLogHeader) + "\n";
  for (const std::string& row : rows) text += row + "\n";
  io::write_output_file(path, io::OutputKind::log, text);
}
void write_metrics(const std::string& path, const std::vector<std::string>& lines) {
  std::string text = std::string(io::kMetricsHeader) + "\n";
  for (const std::string& line : lines) text += line + "\n";
  io::write_output_file(path, io::OutputKind::metrics, text);
}

// Appends a line to a log file opened by run(), or throws naming it.
void append_line(std::ofstream& file, const std::string& path, const std::string& line) {
  file << line << '\n';
  if (!file.flush()) throw std::runtime_error(fmt::format("cannot write '{}': {}", path, std::strerror(errno)));
}

void check_enough_tokens(const data::Corpus& c, const TrainOptions& o) {
  if (c.train.size() < o.block + 1)
    throw std::invalid_argument(fmt::format("the training text has {} tokens; --block {} needs at least {}",
                                            c.train.size(), o.block, o.block + 1));
  // No validation is asked only by --val-fraction 0 without --val-data: an empty split otherwise
  // (an empty val shard, a text without tokens) would log a loss of nan at every evaluation.
  const bool validation_asked = o.val_fraction > 0 || !o.val_data.empty();
  if ((c.val.size() > 0 || validation_asked) && c.val.size() < o.block + 1)
    throw std::invalid_argument(fmt::format("the validation {} of {} has {} tokens; --block {} needs at least {} "
                                            "(give more text, a larger --val-fraction, or --val-fraction 0)",
                                            o.val_data.empty() ? "split" : "text",
                                            fmt::join(o.val_data.empty() ? training_files(o) : o.val_data, ", "),
                                            c.val.size(), o.block, o.block + 1));
  const std::vector<std::string> folders = training_files(o);
  for (size_t k = 0; k < c.train_sources.size(); ++k) {
    // Each folder's own validation tokens, when validation is not a text (or folder) of its own.
    std::vector<std::pair<const char*, const data::TokenArray*>> splits = {{"training", &c.train_sources[k]}};
    if (k < c.val_sources.size()) splits.emplace_back("validation", &c.val_sources[k]);
    for (const auto& [split, tokens] : splits)
      if ((tokens->size() > 0 || std::string_view(split) == "training") && tokens->size() < o.block + 1)
        throw std::invalid_argument(fmt::format("the {} tokens of '{}' are {}; --block {} needs at least {} in each "
                                                "folder mixed by --data-weights",
                                                split, folders.at(k), tokens->size(), o.block, o.block + 1));
  }
}

// A sampler of the validation windows: over the mixed folders' validation tokens that exist, by
// their weights, or over the whole validation text.
std::unique_ptr<data::BatchSampler> validation_sampler(const data::Corpus& c, const TrainOptions& o, uint64_t seed) {
  if (c.val_sources.empty()) return std::make_unique<data::BatchSampler>(c.val, o.batch, o.block, seed);
  std::vector<const data::TokenArray*> sources;
  std::vector<double> weights;
  for (size_t k = 0; k < c.val_sources.size(); ++k)
    if (c.val_sources[k].size() > 0) sources.push_back(&c.val_sources[k]), weights.push_back(c.weights.at(k));
  return std::make_unique<data::BatchSampler>(sources, weights, o.batch, o.block, seed);
}

// The memory a run needs: the model's training state and the token arrays of its text.
MemoryPlan run_memory_plan(const nn::GPTConfig& config, const TrainOptions& o) {
  return training_memory_plan(config, {.batch = o.batch,
                                       .attention = AttentionMemory::automatic,
                                       .samples = o.sample_every > 0,
                                       .data_bytes = corpus_bytes(training_files(o)) + corpus_bytes(o.val_data)});
}

void require_run_memory(const nn::GPTConfig& config, const TrainOptions& o) {
  require_memory(run_memory_plan(config, o).total(), "this run");
}

// How many tokens --sample-every's samples have, as llm.c's.
constexpr int64_t kSampleTokens = 64;

// Rank r's seed for its batches and dropout masks; rank 0 keeps the run's seed, so one process
// trains exactly as before.
uint64_t rank_seed(int64_t seed, int rank) {
  return rank == 0 ? static_cast<uint64_t>(seed) : splitmix64(static_cast<uint64_t>(seed) + 0x9e37ULL * rank);
}

// The run's process settings: threads, and the kernels of bf16 products (throws for native where the
// CPU lacks AVX512_BF16, before any work).
void apply_process_settings(const TrainOptions& o) {
  set_num_threads(static_cast<int>(o.threads));
  set_bf16_kernels(o.bf16_kernels);
}

}  // namespace

Trainer::Trainer(const TrainOptions& options, Communicator comm, ExistingOutputs existing)
    : comm_(comm), options_(options) {
  validate(options_);
  make_inputs_absolute(options_);
  apply_process_settings(options_);
  claim_outputs(Claim::others, existing);
  require_run_memory(model_config(options_, 1), options_);  // before reading data; below with the vocabulary
  corpus_ = load_run_corpus(options_, nullptr, "");
  options_.tokenizer = corpus_.tokenizer->kind();  // shards and --tokenizer-from bring their own
  if (options_.tokenizer == data::TokenizerKind::bpe) options_.vocab_size = corpus_.tokenizer->vocab_size();
  check_enough_tokens(corpus_, options_);
  require_run_memory(model_config(options_, corpus_.tokenizer->vocab_size()), options_);
  start(std::make_shared<nn::GPT>(model_config(options_, corpus_.tokenizer->vocab_size()),
                                  static_cast<uint64_t>(options_.seed)));
}

Trainer::Trainer(const TrainOptions& options, const InitFrom& init, Communicator comm, ExistingOutputs existing)
    : comm_(comm), options_(options) {
  Checkpoint ck = read_checkpoint(init.checkpoint);
  const nn::GPTConfig& c = ck.config;
  if (init.crop_block && options_.block > c.block_size)
    throw std::invalid_argument(fmt::format("--block {} is longer than the context of '{}' ({} tokens): it can "
                                            "shrink the context, never grow it",
                                            options_.block, init.checkpoint, c.block_size));
  // The run's options describe the model it trains (a resume reads them back).
  options_.layers = c.n_layer, options_.heads = c.n_head, options_.embd = c.n_embd;
  options_.arch = arch_of(c);
  if (!init.crop_block) options_.block = c.block_size;
  options_.tokenizer = ck.tokenizer->kind(), options_.tokenizer_from = init.checkpoint, options_.tokenizer_model.clear();
  if (options_.tokenizer == data::TokenizerKind::bpe) options_.vocab_size = ck.tokenizer->vocab_size();
  validate(options_);
  make_inputs_absolute(options_);
  apply_process_settings(options_);
  claim_outputs(Claim::others, existing, {init.checkpoint});
  nn::GPTConfig config = c;
  config.block_size = options_.block;
  config.dropout = static_cast<float>(options_.dropout);
  require_run_memory(config, options_);
  corpus_ = load_run_corpus(options_, ck.tokenizer, fmt::format("the checkpoint '{}'", init.checkpoint));
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
  state_.init_from = std::filesystem::absolute(init.checkpoint).lexically_normal().string();
}

namespace {

// The snapshots of `out` every `every` iterations up to `iters` that already exist: a folder
// listing, since a run may plan more snapshots than it is worth asking about one by one.
std::vector<std::string> existing_snapshots(const std::string& out, int64_t every, int64_t iters) {
  std::vector<std::string> found;
  if (every <= 0) return found;
  const std::filesystem::path path(out), folder = path.has_parent_path() ? path.parent_path() : ".";
  const std::string prefix = path.stem().string() + ".step";
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(folder, error)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(prefix) || !name.ends_with(".h5")) continue;
    const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - 3);
    int64_t it = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), it);
    if (ec == std::errc() && end == digits.data() + digits.size() && it > 0 && it <= iters && it % every == 0)
      found.push_back(snapshot_path_for(out, it));
  }
  return found;
}

}  // namespace

// Rank 0 takes the run's lock first, then checks that the checkpoint, log, plot and best
// checkpoint can go where they are to go: never over a file of another kind, and over another
// run's files only when `existing` says replace. A resume in place (Claim::own) continues its own files.
void Trainer::claim_outputs(Claim claim, ExistingOutputs existing, const std::vector<std::string>& read) {
  if (!comm_.is_root()) return;
  const std::string& out = options_.out;
  if (out == log_path() || out == plot_path() || out == best_path() || out == metrics_path())
    throw std::invalid_argument(fmt::format("--out '{}' would be its own log, metrics, plot or best checkpoint (they "
                                            "take its name with .csv, .jsonl, .svg and .best.h5): choose a name ending in .h5",
                                            out));
  io::check_output_path(out, io::OutputKind::hdf5);
  if (!lock_.held()) lock_ = RunLock(out);
  std::vector<std::pair<std::string, io::OutputKind>> outputs = {
      {out, io::OutputKind::hdf5},
      {log_path(), io::OutputKind::log},
      {metrics_path(), io::OutputKind::metrics},
      {plot_path(), io::OutputKind::svg}};
  if (options_.keep_best) outputs.push_back({best_path(), io::OutputKind::hdf5});
  for (const std::string& snapshot : existing_snapshots(out, options_.snapshot_every, options_.iters))
    outputs.push_back({snapshot, io::OutputKind::hdf5});
  // Everything the run reads: its text (shard folders' files), the tokenizer's sources, a checkpoint.
  Replacing how{.force = existing == ExistingOutputs::replace, .inputs = training_files(options_), .flag = "--out"};
  how.inputs.insert(how.inputs.end(), options_.val_data.begin(), options_.val_data.end());
  how.inputs.insert(how.inputs.end(), {options_.tokenizer_from, options_.tokenizer_model});
  how.inputs.insert(how.inputs.end(), read.begin(), read.end());
  for (const auto& [path, kind] : outputs) {
    if (claim == Claim::own) {
      io::refuse_own_input(path, how.inputs, "--out");
      io::check_output_path(path, kind);
    } else {
      refuse_replacing(path, kind, how);
    }
  }
}

void Trainer::start(std::shared_ptr<nn::GPT> model) {
  model_ = std::move(model);
  optimizer_ = std::make_unique<optim::AdamW>(model_->named_parameters(), adamw_options(options_));
  state_.options = options_;
  model_->set_dropout_seed(rank_seed(options_.seed, comm_.rank()));
  state_.sampler_states.clear();
  for (int r = 0; r < comm_.size(); ++r) state_.sampler_states.push_back(Rng(rank_seed(options_.seed, r)).state());
  state_.val_loss = NAN;
  state_.data_files = identify_data(training_files(options_), options_.val_data);
  prepare();
  if (comm_.is_root()) write_log(log_path(), {}), write_metrics(metrics_path(), {});
}

Trainer::Trainer(const std::string& path, const Resume& changes, Communicator comm) : comm_(comm) {
  options_.out = changes.given.count("out") ? changes.options.out : path;
  std::error_code ec;
  const auto normal = [](const std::string& p) { return std::filesystem::absolute(p).lexically_normal(); };
  const bool in_place = !changes.given.count("out") || normal(options_.out) == normal(path) ||
                        std::filesystem::equivalent(options_.out, path, ec);
  if (comm_.is_root() && in_place) lock_ = RunLock(options_.out);  // before reading: no run is writing it
  Checkpoint ck = read_checkpoint(path);
  if (!ck.train || !ck.optim)
    throw std::invalid_argument(fmt::format("checkpoint '{}' holds no training state to resume", path));
  state_ = *ck.train;
  checkpoint_saved_ = in_place;  // the file resumed from is the one a stop keeps
  const auto world = static_cast<int>(state_.sampler_states.size());
  if (world != comm_.size())
    throw std::invalid_argument(fmt::format(
        "checkpoint '{}' was written by a run of {} process{}, this one has {}: resume it with {} (each rank's "
        "batch sampler continues where it stopped, which needs the same number of ranks)",
        path, world, world == 1 ? "" : "es", comm_.size(),
        world == 1 ? "tinygpt train --resume, without mpirun" : fmt::format("mpirun -np {}", world)));
  state_.options.beta1 = ck.optim->beta1, state_.options.beta2 = ck.optim->beta2;  // the moments' own
  apply(changes);
  state_.options.out = changes.given.count("out") ? changes.options.out : path;
  options_ = state_.options;
  validate(options_);
  apply_process_settings(options_);
  if (state_.iteration > options_.iters)
    throw std::invalid_argument(fmt::format("the checkpoint is at iteration {}, past --iters {}", state_.iteration,
                                            options_.iters));
  const std::string old_log = log_path_for(path), old_metrics = metrics_path_for(path);
  if (in_place) {
    if (comm_.is_root()) claim_outputs(Claim::own, ExistingOutputs::refuse);
  } else {
    claim_outputs(Claim::others, changes.force ? ExistingOutputs::replace : ExistingOutputs::refuse, {path});
  }
  require_run_memory(ck.config, options_);
  const std::string owner = fmt::format("the checkpoint '{}'", path);
  check_folders_tokenizer(options_, *ck.tokenizer, owner);  // before the bytes: a tokenizer never changes
  check_data({.data_given = changes.given.count("data") > 0 || changes.given.count("val-data") > 0, .force = changes.force});
  corpus_ = load_run_corpus(options_, ck.tokenizer, owner);
  if (!changes.force && (corpus_.train.size() != state_.train_tokens || corpus_.val.size() != state_.val_tokens))
    throw std::invalid_argument(fmt::format(
        "the data changed since the checkpoint: {} training and {} validation tokens then, {} and {} now (give "
        "--force to continue on it)",
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
  // Rows are written again in this log's columns (a log of fewer columns gains empty ones).
  std::vector<std::string> kept;
  if (std::filesystem::exists(old_log))
    for (const io::LogLine& line : io::read_log_lines(old_log))
      if (line.row.iter <= state_.iteration) kept.push_back(io::format_log_row(line.row));
  write_log(log_path(), kept);
  std::vector<std::string> kept_metrics;
  if (std::filesystem::exists(old_metrics))
    for (const io::MetricsLine& line : io::read_metrics_lines(old_metrics))
      if (line.iter <= state_.iteration) kept_metrics.push_back(line.text);
  write_metrics(metrics_path(), kept_metrics);
}

// The settings given on resume: only kResumeSettings' names. Each value that differs from the
// checkpoint's is one line in state_.changes ("iteration 1000: --lr 0.001 -> 0.0005"); the text's
// files are recorded by check_data, and --out and --threads change no number.
void Trainer::apply(const Resume& changes) {
  TrainOptions given = changes.options;
  given.data = absolute_paths(given.data), given.val_data = absolute_paths(given.val_data);
  if (!given.eval_task.empty()) given.eval_task = absolute_paths({given.eval_task}).front();
  if (changes.given.count("lr") && !changes.given.count("min-lr")) given.min_lr = given.lr / 10;  // as a new run's
  std::set<std::string> names = changes.given;
  if (changes.given.count("lr")) names.insert("min-lr");
  for_each_option_pair(given, state_.options, [&](const char* name, const auto& value, auto& stored, const char*,
                                                   const Range&, Choices) {
    if (!names.count(name)) return;
    if (!resume_may_change(name))
      throw std::invalid_argument(fmt::format(
          "--{} cannot change on --resume: the run continues with the settings saved in its checkpoint (a resume may "
          "change --{}; --init-from starts a new run from its weights)",
          name, fmt::join(kResumeSettings, ", --")));
    if (stored == value) return;
    const std::string_view n(name);
    if (n != "out" && n != "threads" && n != "data" && n != "val-data")
      new_changes_.push_back(
          fmt::format("iteration {}: --{} {} -> {}", state_.iteration, name, flag_text(stored), flag_text(value)));
    stored = value;
  });
  state_.changes.insert(state_.changes.end(), new_changes_.begin(), new_changes_.end());
}

// The text is where the checkpoint says (or where --data now points) and holds the same bytes;
// moved text is recorded, changed text refused unless forced (then recorded too).
void Trainer::check_data(DataCheck check) {
  const bool given = check.data_given, force = check.force;
  const std::vector<std::string> files = training_files(options_);
  if (!given)
    for (const std::string& f : files)
      if (std::error_code ec; !std::filesystem::exists(f, ec))
        throw std::invalid_argument(fmt::format("the run's text '{}' is not there any more: if it moved, give its new "
                                                "place with --data (and --val-data); its bytes are checked against "
                                                "the checkpoint's",
                                                f));
  const std::vector<DataFile> now = identify_data(files, options_.val_data);
  std::vector<std::string> lines;
  if (!state_.data_files.empty()) {  // files from before data_files was kept: the token counts are the check
    const std::string difference = data_difference(state_.data_files, now);
    if (!difference.empty() && !force)
      throw std::invalid_argument(fmt::format("the text changed since the checkpoint: {}; give --force to continue on "
                                              "the new text (recorded in the checkpoint)",
                                              difference));
    if (!difference.empty()) {
      lines.push_back(fmt::format("iteration {}: the text changed (--force): {}", state_.iteration, difference));
    } else {
      std::vector<size_t> moved;
      for (size_t i = 0; i < now.size(); ++i)
        if (now[i].path != state_.data_files[i].path) moved.push_back(i);
      constexpr size_t kMovedLines = 3;  // more are said in one line: a folder of shards moves whole
      for (size_t i : moved)
        if (moved.size() <= kMovedLines)
          lines.push_back(fmt::format("iteration {}: {} file {} moved: '{}' -> '{}'", state_.iteration, now[i].split,
                                      i + 1, state_.data_files[i].path, now[i].path));
      if (moved.size() > kMovedLines)
        lines.push_back(fmt::format("iteration {}: {} files moved, the same bytes: '{}' -> '{}' ... '{}' -> '{}'",
                                    state_.iteration, moved.size(), state_.data_files[moved.front()].path,
                                    now[moved.front()].path, state_.data_files[moved.back()].path, now[moved.back()].path));
    }
  }
  state_.data_files = now;
  new_changes_.insert(new_changes_.end(), lines.begin(), lines.end());
  state_.changes.insert(state_.changes.end(), lines.begin(), lines.end());
}

void Trainer::prepare() {
  parameters_ = model_->parameters();
  task_examples_.clear(), task_rows_ = {};
  if (!options_.eval_task.empty()) {  // read and tokenized before the first step: a bad file costs nothing
    try {
      task_examples_ = read_choice_task(options_.eval_task);
    } catch (const std::runtime_error& e) {  // the file is not there (a resume may name its new place)
      throw std::runtime_error(fmt::format("{} (--eval-task; on --resume, --eval-task FILE names another, "
                                           "--eval-task '' none)", e.what()));
    }
    task_rows_ = choice_rows(task_examples_, *corpus_.tokenizer, model_->config().block_size,
                             fmt::format("--eval-task '{}'", options_.eval_task));
  }
  optimizer_->keep_update_sums(optim::AdamW::UpdateSums::kept);  // the log's update-to-weight ratios
  update_groups_.clear();
  for (const auto& s : optimizer_->state()) update_groups_.push_back(update_group(s.name));
  flops_per_token_ = nn::training_flops_per_token(model_->config());
  memory_plan_ = run_memory_plan(model_->config(), options_);
  memory_plan_.task = choice_task_bytes(task_examples_, task_rows_);
  guard_ = SpikeGuard({.loss_factor = options_.spike_loss, .grad_factor = options_.spike_grad,
                       .window = options_.spike_window, .patience = options_.spike_patience});
  guard_.set_state(state_.guard);
  peak_flops_ = fma_peak_gflops() * 1e9 * num_threads() * comm_.size();  // every core the run uses
  if (corpus_.train_sources.empty()) {
    sampler_ = std::make_unique<data::BatchSampler>(corpus_.train, options_.batch, options_.block, 0);
  } else {
    std::vector<const data::TokenArray*> sources;
    for (const data::TokenArray& s : corpus_.train_sources) sources.push_back(&s);
    sampler_ = std::make_unique<data::BatchSampler>(sources, corpus_.weights, options_.batch, options_.block, 0);
  }
  sampler_->set_state(state_.sampler_states.at(static_cast<size_t>(comm_.rank())));
  schedule_ = {.lr = static_cast<float>(options_.lr), .min_lr = static_cast<float>(options_.min_lr),
               .warmup = options_.warmup,
               .decay_iters = options_.lr_decay_iters > 0 ? options_.lr_decay_iters : options_.iters};
  state_.train_tokens = corpus_.train.size();
  state_.val_tokens = corpus_.val.size();
}

std::string Trainer::log_path() const { return log_path_for(options_.out); }
std::string Trainer::metrics_path() const { return metrics_path_for(options_.out); }
std::string Trainer::plot_path() const { return plot_path_for(options_.out); }
std::string Trainer::best_path() const { return best_path_for(options_.out); }

double Trainer::train_step(float lr) {
  const PrecisionGuard precision(options_.precision);  // the products; all else stays float
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
  const float norm = optim::global_grad_norm(parameters_);  // the same on every rank: all decide together
  if (const std::optional<std::string> why = guard_.judge(loss, norm)) {  // the step is not applied
    last_skipped_ = true, skip_reason_ = *why;
    last_step_ = step_columns(norm, 1.0, {}, update_groups_);
    return loss;  // run() logs the step, and stops when the guard's patience is spent
  }
  last_skipped_ = false;
  optimizer_->set_lr(lr);
  const float scale = options_.grad_clip > 0 ? optim::clip_scale(norm, options_.grad_clip) : 1.0f;
  optimizer_->step(lr, scale);
  last_step_ = step_columns(norm, scale, optimizer_->last_update(), update_groups_);
  return loss;
}

namespace {
// A signal came during an evaluation: every rank throws it at the same batch (stop_asked is a
// collective), and run() saves the iteration with its evaluation pending.
struct EvaluationInterrupted {};
}  // namespace

std::string Trainer::task_line(const io::TaskColumns& task) const {
  return fmt::format("tinygpt: {} at iteration {}: acc {:.4f}, acc_norm {:.4f} ({} examples)", options_.eval_task,
                     state_.iteration, task.acc, task.acc_norm, task.examples);
}

std::string Trainer::guard_stop_message() const {
  const std::string what = fmt::format("{} steps in a row were not applied (the last, iteration {}: {}): the run stops "
                                       "here", options_.spike_patience, state_.iteration, skip_reason_);
  if (!checkpoint_saved_)
    return fmt::format("{}, before its first checkpoint (--ckpt-every {}): start it again, with a lower --lr or other "
                       "--data (--force replaces its log; --spike-patience sets how many)",
                       what, options_.ckpt_every);
  return fmt::format("{}, without saving over '{}' (train --resume '{}' with a lower --lr, or other --data, may get past "
                     "it; a --grad-clip needs a new run; --spike-patience sets how many)",
                     what, options_.out, options_.out);
}

std::string Trainer::cut_short_line() const {
  return fmt::format("tinygpt: a signal cut short the evaluation at iteration {}: train --resume does it first",
                     state_.iteration);
}

void Trainer::record_given_settings(const std::set<std::string>& names) {
  state_.given.assign(names.begin(), names.end());
}

double Trainer::peak_share(double tokens_per_s) {
  const double achieved = flops_per_token_ * tokens_per_s;
  peak_flops_ = std::max(peak_flops_, achieved);
  return achieved / peak_flops_;
}

bool Trainer::stop_asked(const InterruptWatch* interrupt) const {
  return comm_.any(interrupt != nullptr && interrupt->requested());
}

std::optional<Trainer::Evaluation> Trainer::evaluate(const InterruptWatch* interrupt) {
  try {
    Evaluation e;
    e.val_loss = validation_loss(interrupt);
    e.task = score_task(interrupt);
    return e;
  } catch (const EvaluationInterrupted&) {
    model_->train();
    return std::nullopt;
  }
}

// The task's groups of examples are shared out in contiguous runs, rank r the r-th; after each
// group the ranks meet (stop_asked), so no rank waits on more than one group of another's work,
// and the sums of their counts give the bits one process gives.
std::optional<io::TaskColumns> Trainer::score_task(const InterruptWatch* interrupt) {
  if (task_examples_.empty()) return std::nullopt;
  const std::vector<ChoiceGroup> groups = choice_groups(task_rows_, options_.batch);
  const size_t ranks = static_cast<size_t>(comm_.size()), rank = static_cast<size_t>(comm_.rank());
  const size_t begin = groups.size() * rank / ranks, end = groups.size() * (rank + 1) / ranks;
  const size_t rounds = (groups.size() + ranks - 1) / ranks;  // the largest share
  ChoiceScores mine;
  for (size_t k = 0; k < rounds; ++k) {
    if (begin + k < end) {
      const ChoiceGroup g = groups[begin + k];
      const ChoiceScores s = tally(std::span(task_examples_).subspan(g.begin, g.end - g.begin),
                                   score_group(*model_, task_rows_, g, options_.batch));
      mine.examples += s.examples, mine.correct += s.correct, mine.correct_norm += s.correct_norm;
    }
    if (stop_asked(interrupt)) throw EvaluationInterrupted{};
  }
  const auto total = [&](int64_t count) { return static_cast<int64_t>(comm_.sum(static_cast<double>(count))); };
  const ChoiceScores all{.examples = total(mine.examples), .correct = total(mine.correct),
                         .correct_norm = total(mine.correct_norm)};
  return io::TaskColumns{.acc = all.acc(), .acc_norm = all.acc_norm(), .examples = all.examples};
}

double Trainer::validation_loss(const InterruptWatch* interrupt) {
  if (corpus_.val.size() == 0) return NAN;
  NoGradGuard no_grad;
  const PrecisionGuard precision(options_.precision);
  model_->eval();
  // Seeded by the iteration, so that a resumed run evaluates on the same batches.
  const auto val = validation_sampler(
      corpus_, options_, splitmix64(rank_seed(options_.seed, comm_.rank()) ^ static_cast<uint64_t>(state_.iteration)));
  std::vector<int32_t> x, y;
  double sum = 0;
  for (int64_t i = 0; i < options_.eval_iters; ++i) {
    val->next(x, y);
    sum += model_->forward(x, options_.batch, options_.block, y).loss.item();
    if (stop_asked(interrupt)) throw EvaluationInterrupted{};
  }
  model_->train();
  return comm_.mean(sum / static_cast<double>(options_.eval_iters));
}

void Trainer::take_evaluation(const Evaluation& e) {
  if (corpus_.val.size() > 0 && !std::isfinite(e.val_loss))
    throw std::runtime_error(fmt::format("the validation loss became {} at iteration {}: the run stops here, without "
                                         "saving over '{}'", e.val_loss, state_.iteration, options_.out));
  state_.val_loss = e.val_loss;
  if (options_.keep_best && std::isfinite(e.val_loss) && !(e.val_loss >= state_.best_val_loss)) {
    state_.best_val_loss = e.val_loss;
    save_to(best_path());
  }
  if (comm_.size() > 1)  // cheap insurance that the ranks still apply the same updates
    comm_.require_same(parameter_checksum(parameters_), fmt::format("parameter checksums at iteration {}", state_.iteration));
}

void Trainer::save() {
  save_to(options_.out);
  checkpoint_saved_ = true;
  lock_.follow();  // the checkpoint is a new file now: its lock moves with it
}

void Trainer::save_to(const std::string& path) {
  state_.sampler_states = comm_.all_gather(sampler_->state());
  state_.dropout_counter = model_->dropout_counter();
  state_.guard = guard_.state();
  if (comm_.is_root()) write_checkpoint(path, *model_, *corpus_.tokenizer, optimizer_.get(), &state_);
}

// A short sample in the log, from its own seeded generator: the run's numbers do not change.
void Trainer::log_sample(Reporter& report) {
  NoGradGuard no_grad;
  model_->eval();
  const nn::SampleOptions options{.prompt = "", .tokens = kSampleTokens, .pick = {.temperature = 0.8},
                                  .seed = static_cast<uint64_t>(options_.seed) ^ static_cast<uint64_t>(state_.iteration)};
  const std::string text = generate(*model_, *corpus_.tokenizer, options).text;
  model_->train();
  report.message(fmt::format("tinygpt: sample at iteration {}:\n{}", state_.iteration, text));
}

bool Trainer::finish_pending_evaluation(Reporter& report, const InterruptWatch* interrupt) {
  const std::optional<Evaluation> e = evaluate(interrupt);
  if (!e) {  // the checkpoint still says so
    if (comm_.is_root()) report.message(cut_short_line());
    return false;
  }
  state_.eval_pending = false;  // before a best checkpoint is written
  take_evaluation(*e);
  save();  // a run at its last iteration takes no step that would save it
  if (!comm_.is_root()) return true;
  std::vector<std::string> rows;
  for (io::LogLine& line : io::read_log_lines(log_path())) {
    if (line.row.iter == state_.iteration) line.row.val_loss = e->val_loss, line.row.task = e->task;
    rows.push_back(io::format_log_row(line.row));
  }
  write_log(log_path(), rows);
  std::ofstream metrics(metrics_path(), std::ios::app);
  append_line(metrics, metrics_path(), io::eval_json(state_.iteration, e->val_loss, e->task));
  report.evaluation({state_.iteration, e->val_loss, e->task});
  report.message(fmt::format("tinygpt: the evaluation at iteration {}, which a signal cut short, is done: val {:.4f}",
                               state_.iteration, e->val_loss));
  if (e->task) report.message(task_line(*e->task));
  return true;
}

Trainer::Outcome Trainer::run(Reporter& report, const InterruptWatch* interrupt, int64_t pause_at) {
  if (state_.eval_pending && !finish_pending_evaluation(report, interrupt)) return Outcome::interrupted;
  std::ofstream log, metrics;
  if (comm_.is_root()) {
    log.open(log_path(), std::ios::app);
    if (!log) throw std::runtime_error(fmt::format("cannot write the log '{}': {}", log_path(), std::strerror(errno)));
    metrics.open(metrics_path(), std::ios::app);
    if (!metrics)
      throw std::runtime_error(fmt::format("cannot write the metrics '{}': {}", metrics_path(), std::strerror(errno)));
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
    const bool guard_stops = last_skipped_ && guard_.exhausted();  // logged, then the run ends unsaved
    std::optional<Evaluation> evaluation;
    if (!guard_stops && (state_.iteration % options_.eval_every == 0 || state_.iteration == options_.iters)) {
      evaluation = evaluate(interrupt);
      if (evaluation) take_evaluation(*evaluation);
      state_.eval_pending = !evaluation;
    }
    const double tokens_per_s = tokens_per_step / step_s;
    last_step_.tokens = state_.tokens_seen, last_step_.skipped = last_skipped_;
    last_step_.peak_share = peak_share(tokens_per_s);
    const bool stop = state_.eval_pending || stop_asked(interrupt) || state_.iteration == pause_at;
    if (!guard_stops) {
      if (stop || state_.iteration % options_.ckpt_every == 0 || state_.iteration == options_.iters) save();
      if (options_.snapshot_every > 0 && state_.iteration % options_.snapshot_every == 0)
        save_to(snapshot_path_for(options_.out, state_.iteration));
    }
    if (comm_.is_root()) {
      const std::optional<double> val = evaluation ? std::optional(evaluation->val_loss) : std::nullopt;
      const std::optional<io::TaskColumns> task = evaluation ? evaluation->task : std::nullopt;
      const io::LogRow row{state_.iteration, state_.train_loss, val, lr, tokens_per_s, state_.seconds, last_step_, task};
      append_line(log, log_path(), io::format_log_row(row));
      append_line(metrics, metrics_path(), io::step_json(row));
      if (val) append_line(metrics, metrics_path(), io::eval_json(state_.iteration, *val, task));
      if (val) report.evaluation({state_.iteration, *val, task});
      if (last_skipped_)
        report.message(fmt::format("tinygpt: iteration {} not applied: {}", state_.iteration, skip_reason_));
      report.step({state_.iteration, options_.iters, state_.train_loss, lr, tokens_per_s, state_.seconds, val,
                     last_step_.grad_norm, last_step_.clip_scale < 1, last_step_.peak_share});
      if (task) report.message(task_line(*task));
      if (state_.eval_pending) report.message(cut_short_line());
      if (!guard_stops && options_.sample_every > 0 && state_.iteration % options_.sample_every == 0)
        log_sample(report);
    }
    if (guard_stops) throw std::runtime_error(guard_stop_message());
    if (stop) return Outcome::interrupted;
  }
  return Outcome::finished;
}

}  // namespace tinygpt::train
