// tinygpt tokens / attention / plot: looking inside a model and a run.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <memory>
#include <optional>

#include "../autograd/threads.h"
#include "../data/corpus.h"
#include "../data/json.h"
#include "../data/text_files.h"
#include "../data/utf8.h"
#include "../train/checkpoint.h"
#include "../train/tokenizer_source.h"
#include "commands.h"
#include "flags.h"
#include "../io/output_files.h"
#include "../train/existing_outputs.h"
#include "../inspect/attention_steps.h"
#include "../inspect/explain.h"
#include "../inspect/inspect.h"
#include "../inspect/residual_trace.h"
#include "../inspect/plot.h"

namespace tinygpt::cli {

void add_tokens(CLI::App& app) {
  struct Args {
    std::string ckpt, text, file;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("tokens", "show how a checkpoint's tokenizer cuts text into tokens");
  cmd->add_option("--ckpt", args->ckpt,
                  "what holds the tokenizer: a checkpoint, a tokenizer file, a folder of shards, a Hugging Face folder "
                  "or a SentencePiece model")
      ->required();
  CLI::Option* text = cmd->add_option("--text", args->text, "the text to tokenize");
  CLI::Option* file = cmd->add_option("--file", args->file, "a UTF-8 text file to tokenize");
  text->excludes(file);
  cmd->add_flag("--json", args->json,
                "print one JSON object {\"ids\": [...], \"tokens\": [...]} (each token's text; a piece of a "
                "character as U+FFFD)");
  cmd->callback([args, text, file] {
    if (!text->count() && !file->count()) throw std::invalid_argument("tokens: give --text or --file");
    const auto tokenizer = train::read_tokenizer_of(args->ckpt);
    std::vector<int32_t> ids;  // a file as every command reads one: in blocks (docs/data-format.md)
    if (file->count())
      data::tokenize_in_order(*tokenizer, {args->file}, [&](size_t, std::span<const int32_t> got, size_t) {
        ids.insert(ids.end(), got.begin(), got.end());
      });
    else
      ids = tokenizer->encode(args->text, "the text");
    if (!args->json) {
      fmt::print("{}", inspect::token_table(inspect::token_views(*tokenizer, ids)));
      return;
    }
    std::string tokens;
    for (const int32_t id : ids)
      tokens += (tokens.empty() ? "" : ", ") + data::json::quote(data::sanitize_utf8(tokenizer->token_bytes(id)));
    fmt::print("{{\"ids\": [{}], \"tokens\": [{}]}}\n", fmt::join(ids, ", "), tokens);
  });
}

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

void add_plot(CLI::App& app) {
  struct Args {
    std::vector<std::string> logs;
    std::string out;
    bool force = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("plot", "draw runs' loss curves (and tokens/s) from their CSV logs as SVG");
  cmd->add_option("--log", args->logs, "the CSV log written beside a checkpoint; several draw the runs together")
      ->required();
  cmd->add_option("--out", args->out, "the SVG file to write")->required();
  cmd->add_flag("--force", args->force, "replace an SVG file that already lies at --out");
  cmd->callback([args] {
    train::refuse_replacing(args->out, io::OutputKind::svg, {.force = args->force, .inputs = args->logs});  // before reading
    inspect::write_loss_plot(args->logs, args->out);
    fmt::print("wrote {}\n", args->out);
  });
}

namespace {

// A checkpoint for the page: its file name and its run's iteration (-1 for weights only).
inspect::ExplainModel explain_model(const std::string& path, const train::Checkpoint& ck) {
  return {std::filesystem::path(path).filename().string(), ck.train ? ck.train->iteration : -1, ck.model.get()};
}

}  // namespace

void add_explain(CLI::App& app) {
  struct Args {
    std::string ckpt, text, file, out, log, lang = "en";
    std::vector<std::string> ckpts;
    std::vector<int64_t> layers;
    int64_t threads = 0;
    bool force = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "explain", "write one offline HTML page that shows the model computing a text: tokens, embeddings, attention step "
                 "by step, the rest of each block, the next-token probabilities");
  cmd->add_option("--ckpt", args->ckpt, "checkpoint to take apart")->required();
  CLI::Option* text = cmd->add_option("--text", args->text, "the text (cut to the model's block size)");
  CLI::Option* file = cmd->add_option("--file", args->file, "a UTF-8 text file to use as the text");
  text->excludes(file);
  cmd->add_option("--out", args->out, "the HTML page to write")->required();
  cmd->add_option("--ckpts", args->ckpts,
                  "snapshots of the same run for the training slider, comma-separated (train --snapshot-every writes "
                  "them)")
      ->delimiter(',');
  cmd->add_option("--layers", args->layers,
                  fmt::format("layers to take apart in full, comma-separated (default: as many as keep the page near "
                              "{} MB; the others are shown as attention maps)",
                              inspect::kPageBudget / 1000000))
      ->delimiter(',');
  cmd->add_option("--log", args->log, "the run's CSV log for the loss curve (default: the one beside --ckpt, if any)");
  cmd->add_option("--lang", args->lang, "the page's first language (a button switches)")
      ->check(CLI::IsMember({"en", "ko"}))
      ->capture_default_str();
  cmd->add_flag("--force", args->force, "replace a page that already lies at --out");
  add_number(cmd, "--threads", args->threads, train::kThreadRange, "worker threads (0: all cores)");
  cmd->callback([args, text, file] {
    if (!text->count() && !file->count()) throw std::invalid_argument("explain: give --text or --file");
    set_num_threads(static_cast<int>(args->threads));
    std::vector<std::string> inputs = args->ckpts;
    inputs.insert(inputs.end(), {args->ckpt, args->file, args->log});
    train::refuse_replacing(args->out, io::OutputKind::html, {.force = args->force, .inputs = inputs});  // before any work
    const train::Checkpoint main = train::read_checkpoint(args->ckpt, train::CheckpointPart::weights);
    inspect::ExplainInput in{file->count() ? data::read_text_file(args->file) : args->text, main.tokenizer.get(),
                             explain_model(args->ckpt, main), {}, {}, args->lang, args->layers};
    std::vector<train::Checkpoint> snapshots;
    for (const std::string& path : args->ckpts) snapshots.push_back(train::read_checkpoint(path, train::CheckpointPart::weights));
    for (size_t i = 0; i < snapshots.size(); ++i) in.snapshots.push_back(explain_model(args->ckpts[i], snapshots[i]));
    std::stable_sort(in.snapshots.begin(), in.snapshots.end(),
                     [](const auto& a, const auto& b) { return a.iteration < b.iteration; });
    const std::string log = args->log.empty() ? train::log_path_for(args->ckpt) : args->log;
    std::error_code ec;
    if (!args->log.empty() || std::filesystem::exists(log, ec)) in.loss = io::read_log(log);
    const inspect::ExplainPage page = inspect::explain_page(in);
    io::write_output_file(args->out, io::OutputKind::html, page.html);
    for (const std::string& note : page.notes) fmt::print("note: {}\n", note);
    fmt::print("wrote {} ({:.1f} MB): open it in a browser (file://, no network needed)\n", args->out,
               static_cast<double>(page.html.size()) / 1e6);
  });
}

}  // namespace tinygpt::cli
