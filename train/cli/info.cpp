// tinygpt info: what a checkpoint holds.
#include <fmt/format.h>

#include <cmath>
#include <memory>

#include "tinygpt/data/bpe_tokenizer.h"
#include "tinygpt/train/checkpoint.h"
#include "tinygpt/train/cli/commands.h"

namespace tinygpt::cli {

void add_info(CLI::App& app) {
  auto ckpt = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("info", "describe a checkpoint: model, tokenizer, progress, losses");
  cmd->add_option("--ckpt", *ckpt, "checkpoint to describe")->required();
  cmd->callback([ckpt] {
    const train::Checkpoint ck = train::read_checkpoint(*ckpt);
    const nn::GPTConfig& c = ck.config;
    fmt::print("checkpoint   {}\n", *ckpt);
    fmt::print("integrity    {}\n", ck.sealed ? "verified (its SHA-256 seal matches its bytes)"
                                              : "unverified (no tinygpt seal: written by another tool or an older "
                                                "tinygpt; read in a child process first)");
    fmt::print("model        {} layers, {} heads, {} embd, block {}, vocab {}\n", c.n_layer, c.n_head, c.n_embd,
               c.block_size, c.vocab_size);
    fmt::print("parameters   {}\n", ck.model->parameter_count());
    if (const auto* bpe = dynamic_cast<const data::BpeTokenizer*>(ck.tokenizer.get())) {
      std::string specials;
      for (const data::SpecialToken& t : bpe->specials())
        specials += fmt::format("{}{} = {}", specials.empty() ? "; special " : ", ", t.text, t.id);
      fmt::print("tokenizer    bpe, {} tokens ({} merges, split {}{}{})\n", bpe->vocab_size(), bpe->merges().size(),
                 data::split_name(bpe->split()), bpe->byte_ids().empty() ? "" : ", GPT-2's byte order", specials);
    } else {
      fmt::print("tokenizer    {}, {} tokens\n", ck.tokenizer->kind(), ck.tokenizer->vocab_size());
    }
    if (!ck.train) {
      fmt::print("training     none (weights only: start a run from it with train --init-from)\n");
      return;
    }
    const train::TrainState& s = *ck.train;
    fmt::print("iteration    {} of {}\n", s.iteration, s.options.iters);
    fmt::print("tokens seen  {}\n", s.tokens_seen);
    fmt::print("train loss   {:.4f} (last iteration)\n", s.train_loss);
    if (std::isfinite(s.val_loss)) fmt::print("val loss     {:.4f} (last estimate)\n", s.val_loss);
    fmt::print("training     {:.1f} s, {} products\n", s.seconds, s.options.precision);
    fmt::print("data         {}\n", fmt::join(s.options.data.empty() ? std::vector<std::string>{"(fortunes)"} : s.options.data, " "));
  });
}

}  // namespace tinygpt::cli
