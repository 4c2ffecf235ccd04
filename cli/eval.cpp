// tinygpt eval: the loss of a checkpoint on text, by the evaluation rule (docs/checkpoint-format.md).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <memory>

#include "tinygpt/autograd/threads.h"
#include "tinygpt/data/corpus.h"
#include "tinygpt/data/shards.h"
#include "tinygpt/train/checkpoint.h"
#include "tinygpt/cli/commands.h"
#include "tinygpt/cli/flags.h"
#include "tinygpt/train/memory_budget.h"
#include "tinygpt/train/evaluate.h"
#include "tinygpt/train/run_data.h"

namespace tinygpt::cli {

void add_eval(CLI::App& app) {
  struct Args {
    std::string ckpt;
    std::vector<std::string> data;
    std::string split = "val";
    bool json = false;
    int64_t batch = 16, threads = 0;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("eval", "loss, perplexity and token count of a checkpoint on text files");
  cmd->add_option("--ckpt", args->ckpt, "checkpoint to evaluate")->required();
  cmd->add_option("--data", args->data,
                  "text files to score (the document token between them), or folders of token shards (their val "
                  "split)")
      ->required();
  CLI::Option* split = cmd->add_option("--split", args->split, "with folders of shards: the split to score")
      ->type_name("val|train")
      ->check(CLI::IsMember({"val", "train"}))
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "print one JSON object {\"loss\", \"perplexity\", \"tokens\", \"bits_per_byte\", \"bytes\"}");
  add_number(cmd, "--batch", args->batch, io::Range{1, 4096}, "windows per forward pass");
  add_number(cmd, "--threads", args->threads, train::kThreadRange, "worker threads (0: all cores)");
  cmd->callback([args, split] {
    set_num_threads(static_cast<int>(args->threads));
    const train::Checkpoint ck = train::read_checkpoint(args->ckpt, train::CheckpointPart::weights);
    train::require_memory(train::inference_bytes(ck.config, args->batch) + train::corpus_bytes(args->data),
                          "this evaluation");
    const bool shards = train::data_kind(args->data, "--data") == train::DataKind::shard_folders;
    if (split->count() && !shards)
      throw std::invalid_argument("--split chooses a split of shard folders; --data names text files, scored whole");
    // Shards are read in place, never loaded, and only through the tokenizer that made them.
    const data::TokenArray tokens =
        train::tokens_to_score(args->data, args->split, *ck.tokenizer, fmt::format("the checkpoint '{}'", args->ckpt));
    if (tokens.size() < 2)
      throw std::invalid_argument(fmt::format("eval: {} {} {} token{}; at least 2 are needed",
                                              shards ? fmt::format("the {} split of", args->split) : "the text of",
                                              fmt::join(args->data, ", "), tokens.size() == 1 ? "has" : "have",
                                              tokens.size() == 1 ? "" : "s"));
    const train::EvalResult r = train::evaluate(*ck.model, *ck.tokenizer, tokens, args->batch);
    if (args->json)
      fmt::print("{{\"loss\": {:.6f}, \"perplexity\": {:.6f}, \"tokens\": {}, \"bits_per_byte\": {:.6f}, \"bytes\": {}}}\n",
                 r.loss, r.perplexity, r.tokens, r.bits_per_byte, r.bytes);
    else
      fmt::print("loss {:.4f}  perplexity {:.3f}  tokens {}  bits/byte {:.4f}  bytes {}\n", r.loss, r.perplexity,
                 r.tokens, r.bits_per_byte, r.bytes);
  });
}

}  // namespace tinygpt::cli
