// tinygpt import / export: GPT-2 models in Hugging Face's layout, in and out.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>

#include "../nn/gpt.h"
#include "../train/checkpoint.h"
#include "commands.h"
#include "../io/hf_gpt2.h"
#include "../io/hf_llama.h"
#include "../io/llama2c.h"
#include "../io/sentencepiece_model.h"
#include "../data/sentencepiece_tokenizer.h"
#include "../train/memory_budget.h"
#include "../io/output_files.h"
#include "../train/existing_outputs.h"
#include "../train/tokenizer_source.h"

namespace tinygpt::cli {

namespace {

void print_written(const std::string& out, const nn::GPT& model) {
  const nn::GPTConfig& c = model.config();
  fmt::print("wrote {}: {} layers, {} heads, n_embd {}, block {}, vocab {} ({} parameters)\n", out, c.n_layer, c.n_head,
             c.n_embd, c.block_size, c.vocab_size, model.parameter_count());
}

// The tokenizer --tokenizer-model or --tokenizer-from names; null when neither is given.
std::shared_ptr<const data::Tokenizer> given_tokenizer(const std::string& model, const std::string& from) {
  if (!model.empty() && !from.empty())
    throw std::invalid_argument("--tokenizer-model and --tokenizer-from both name the tokenizer: give one");
  if (!model.empty()) return io::read_sentencepiece_file(model);
  if (!from.empty()) return train::read_tokenizer_of(from);
  return nullptr;
}

// A Hugging Face folder (GPT-2 or Llama), or llama2.c's model file with the tokenizer its ids are,
// written as a checkpoint.
void import_model(const std::string& from, const std::string& out, const std::string& tokenizer_model,
                  const std::string& tokenizer_from) {
  std::error_code ec;
  if (!std::filesystem::exists(from, ec))  // neither a folder nor a file: say so, not "a llama2.c file"
    throw std::invalid_argument(fmt::format("import: cannot read --from '{}': {}", from,
                                            ec ? ec.message() : std::strerror(ENOENT)));
  std::shared_ptr<const data::Tokenizer> tokenizer = given_tokenizer(tokenizer_model, tokenizer_from);
  if (std::filesystem::is_directory(from, ec)) {
    if (io::is_hf_llama_dir(from)) {
      const io::HfLlama hf = io::import_hf_llama(from, tokenizer);
      train::write_checkpoint(out, *hf.model, *hf.tokenizer, nullptr, nullptr);
      return print_written(out, *hf.model);
    }
    const io::HfGpt2 hf = io::import_hf_gpt2(from, tokenizer);
    train::write_checkpoint(out, *hf.model, *hf.tokenizer, nullptr, nullptr);
    print_written(out, *hf.model);
    return fmt::print("tokenizer from {}\n", hf.tokenizer_files == "given" ? tokenizer_from + tokenizer_model
                                                                          : hf.tokenizer_files);
  }
  if (!tokenizer)
    throw std::invalid_argument(fmt::format("'{}' is a file, read as llama2.c's model.bin: give --tokenizer-model (the "
                                            "SentencePiece model its token ids come from) or --tokenizer-from",
                                            from));
  const auto model = io::import_llama2c(from);
  if (tokenizer->vocab_size() > model->config().vocab_size)
    throw std::invalid_argument(fmt::format("'{}' has {} tokens but the model '{}' only {} rows of embeddings",
                                            tokenizer_model + tokenizer_from, tokenizer->vocab_size(), from,
                                            model->config().vocab_size));
  train::write_checkpoint(out, *model, *tokenizer, nullptr, nullptr);
  print_written(out, *model);
}

template <class Args>
void export_llama2c(const Args& a) {
  const train::Checkpoint ck = train::read_checkpoint(a.ckpt, train::CheckpointPart::weights);
  io::check_llama2c_exportable(*ck.model);  // before any file is touched
  const auto* sp = a.weights_only ? nullptr : dynamic_cast<const data::SentencePieceTokenizer*>(ck.tokenizer.get());
  if (!sp && !a.weights_only)
    throw std::invalid_argument(fmt::format("export: llama2.c's tokenizer.bin holds a SentencePiece model's pieces, and "
                                            "'{}' has a {} tokenizer; give --weights-only to write the model file alone "
                                            "(import it back with --tokenizer-from)",
                                            a.ckpt, data::name(ck.tokenizer->kind())));
  if (a.weights_only && !a.tokenizer_out.empty())
    throw std::invalid_argument("--tokenizer-out names the tokenizer file that --weights-only leaves out: give one");
  const std::string tokenizer_out =
      a.tokenizer_out.empty() ? (std::filesystem::path(a.out).parent_path() / "tokenizer.bin").string() : a.tokenizer_out;
  train::refuse_replacing(a.out, io::OutputKind::llama2c, {.force = a.force, .inputs = {a.ckpt}});
  if (sp)
    train::refuse_replacing(tokenizer_out, io::OutputKind::llama2c,
                            {.force = a.force, .inputs = {a.ckpt, a.out}, .flag = "--tokenizer-out"});
  io::export_llama2c(*ck.model, a.out);
  if (!sp) return fmt::print("wrote {} (run.c's model file, the weights alone)\n", a.out);
  io::export_llama2c_tokenizer(*sp, tokenizer_out);
  fmt::print("wrote {} (run.c's model file) and {}: run it with ./run {} -z {}\n", a.out, tokenizer_out, a.out,
             tokenizer_out);
}

// A model of GPT-2's pieces (LayerNorm, learned positions) that Hugging Face's GPT-2 layout cannot
// hold: it is no Llama either, so the refusal says what differs from GPT-2's, or "" when nothing does.
std::string gpt2_layout_problem(const nn::GPTConfig& c) {
  if (c.gpt2_shaped() || c.norm != nn::NormKind::layernorm || c.position != nn::PositionKind::learned) return "";
  std::vector<std::string> differs;
  if (!c.tie_embeddings) differs.push_back("an output layer of its own (--no-tie)");
  if (!c.bias) differs.push_back("no biases (--no-bias)");
  if (c.mlp != nn::MlpKind::gelu) differs.push_back(fmt::format("a {} feed-forward", nn::name(c.mlp)));
  if (c.hidden() != 4 * c.n_embd) differs.push_back(fmt::format("a feed-forward of {}, not 4 x {}", c.hidden(), c.n_embd));
  if (c.kv_heads() != c.n_head) differs.push_back(fmt::format("{} key/value heads for {}", c.kv_heads(), c.n_head));
  if (c.norm_eps != 1e-5f) differs.push_back(fmt::format("LayerNorm's eps {}", c.norm_eps));
  return fmt::format("export: Hugging Face's GPT-2 layout ties the output layer to wte and has biases, GELU of 4 x "
                     "n_embd and a key/value head per head; this model has {}, so no Hugging Face layout holds it",
                     fmt::join(differs, ", "));
}

}  // namespace

void add_import(CLI::App& app) {
  struct Args {
    std::string from, out, tokenizer_model, tokenizer_from;
    bool force = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "import", "make a checkpoint of a model in Hugging Face's layout (a folder: config.json, model.safetensors and "
                "GPT-2's vocab.json + merges.txt (or encoder.json + vocab.bpe), or Llama's tokenizer.model) or of "
                "llama2.c's model file (with --tokenizer-model)");
  cmd->add_option("--from", args->from, "the model's folder (Hugging Face) or file (llama2.c's model.bin)")->required();
  cmd->add_option("--tokenizer-model", args->tokenizer_model,
                  "for a llama2.c model: the SentencePiece model its tokens come from (tokenizer.model, or the .model "
                  "it was trained with)");
  cmd->add_option("--tokenizer-from", args->tokenizer_from,
                  "for files without a tokenizer (an export with --weights-only, llama2.c's model.bin): what holds "
                  "the tokenizer their ids are (a checkpoint, tokenizer file, shard folder, SentencePiece model)");
  cmd->add_option("--out", args->out, "checkpoint to write (weights and tokenizer, no optimizer state)")->required();
  cmd->add_flag("--force", args->force, "replace a checkpoint that already lies at --out");
  cmd->callback([args] {
    train::refuse_replacing(args->out, io::OutputKind::hdf5,  // before any work
                            {.force = args->force, .inputs = {args->from, args->tokenizer_model, args->tokenizer_from}});
    try {
      import_model(args->from, args->out, args->tokenizer_model, args->tokenizer_from);
    } catch (const std::bad_alloc&) {
      throw std::runtime_error(fmt::format("out of memory while importing '{}'", args->from));
    }
  });
}

void add_export(CLI::App& app) {
  struct Args {
    std::string ckpt, out, format = "hf", tokenizer_out;
    bool force = false, weights_only = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "export", "write a checkpoint's model in Hugging Face's layout (GPT-2: config.json, model.safetensors, "
                "vocab.json, merges.txt; Llama-shaped: LlamaForCausalLM with tokenizer.model) or as llama2.c's "
                "model.bin (and tokenizer.bin) that its run.c reads");
  cmd->add_option("--ckpt", args->ckpt, "checkpoint to export")->required();
  cmd->add_option("--format", args->format, "hf: a folder in Hugging Face's layout; llama2c: run.c's model file")
      ->type_name("hf|llama2c")
      ->check(CLI::IsMember({"hf", "llama2c"}))
      ->capture_default_str();
  cmd->add_option("--out", args->out, "hf: directory to create (or an empty one); llama2c: the model file")->required();
  cmd->add_option("--tokenizer-out", args->tokenizer_out,
                  "llama2c, with a SentencePiece tokenizer: its tokenizer.bin (default: tokenizer.bin beside --out)");
  cmd->add_flag("--force", args->force,
                "replace what --out (and --tokenizer-out) hold: a llama2.c file, or a folder's config.json, "
                "model.safetensors, vocab.json and merges.txt");
  cmd->add_flag("--weights-only", args->weights_only,
                "write the model without its tokenizer (for a tokenizer the format has no place for: a character "
                "vocabulary, a BPE without GPT-2's split; import it back with --tokenizer-from)");
  cmd->callback([args] {
    if (args->format == "llama2c") return export_llama2c(*args);
    if (!args->tokenizer_out.empty()) throw std::invalid_argument("--tokenizer-out is for --format llama2c");
    const train::Checkpoint ck = train::read_checkpoint(args->ckpt, train::CheckpointPart::weights);
    const auto with = args->weights_only ? io::ExportTokenizer::omitted : io::ExportTokenizer::required;
    if (const std::string problem = gpt2_layout_problem(ck.config); !problem.empty())
      throw std::invalid_argument(problem);
    const bool llama = !ck.config.gpt2_shaped();  // Hugging Face's Llama layout
    const std::vector<std::string> files =
        llama ? std::vector<std::string>{"config.json", "model.safetensors", "tokenizer.model"}
              : std::vector<std::string>{"config.json", "model.safetensors", "vocab.json", "merges.txt"};
    train::refuse_replacing_folder(args->out, files, {.force = args->force, .inputs = {args->ckpt}});
    if (llama) io::export_hf_llama(*ck.model, *ck.tokenizer, args->out, args->force, with);
    else io::export_hf_gpt2(*ck.model, *ck.tokenizer, args->out, args->force, with);
    fmt::print("wrote {}/config.json ({}) and model.safetensors{}\n", args->out,
               llama ? "LlamaForCausalLM" : "GPT2LMHeadModel",
               args->weights_only ? ", the weights alone" : llama ? " and tokenizer.model" : ", vocab.json and merges.txt");
  });
}

}  // namespace tinygpt::cli
