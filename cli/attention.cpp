// tinygpt attention: where each token's attention goes, its steps, one token's residual stream.
#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>

#include "../autograd/threads.h"
#include "../inspect/attention_steps.h"
#include "../inspect/inspect.h"
#include "../inspect/residual_trace.h"
#include "../io/output_files.h"
#include "../nn/gpt.h"
#include "../train/checkpoint.h"
#include "../train/existing_outputs.h"
#include "../train/options.h"
#include "commands.h"
#include "flags.h"

namespace tinygpt::cli {

void add_attention(CLI::App& app) {
  struct Args {
    std::string ckpt, text, out;
    int64_t layer = 0, head = 0, dims = 4, position = 0, threads = 0;
    bool steps = false, trace = false, json = false, force = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("attention", "print (and draw) where each token's attention goes");
  add_number(cmd, "--threads", args->threads, train::kThreadRange, "worker threads (0: all cores)");
  cmd->add_option("--ckpt", args->ckpt, "checkpoint to run")->required();
  cmd->add_option("--text", args->text, "the text (at most block_size tokens)")->required();
  add_number(cmd, "--layer", args->layer, io::Range{0, double(nn::kMaxLayers - 1)},
             "layer to show (in the SVG: every layer unless given)");
  add_number(cmd, "--head", args->head, io::Range{0, double(nn::kMaxHeads - 1)}, "head to show in the table");
  cmd->add_option("--out", args->out,
                  "also write an SVG heatmap: every head of --layer, or all layers x heads; with --steps, the steps");
  CLI::Option* steps = cmd->add_flag("--steps", args->steps,
                                     "show the head's Q, K, V and the five operations on them: 1. Q·Kᵀ, 2. ÷ √d_k, 3. causal mask, "
                                     "4. softmax, 5. ·V");
  add_number(cmd, "--dims", args->dims, io::Range{1, double(nn::kMaxEmbd)},
             "with --steps: columns of Q, K, V and the output to print")
      ->needs(steps);
  CLI::Option* trace = cmd->add_flag(
      "--trace", args->trace, "follow one token's residual stream through the blocks to its next-token probabilities");
  add_number(cmd, "--position", args->position, io::Range{0, double(nn::kMaxBlock - 1)}, "")
      ->description("with --trace: the token to follow, counted from 0 (default: the last; [0, 65535])")
      ->needs(trace);
  cmd->add_flag("--json", args->json, "with --steps: print one JSON object with every step at full width")
      ->needs(steps)
      ->excludes(trace);
  cmd->add_flag("--force", args->force, "replace an SVG file that already lies at --out");
  cmd->callback([args, cmd] {
    if (!args->out.empty())  // before any work
      train::refuse_replacing(args->out, io::OutputKind::svg, {.force = args->force, .inputs = {args->ckpt}});
    set_num_threads(static_cast<int>(args->threads));
    const train::Checkpoint ck = train::read_checkpoint(args->ckpt, train::CheckpointPart::weights);
    const auto write_svg = [&](const std::string& svg) {
      io::write_output_file(args->out, io::OutputKind::svg, svg);
      if (!args->json) fmt::print("wrote {}\n", args->out);
    };
    if (args->steps) {
      const inspect::AttentionSteps s =
          inspect::attention_steps(*ck.model, *ck.tokenizer, args->text, args->layer, args->head);
      fmt::print("{}", args->json ? inspect::attention_steps_json(s) : inspect::attention_steps_text(s, args->dims));
      if (!args->out.empty()) write_svg(inspect::attention_steps_svg(s));
    }
    if (args->trace) {
      const std::optional<int64_t> position =
          cmd->count("--position") ? std::optional<int64_t>(args->position) : std::nullopt;  // default: the last
      if (args->steps && !args->json) fmt::print("\n");
      fmt::print("{}", inspect::residual_trace_text(inspect::residual_trace(*ck.model, *ck.tokenizer, args->text, position)));
    }
    if (args->steps || args->trace) return;
    const inspect::AttentionMaps maps = inspect::attention_maps(*ck.model, *ck.tokenizer, args->text);
    fmt::print("{}", inspect::attention_table(maps, args->layer, args->head));
    if (!args->out.empty()) {
      const std::optional<int64_t> layer = cmd->count("--layer") ? std::optional<int64_t>(args->layer) : std::nullopt;
      write_svg(inspect::attention_svg(maps, layer));
    }
  });
}

}  // namespace tinygpt::cli
