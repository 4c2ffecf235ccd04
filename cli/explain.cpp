// tinygpt explain: one offline HTML page of the model computing a text.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "../autograd/threads.h"
#include "../data/text_files.h"
#include "../inspect/explain.h"
#include "../io/output_files.h"
#include "../io/run_log.h"
#include "../train/checkpoint.h"
#include "../train/existing_outputs.h"
#include "../train/options.h"
#include "commands.h"
#include "flags.h"

namespace tinygpt::cli {

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
