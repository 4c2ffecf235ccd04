#include "trainer.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <stdexcept>

#include "../autograd/graph.h"
#include "../autograd/machine.h"
#include "../autograd/precision.h"
#include "../autograd/threads.h"
#include "../io/run_log.h"
#include "../nn/sampling.h"
#include "../optim/grad_clip.h"
#include "log_files.h"
#include "memory_budget.h"
#include "step_stats.h"

namespace tinygpt::train {

namespace {

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

// How many tokens --sample-every's samples have, as llm.c's.
constexpr int64_t kSampleTokens = 64;

}  // namespace

Trainer::Trainer(RunPlan plan, Communicator comm)
    : reuse_(),
      comm_(comm),
      options_(std::move(plan.options)),
      lock_(std::move(plan.lock)),
      new_changes_(std::move(plan.changes)),
      corpus_(std::move(plan.corpus)),
      model_(std::move(plan.model)),
      optimizer_(std::move(plan.optimizer)),
      state_(std::move(plan.state)),
      checkpoint_saved_(plan.checkpoint_exists),
      start_(plan.start),
      source_(std::move(plan.source)) {
  model_->set_dropout_seed(rank_seed(options_.seed, comm_.rank()));
  model_->set_dropout_counter(state_.dropout_counter);
  prepare();
  if (comm_.is_root()) start_log_files(log_path(), plan.log_rows, metrics_path(), plan.metrics_lines);
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
  report.evaluation({.iteration = state_.iteration, .val_loss = e->val_loss, .task = e->task, .late = true});
  report.message(fmt::format("tinygpt: the evaluation at iteration {}, which a signal cut short, is done: val {:.4f}",
                               state_.iteration, e->val_loss));
  if (e->task) report.message(task_line(*e->task));
  return true;
}

void Trainer::save_due(bool stop) {
  const int64_t it = state_.iteration;
  if (stop || it % options_.ckpt_every == 0 || it == options_.iters) save();
  if (options_.snapshot_every > 0 && it % options_.snapshot_every == 0) save_to(snapshot_path_for(options_.out, it));
}

void Trainer::report_step(Reporter& report, const io::LogRow& row, bool guard_stops) {
  if (last_skipped_) report.message(fmt::format("tinygpt: iteration {} not applied: {}", row.iter, skip_reason_));
  report.step({.row = row, .total = options_.iters});
  if (row.val_loss) report.evaluation({.iteration = row.iter, .val_loss = *row.val_loss, .task = row.task});
  if (row.task) report.message(task_line(*row.task));
  if (state_.eval_pending) report.message(cut_short_line());
  if (!guard_stops && options_.sample_every > 0 && row.iter % options_.sample_every == 0) log_sample(report);
}

StartReport Trainer::start_report() const {
  return {.start = start_, .source = source_, .options = options_, .ranks = comm_.size(),
          .iteration = state_.iteration, .parameters = model_->parameter_count(),
          .tokenizer = std::string(data::name(corpus_.tokenizer->kind())), .vocab_size = corpus_.tokenizer->vocab_size(),
          .train_tokens = corpus_.train.size(), .val_tokens = corpus_.val.size(),
          .memory = describe(memory_plan_, static_cast<double>(machine_memory_bytes())), .changes = new_changes_,
          .log = log_path()};
}

Trainer::Outcome Trainer::ended(Reporter& report, EndReport::How how, const InterruptWatch* interrupt) {
  if (comm_.is_root())
    report.end({.how = how, .signal = interrupt != nullptr ? interrupt->signal() : 0, .options = options_,
                .ranks = comm_.size(), .iteration = state_.iteration, .train_loss = state_.train_loss,
                .val_loss = state_.val_loss, .best_val_loss = options_.keep_best ? state_.best_val_loss : NAN,
                .best = best_path()});
  return how == EndReport::How::finished ? Outcome::finished : Outcome::interrupted;
}

// Rank 0 tells the log files first, then the caller's reporter (which may read the log).
Trainer::Outcome Trainer::run(Reporter& caller, const InterruptWatch* interrupt, int64_t pause_at) {
  std::optional<LogFiles> files;
  if (comm_.is_root()) files.emplace(log_path(), metrics_path());
  Reporters report = files ? Reporters{&*files, &caller} : Reporters{&caller};
  if (comm_.is_root()) report.start(start_report());
  if (state_.eval_pending && !finish_pending_evaluation(report, interrupt))
    return ended(report, EndReport::How::stopped, interrupt);
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
    const bool signalled = state_.eval_pending || stop_asked(interrupt);  // on any rank
    const bool stop = signalled || state_.iteration == pause_at;
    if (!guard_stops) save_due(stop);
    if (comm_.is_root())
      report_step(report,
                  {.iter = state_.iteration, .train_loss = state_.train_loss,
                   .val_loss = evaluation ? std::optional(evaluation->val_loss) : std::nullopt, .lr = lr,
                   .tokens_per_s = tokens_per_s, .seconds = state_.seconds, .step = last_step_,
                   .task = evaluation ? evaluation->task : std::nullopt},
                  guard_stops);
    if (guard_stops) throw std::runtime_error(guard_stop_message());
    if (stop) return ended(report, signalled ? EndReport::How::stopped : EndReport::How::paused, interrupt);
  }
  return ended(report, EndReport::How::finished, interrupt);
}

}  // namespace tinygpt::train
