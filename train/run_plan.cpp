#include "run_plan.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <filesystem>
#include <stdexcept>
#include <type_traits>

#include "../autograd/precision.h"
#include "../autograd/threads.h"
#include "../io/output_files.h"
#include "../io/run_log.h"
#include "../io/run_metrics.h"
#include "existing_outputs.h"
#include "run_data.h"

namespace tinygpt::train {

uint64_t rank_seed(int64_t seed, int rank) {
  return rank == 0 ? static_cast<uint64_t>(seed) : splitmix64(static_cast<uint64_t>(seed) + 0x9e37ULL * rank);
}

MemoryPlan run_memory_plan(const nn::GPTConfig& config, const TrainOptions& o) {
  return training_memory_plan(config, {.batch = o.batch,
                                       .attention = AttentionMemory::automatic,
                                       .samples = o.sample_every > 0,
                                       .data_bytes = corpus_bytes(training_files(o)) + corpus_bytes(o.val_data)});
}

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

std::string absolute_path(const std::string& path) {
  return std::filesystem::absolute(path).lexically_normal().string();
}

// The text files with absolute paths, so that the stored run finds them from any folder.
std::vector<std::string> absolute_paths(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const std::string& p : paths) out.push_back(absolute_path(p));
  return out;
}

// Every file a new run reads, with absolute paths: the stored settings (and info --config's file)
// name them from any folder.
void make_inputs_absolute(TrainOptions& o) {
  o.data = absolute_paths(o.data), o.val_data = absolute_paths(o.val_data);
  for (std::string* file : {&o.tokenizer_from, &o.tokenizer_model, &o.eval_task})
    if (!file->empty()) *file = absolute_path(*file);
}

