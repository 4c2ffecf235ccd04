// tinygpt tokens / attention / plot: looking inside a model and a run.
#include <fmt/format.h>

#include <fstream>
#include <memory>
#include <optional>

#include "train/checkpoint.h"
#include "train/cli/commands.h"
#include "train/inspect.h"
#include "train/plot.h"

namespace tinygpt::cli {

namespace {
void write_file(const std::string& path, const std::string& content) {
  std::ofstream out(path);
  if (!out || !(out << content)) throw std::runtime_error(fmt::format("cannot write '{}'", path));
}
}  // namespace

void add_tokens(CLI::App& app) {
  struct Args {
    std::string ckpt, text;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("tokens", "show how a checkpoint's tokenizer cuts text into tokens");
  cmd->add_option("--ckpt", args->ckpt, "checkpoint whose tokenizer to use")->required();
  cmd->add_option("--text", args->text, "the text to tokenize")->required();
  cmd->callback([args] {
    const train::Checkpoint ck = train::read_checkpoint(args->ckpt);
    fmt::print("{}", train::token_table(train::token_views(*ck.tokenizer, ck.tokenizer->encode(args->text, "the text"))));
  });
}

void add_attention(CLI::App& app) {
  struct Args {
    std::string ckpt, text, out;
    std::optional<int64_t> layer;
    int64_t head = 0;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("attention", "print (and draw) where each token's attention goes");
  cmd->add_option("--ckpt", args->ckpt, "checkpoint to run")->required();
  cmd->add_option("--text", args->text, "the text (at most block_size tokens)")->required();
  cmd->add_option("--layer", args->layer, "layer to show (default: 0 in the table; every layer in the SVG)");
  cmd->add_option("--head", args->head, "head to show in the table")->capture_default_str();
  cmd->add_option("--out", args->out, "also write an SVG heatmap: every head of --layer, or all layers x heads");
  cmd->callback([args] {
    const train::Checkpoint ck = train::read_checkpoint(args->ckpt);
    const train::AttentionMaps maps = train::attention_maps(*ck.model, *ck.tokenizer, args->text);
    fmt::print("{}", train::attention_table(maps, args->layer.value_or(0), args->head));
    if (!args->out.empty()) {
      write_file(args->out, train::attention_svg(maps, args->layer));
      fmt::print("wrote {}\n", args->out);
    }
  });
}

void add_plot(CLI::App& app) {
  struct Args {
    std::string log, out;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("plot", "draw a run's loss curves (and tokens/s) from its CSV log as SVG");
  cmd->add_option("--log", args->log, "the CSV log written beside a checkpoint")->required();
  cmd->add_option("--out", args->out, "the SVG file to write")->required();
  cmd->callback([args] {
    train::write_loss_plot(args->log, args->out);
    fmt::print("wrote {}\n", args->out);
  });
}

}  // namespace tinygpt::cli
