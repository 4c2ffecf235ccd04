// tinygpt eval: the loss of a checkpoint on text, by the evaluation rule (docs/checkpoint-format.md),
// or its accuracy on a multiple-choice benchmark (train/multiple_choice.h).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <memory>

#include "../autograd/threads.h"
#include "../data/corpus.h"
#include "../data/json.h"
#include "../data/shards.h"
#include "../train/checkpoint.h"
#include "commands.h"
#include "flags.h"
#include "../train/memory_budget.h"
#include "../train/evaluate.h"
#include "../train/multiple_choice.h"
#include "../train/progress.h"
#include "../train/run_data.h"

namespace tinygpt::cli {

namespace {

// A benchmark's scores: one JSON object, or a table; a live line on a terminal while it runs.
void evaluate_task(nn::GPT& model, const data::Tokenizer& tokenizer, const std::string& path, int64_t batch, bool json) {
  const std::vector<train::ChoiceExample> examples = train::read_choice_task(path);
  const train::ChoiceRows rows =
      train::choice_rows(examples, tokenizer, model.config().block_size, fmt::format("task file '{}'", path));
  train::LiveLine live(stderr, isatty(fileno(stderr)));
  const auto n = static_cast<int64_t>(examples.size());
  const std::vector<train::ChoiceResult> results = train::score_choices(model, rows, batch, [&](int64_t done) {
    live.show(fmt::format("tinygpt: scored {} of {} examples", done, n));
  });
  live.clear();
  const train::ChoiceScores s = train::tally(examples, results);
  if (json) return fmt::print("{{\"examples\": {}, \"acc\": {:.6f}, \"acc_norm\": {:.6f}}}\n", s.examples, s.acc(), s.acc_norm());
  fmt::print("task      {}\nexamples  {}\n\n          correct  accuracy\nacc       {:>7}  {:>8.4f}\nacc_norm  {:>7}  {:>8.4f}\n",
             path, s.examples, s.correct, s.acc(), s.correct_norm, s.acc_norm());
}

}  // namespace

void add_eval(CLI::App& app) {
  struct Args {
    std::string ckpt;
    std::vector<std::string> data;
    std::string task, split = "val";
    bool json = false;
    nn::WeightFormat weights = nn::WeightFormat::fp32;
    int64_t batch = 16, threads = 0;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "eval", "loss, perplexity and token count of a checkpoint on text files, or its accuracy on a multiple-choice task");
  cmd->add_option("--ckpt", args->ckpt, "checkpoint to evaluate")->required();
  takes_paths(cmd->add_option("--data", args->data,
                              "text files to score (the document token between them), or folders of token shards "
                              "(their val split)"));
  cmd->add_option("--task", args->task,
                  "a multiple-choice benchmark to score instead, in HellaSwag's JSON lines (ctx, endings, label): "
                  "prints acc (lowest summed loss) and acc_norm (lowest mean loss)");
  CLI::Option* split = cmd->add_option("--split", args->split, "with folders of shards: the split to score")
      ->type_name("val|train")
      ->check(CLI::IsMember({"val", "train"}))
      ->capture_default_str();
  cmd->add_flag("--json", args->json,
                "print one JSON object {\"loss\", \"perplexity\", \"tokens\", \"bits_per_byte\", \"bytes\", \"bytes_of\"}, "
                "with --task {\"examples\", \"acc\", \"acc_norm\"}");
  add_number(cmd, "--batch", args->batch, io::Range{1, 4096}, "windows (with --task: endings) per forward pass");
  add_weights_flag(cmd, args->weights);
  add_number(cmd, "--threads", args->threads, train::kThreadRange, "worker threads (0: all cores)");
  cmd->callback([args, split] {
    if (args->data.empty() == args->task.empty())
      throw std::invalid_argument("eval scores text (--data) or a multiple-choice task (--task): give one of them");
    if (!args->task.empty() && split->count()) throw std::invalid_argument("--split chooses a split of --data's shards; --task has none");
    set_num_threads(static_cast<int>(args->threads));
    const train::Checkpoint ck = train::read_checkpoint(args->ckpt, train::CheckpointPart::weights);
    train::require_memory(train::inference_bytes(ck.config, args->batch) + train::corpus_bytes(args->data),
                          "this evaluation");
    if (args->weights == nn::WeightFormat::int8) ck.model->use_int8_weights();
    if (!args->task.empty()) return evaluate_task(*ck.model, *ck.tokenizer, args->task, args->batch, args->json);
    const bool shards = train::data_kind(args->data, "--data") == train::DataKind::shard_folders;
    if (split->count() && !shards)
      throw std::invalid_argument("--split chooses a split of shard folders; --data names text files, scored whole");
    // Shards are read in place, never loaded, and only through the tokenizer that made them.
    const data::TokenArray tokens =
        train::tokens_to_score(args->data, args->split, *ck.tokenizer, fmt::format("the checkpoint '{}'", args->ckpt));
    int64_t text_bytes = 0;  // of the text files, read (and checked to be regular files) above
    if (!shards)
      for (const std::string& file : args->data) text_bytes += static_cast<int64_t>(std::filesystem::file_size(file));
    if (tokens.size() < 2)
      throw std::invalid_argument(fmt::format("eval: {} {} {} {} token{}; at least 2 are needed",
                                              shards ? fmt::format("the {} split of", args->split) : "the text of",
                                              fmt::join(args->data, ", "), tokens.size() == 1 ? "has" : "have",
                                              tokens.size(), tokens.size() == 1 ? "" : "s"));
    const train::EvalResult r =
        shards ? train::per_byte(train::evaluate(*ck.model, tokens, args->batch),
                                 train::spelled_bytes(*ck.tokenizer, tokens), train::ByteCount::tokens)
               : train::per_byte(train::evaluate(*ck.model, tokens, args->batch), text_bytes, train::ByteCount::text);
    if (!std::isfinite(r.loss))
      throw std::runtime_error(fmt::format("eval: the loss is {}: the model's numbers overflow on this text (its "
                                           "weights in '{}' are finite, but what they compute is not)",
                                           std::isnan(r.loss) ? "not a number" : "infinite", args->ckpt));
    if (args->json)  // perplexity may still overflow a double: null
      fmt::print("{{\"loss\": {:.6f}, \"perplexity\": {}, \"tokens\": {}, \"bits_per_byte\": {:.6f}, \"bytes\": {}, "
                 "\"bytes_of\": \"{}\"}}\n",
                 r.loss, data::json::number(r.perplexity, {data::json::NumberForm::Style::fixed, 6}), r.tokens,
                 r.bits_per_byte, r.bytes, name(r.bytes_of));
    else
      fmt::print("loss {:.4f}  perplexity {:.3f}  tokens {}  bits/byte {:.4f}  bytes {}{}\n", r.loss, r.perplexity,
                 r.tokens, r.bits_per_byte, r.bytes,
                 r.bytes_of == train::ByteCount::tokens ? " (spelled by the shards' tokens)" : "");
  });
}

}  // namespace tinygpt::cli