// A setting's value as the command line writes it.
template <class T>
std::string flag_text(const T& value) {
  if constexpr (std::is_same_v<T, bool>) return value ? "on" : "off";
  else if constexpr (std::is_enum_v<T>) return name(value);  // nn's or options.h's name()
  else if constexpr (std::is_same_v<T, std::vector<std::string>>) return fmt::format("{}", fmt::join(value, " "));
  else return fmt::format("{}", value);
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

void require_run_memory(const nn::GPTConfig& config, const TrainOptions& o) {
  require_memory(run_memory_plan(config, o).total(), "this run");
}

// The run's process settings: threads, and the kernels of bf16 products (throws for native where the
// CPU lacks AVX512_BF16, before any work).
void apply_process_settings(const TrainOptions& o) {
  set_num_threads(static_cast<int>(o.threads));
  set_bf16_kernels(o.bf16_kernels);
}

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

// Whose files lie where the run writes: its own (a resume in place), or another run's.
enum class Claim { own, others };

// Rank 0 takes the run's lock first, then checks that the checkpoint, log, plot and best
// checkpoint can go where they are to go: never over a file of another kind, and over another
// run's files only when `existing` says replace. A resume in place (Claim::own) continues its own
// files. `read` lists what the run reads besides its text and tokenizer.
void claim_outputs(RunPlan& plan, const Communicator& comm, Claim claim, ExistingOutputs existing,
                   const std::vector<std::string>& read = {}) {
  if (!comm.is_root()) return;
  const TrainOptions& o = plan.options;
  const std::string& out = o.out;
  const std::string log = log_path_for(out), metrics = metrics_path_for(out), plot = plot_path_for(out),
                    best = best_path_for(out);
  if (out == log || out == plot || out == best || out == metrics)
    throw std::invalid_argument(fmt::format("--out '{}' would be its own log, metrics, plot or best checkpoint (they "
                                            "take its name with .csv, .jsonl, .svg and .best.h5): choose a name ending in .h5",
                                            out));
  io::check_output_path(out, io::OutputKind::hdf5);
  if (!plan.lock.held()) plan.lock = RunLock(out);
  std::vector<std::pair<std::string, io::OutputKind>> outputs = {
      {out, io::OutputKind::hdf5}, {log, io::OutputKind::log}, {metrics, io::OutputKind::metrics},
      {plot, io::OutputKind::svg}};
  if (o.keep_best) outputs.push_back({best, io::OutputKind::hdf5});
  for (const std::string& snapshot : existing_snapshots(out, o.snapshot_every, o.iters))
    outputs.push_back({snapshot, io::OutputKind::hdf5});
  // Everything the run reads: its text (shard folders' files), the tokenizer's sources, a checkpoint.
  Replacing how{.force = existing == ExistingOutputs::replace, .inputs = training_files(o), .flag = "--out"};
  how.inputs.insert(how.inputs.end(), o.val_data.begin(), o.val_data.end());
  how.inputs.insert(how.inputs.end(), {o.tokenizer_from, o.tokenizer_model});
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

// A new run's state and optimizer for `model`, once the text is read.
void start_from_weights(RunPlan& plan, const Communicator& comm, std::shared_ptr<nn::GPT> model) {
  const TrainOptions& o = plan.options;
  plan.model = std::move(model);
  plan.optimizer = std::make_unique<optim::AdamW>(plan.model->named_parameters(), adamw_options(o));
  plan.state.options = o;
  plan.state.sampler_states.clear();
  for (int r = 0; r < comm.size(); ++r) plan.state.sampler_states.push_back(Rng(rank_seed(o.seed, r)).state());
  plan.state.val_loss = NAN;
  plan.state.data_files = identify_data(training_files(o), o.val_data);
}

// The settings given on resume: only kResumeSettings' names. Each value that differs from the
// checkpoint's is one line in the plan's changes ("iteration 1000: --lr 0.001 -> 0.0005"); the
// text's files are recorded by check_data, and --out and --threads change no number.
void apply_resume_settings(RunPlan& plan, const Resume& changes) {
  TrainOptions given = changes.options;
  given.data = absolute_paths(given.data), given.val_data = absolute_paths(given.val_data);
  if (!given.eval_task.empty()) given.eval_task = absolute_path(given.eval_task);
  if (changes.given.count("lr") && !changes.given.count("min-lr")) given.min_lr = given.lr / 10;  // as a new run's
  std::set<std::string> names = changes.given;
  if (changes.given.count("lr")) names.insert("min-lr");
  TrainState& state = plan.state;
  for_each_option_pair(given, state.options, [&](const char* name, const auto& value, auto& stored, const char*,
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
      plan.changes.push_back(
          fmt::format("iteration {}: --{} {} -> {}", state.iteration, name, flag_text(stored), flag_text(value)));
    stored = value;
  });
  state.changes.insert(state.changes.end(), plan.changes.begin(), plan.changes.end());
}

struct DataCheck {
  bool data_given = false;  // --data or --val-data on the command line: the text may have moved there
  bool force = false;       // changed text is recorded rather than refused
};

// The text is where the checkpoint says (or where --data now points) and holds the same bytes;
// moved text is recorded, changed text refused unless forced (then recorded too).
void check_data(RunPlan& plan, DataCheck check) {
  TrainState& state = plan.state;
  const std::vector<std::string> files = training_files(plan.options);
  if (!check.data_given)
    for (const std::string& f : files)
      if (std::error_code ec; !std::filesystem::exists(f, ec))
        throw std::invalid_argument(fmt::format("the run's text '{}' is not there any more: if it moved, give its new "
                                                "place with --data (and --val-data); its bytes are checked against "
                                                "the checkpoint's",
                                                f));
  const std::vector<DataFile> now = identify_data(files, plan.options.val_data);
  std::vector<std::string> lines;
  if (!state.data_files.empty()) {  // files from before data_files was kept: the token counts are the check
    const std::string difference = data_difference(state.data_files, now);
    if (!difference.empty() && !check.force)
      throw std::invalid_argument(fmt::format("the text changed since the checkpoint: {}; give --force to continue on "
                                              "the new text (recorded in the checkpoint)",
                                              difference));
    if (!difference.empty()) {
      lines.push_back(fmt::format("iteration {}: the text changed (--force): {}", state.iteration, difference));
    } else {
      std::vector<size_t> moved;
      for (size_t i = 0; i < now.size(); ++i)
        if (now[i].path != state.data_files[i].path) moved.push_back(i);
      constexpr size_t kMovedLines = 3;  // more are said in one line: a folder of shards moves whole
      for (size_t i : moved)
        if (moved.size() <= kMovedLines)
          lines.push_back(fmt::format("iteration {}: {} file {} moved: '{}' -> '{}'", state.iteration, now[i].split,
                                      i + 1, state.data_files[i].path, now[i].path));
      if (moved.size() > kMovedLines)
        lines.push_back(fmt::format("iteration {}: {} files moved, the same bytes: '{}' -> '{}' ... '{}' -> '{}'",
                                    state.iteration, moved.size(), state.data_files[moved.front()].path,
                                    now[moved.front()].path, state.data_files[moved.back()].path, now[moved.back()].path));
    }
  }
  state.data_files = now;
  plan.changes.insert(plan.changes.end(), lines.begin(), lines.end());
  state.changes.insert(state.changes.end(), lines.begin(), lines.end());
}

// A resumed run's log keeps its rows up to the checkpoint; later ones belong to the run that was
// cut short. Rows are written again in this log's columns (a log of fewer columns gains empty ones).
void keep_log_rows(RunPlan& plan, const std::string& checkpoint) {
  const std::string log = log_path_for(checkpoint), metrics = metrics_path_for(checkpoint);
  if (std::filesystem::exists(log))
    for (const io::LogLine& line : io::read_log_lines(log))
      if (line.row.iter <= plan.state.iteration) plan.log_rows.push_back(io::format_log_row(line.row));
  if (std::filesystem::exists(metrics))
    for (const io::MetricsLine& line : io::read_metrics_lines(metrics))
      if (line.iter <= plan.state.iteration) plan.metrics_lines.push_back(line.text);
}

}  // namespace

RunPlan plan_new_run(const TrainOptions& options, const Communicator& comm, ExistingOutputs existing) {
  RunPlan plan;
  TrainOptions& o = plan.options;
  o = options;
  validate(o);
  make_inputs_absolute(o);
  apply_process_settings(o);
  claim_outputs(plan, comm, Claim::others, existing);
  require_run_memory(model_config(o, 1), o);  // before reading data; below with the vocabulary
  plan.corpus = load_run_corpus(o, nullptr, "");
  o.tokenizer = plan.corpus.tokenizer->kind();  // shards and --tokenizer-from bring their own
  if (o.tokenizer == data::TokenizerKind::bpe) o.vocab_size = plan.corpus.tokenizer->vocab_size();
  check_enough_tokens(plan.corpus, o);
  const nn::GPTConfig config = model_config(o, plan.corpus.tokenizer->vocab_size());
  require_run_memory(config, o);
  start_from_weights(plan, comm, std::make_shared<nn::GPT>(config, static_cast<uint64_t>(o.seed)));
  return plan;
}

RunPlan plan_fine_tuning(const TrainOptions& options, const InitFrom& init, const Communicator& comm,
                         ExistingOutputs existing) {
  RunPlan plan;
  TrainOptions& o = plan.options;
  o = options;
  Checkpoint ck = read_checkpoint(init.checkpoint);
  const nn::GPTConfig& c = ck.config;
  if (init.crop_block && o.block > c.block_size)
    throw std::invalid_argument(fmt::format("--block {} is longer than the context of '{}' ({} tokens): it can "
                                            "shrink the context, never grow it",
                                            o.block, init.checkpoint, c.block_size));
  // The run's options describe the model it trains (a resume reads them back).
  o.layers = c.n_layer, o.heads = c.n_head, o.embd = c.n_embd;
  o.arch = arch_of(c);
  if (!init.crop_block) o.block = c.block_size;
  o.tokenizer = ck.tokenizer->kind(), o.tokenizer_from = init.checkpoint, o.tokenizer_model.clear();
  if (o.tokenizer == data::TokenizerKind::bpe) o.vocab_size = ck.tokenizer->vocab_size();
  validate(o);
  make_inputs_absolute(o);
  apply_process_settings(o);
  claim_outputs(plan, comm, Claim::others, existing, {init.checkpoint});
  nn::GPTConfig config = c;
  config.block_size = o.block;
  config.dropout = static_cast<float>(o.dropout);
  require_run_memory(config, o);
  plan.corpus = load_run_corpus(o, ck.tokenizer, fmt::format("the checkpoint '{}'", init.checkpoint));
  check_enough_tokens(plan.corpus, o);
  auto model = nn::GPT::unwritten(config);  // every parameter is copied below
  auto source = ck.model->named_parameters();
  auto target = model->named_parameters();
  for (size_t k = 0; k < target.size(); ++k) {  // the same names in the same order; wpe keeps its first rows
    const Tensor& from = source[k].second;
    std::copy(from.data(), from.data() + target[k].second.numel(), target[k].second.data());
  }
  ck.model.reset();
  start_from_weights(plan, comm, std::move(model));
  plan.state.init_from = absolute_path(init.checkpoint);
  plan.start = RunStart::init_from, plan.source = init.checkpoint;
  return plan;
}

RunPlan plan_resume(const std::string& path, const Resume& changes, const Communicator& comm) {
  RunPlan plan;
  plan.start = RunStart::resume, plan.source = path;
  TrainOptions& o = plan.options;
  const std::string out = changes.given.count("out") ? changes.options.out : path;
  std::error_code ec;
  const bool in_place = !changes.given.count("out") || absolute_path(out) == absolute_path(path) ||
                        std::filesystem::equivalent(out, path, ec);
  if (comm.is_root() && in_place) plan.lock = RunLock(out);  // before reading: no run is writing it
  Checkpoint ck = read_checkpoint(path);
  if (!ck.train || !ck.optim)
    throw std::invalid_argument(fmt::format("checkpoint '{}' holds no training state to resume", path));
  TrainState& state = plan.state;
  state = *ck.train;
  plan.checkpoint_exists = in_place;  // the file resumed from is the one a stop keeps
  const auto world = static_cast<int>(state.sampler_states.size());
  if (world != comm.size())
    throw std::invalid_argument(fmt::format(
        "checkpoint '{}' was written by a run of {} process{}, this one has {}: resume it with {} (each rank's "
        "batch sampler continues where it stopped, which needs the same number of ranks)",
        path, world, world == 1 ? "" : "es", comm.size(),
        world == 1 ? "tinygpt train --resume, without mpirun" : fmt::format("mpirun -np {}", world)));
  state.options.beta1 = ck.optim->beta1, state.options.beta2 = ck.optim->beta2;  // the moments' own
  apply_resume_settings(plan, changes);
  state.options.out = out;
  o = state.options;
  validate(o);
  apply_process_settings(o);
  if (state.iteration > o.iters)
    throw std::invalid_argument(fmt::format("the checkpoint is at iteration {}, past --iters {}", state.iteration,
                                            o.iters));
  if (in_place)
    claim_outputs(plan, comm, Claim::own, ExistingOutputs::refuse);
  else
    claim_outputs(plan, comm, Claim::others, changes.force ? ExistingOutputs::replace : ExistingOutputs::refuse, {path});
  require_run_memory(ck.config, o);
  const std::string owner = fmt::format("the checkpoint '{}'", path);
  check_folders_tokenizer(o, *ck.tokenizer, owner);  // before the bytes: a tokenizer never changes
  check_data(plan, {.data_given = changes.given.count("data") > 0 || changes.given.count("val-data") > 0,
                    .force = changes.force});
  plan.corpus = load_run_corpus(o, ck.tokenizer, owner);
  const data::Corpus& corpus = plan.corpus;
  if (!changes.force && (corpus.train.size() != state.train_tokens || corpus.val.size() != state.val_tokens))
    throw std::invalid_argument(fmt::format(
        "the data changed since the checkpoint: {} training and {} validation tokens then, {} and {} now (give "
        "--force to continue on it)",
        state.train_tokens, state.val_tokens, corpus.train.size(), corpus.val.size()));
  check_enough_tokens(corpus, o);
  plan.model = ck.model;
  plan.model->set_dropout(static_cast<float>(o.dropout));
  plan.optimizer = std::make_unique<optim::AdamW>(plan.model->named_parameters(), *ck.optim);
  plan.optimizer->set_steps(ck.optim_step);
  for (auto& s : plan.optimizer->state()) s.m.copy_from_(ck.m.at(s.name)), s.v.copy_from_(ck.v.at(s.name));
  if (comm.is_root()) keep_log_rows(plan, path);
  return plan;
}

}  // namespace tinygpt::train
