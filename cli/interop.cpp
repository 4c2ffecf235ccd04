// tinygpt import / export: GPT-2 models in Hugging Face's layout, in and out.
#include <fmt/format.h>

#include <memory>

#include "tinygpt/nn/gpt.h"
#include "tinygpt/train/checkpoint.h"
#include "tinygpt/cli/commands.h"
#include "tinygpt/io/hf_gpt2.h"
#include "tinygpt/train/memory_budget.h"
#include "tinygpt/io/output_files.h"
#include "tinygpt/train/existing_outputs.h"

namespace tinygpt::cli {

void add_import(CLI::App& app) {
  struct Args {
    std::string from, out;
    bool force = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "import", "make a checkpoint of a GPT-2 model in Hugging Face's layout (config.json, model.safetensors, "
                "vocab.json + merges.txt or encoder.json + vocab.bpe)");
  cmd->add_option("--from", args->from, "directory holding the model's files")->required();
  cmd->add_option("--out", args->out, "checkpoint to write (weights and tokenizer, no optimizer state)")->required();
  cmd->add_flag("--force", args->force, "replace a checkpoint that already lies at --out");
  cmd->callback([args] {
    train::refuse_replacing(args->out, io::OutputKind::hdf5, args->force);  // before any work
    const io::HfGpt2 hf = io::import_hf_gpt2(args->from);
    train::write_checkpoint(args->out, *hf.model, *hf.tokenizer, nullptr, nullptr);
    const nn::GPTConfig& c = hf.model->config();
    fmt::print("wrote {}: {} layers, {} heads, n_embd {}, block {}, vocab {} ({} parameters)\n", args->out, c.n_layer,
               c.n_head, c.n_embd, c.block_size, c.vocab_size, hf.model->parameter_count());
  });
}

void add_export(CLI::App& app) {
  struct Args {
    std::string ckpt, out;
    bool force = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "export", "write a checkpoint's model in Hugging Face's GPT-2 layout (config.json, model.safetensors, "
                "vocab.json, merges.txt)");
  cmd->add_option("--ckpt", args->ckpt, "checkpoint to export")->required();
  cmd->add_option("--out", args->out, "directory to create (or an empty one)")->required();
  cmd->add_flag("--force", args->force,
                "write into a directory that is not empty, replacing its config.json, model.safetensors, vocab.json "
                "and merges.txt");
  cmd->callback([args] {
    const train::Checkpoint ck = train::read_checkpoint(args->ckpt);
    const std::string note = io::export_hf_gpt2(*ck.model, *ck.tokenizer, args->out, args->force);
    fmt::print("wrote {}/config.json and model.safetensors{}\n", args->out,
               note.empty() ? ", vocab.json and merges.txt" : "");
    if (!note.empty()) fmt::print("{}\n", note);
  });
}

}  // namespace tinygpt::cli
