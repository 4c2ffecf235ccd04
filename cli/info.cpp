// tinygpt info: what a checkpoint holds: the model, its tokenizer, and for a run every stored
// setting, the text it trains on, its progress and what changed on resume; --json for programs.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <memory>
#include <type_traits>
#include <utility>

#include "../data/tokenizer_record.h"
#include "../data/json.h"
#include "../data/utf8.h"
#include "../data/sha256.h"
#include "../io/output_files.h"
#include "../train/existing_outputs.h"
#include "../train/settings_file.h"
#include "../train/checkpoint.h"
#include "commands.h"

namespace tinygpt::cli {

namespace {

using data::json::quote;

// Each stored setting as a flag and its value, in the order of train --help.
std::vector<std::pair<std::string, std::string>> settings(const train::TrainOptions& options, bool json) {
  std::vector<std::pair<std::string, std::string>> out;
  train::TrainOptions o = options;
  train::for_each_option(o, [&](const char* name, const auto& field, const char*, const io::Range&,
                                train::Choices choices) {
    using T = std::decay_t<decltype(field)>;
    std::string value;
    if constexpr (std::is_same_v<T, bool>) {
      value = field ? "true" : "false";
    } else if constexpr (std::is_enum_v<T>) {
      const std::string text = choices[static_cast<size_t>(field)];
      value = json ? quote(text) : text;
    } else if constexpr (std::is_same_v<T, std::string>) {
      value = json ? quote(field) : field;
    } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
      std::vector<std::string> items;
      for (const std::string& f : field) items.push_back(json ? quote(f) : f);
      value = json ? fmt::format("[{}]", fmt::join(items, ", ")) : fmt::format("{}", fmt::join(items, " "));
    } else {
      value = fmt::format("{}", field);
    }
    out.emplace_back(name, value);
  });
  return out;
}

std::string tokenizer_text(const data::Tokenizer& tokenizer) {
  const data::TokenizerRecord r = tokenizer.record();
  if (r.kind != data::TokenizerKind::bpe) return fmt::format("{}, {} tokens", data::name(r.kind), tokenizer.vocab_size());
  std::string specials;
  for (const data::SpecialToken& t : r.specials)
    specials += fmt::format("{}{} = {}", specials.empty() ? "; special " : ", ", t.text, t.id);
  return fmt::format("bpe, {} tokens ({} merges, split {}{}{})", tokenizer.vocab_size(), r.merges.size(),
                     data::split_name(r.split), r.byte_ids.empty() ? "" : ", GPT-2's byte order", specials);
}

std::string tokenizer_json(const data::Tokenizer& tokenizer) {
  std::string fields = fmt::format("\"kind\": {}, \"vocab_size\": {}", quote(data::name(tokenizer.kind())), tokenizer.vocab_size());
  if (const data::TokenizerRecord r = tokenizer.record(); r.kind == data::TokenizerKind::bpe) {
    std::vector<std::string> specials;
    for (const data::SpecialToken& t : r.specials)
      specials.push_back(fmt::format("{{\"text\": {}, \"id\": {}}}", quote(t.text), t.id));
    fields += fmt::format(", \"merges\": {}, \"split\": {}, \"gpt2_byte_order\": {}, \"specials\": [{}]",
                          r.merges.size(), quote(data::split_name(r.split)), !r.byte_ids.empty(),
                          fmt::join(specials, ", "));
  }
  return "{" + fields + "}";
}

// The architecture's pieces (format_version 3's /config fields, docs/checkpoint-format.md), GPT-2's defaults included.
std::string architecture_text(const nn::GPTConfig& c) {
  return fmt::format("{} (eps {}), {} positions{}, {} feed-forward of {}, {} key/value heads of {}, {}, {}",
                     nn::name(c.norm), c.norm_eps, nn::name(c.position),
                     c.position == nn::PositionKind::rope ? fmt::format(" (theta {})", c.rope_theta) : "",
                     nn::name(c.mlp), c.hidden(), c.kv_heads(), c.n_head, c.bias ? "biases" : "no biases",
                     c.tie_embeddings ? "output tied to wte" : "an lm_head of its own");
}

std::string architecture_json(const nn::GPTConfig& c) {
  return fmt::format("\"norm\": {}, \"norm_eps\": {}, \"position\": {}, \"rope_theta\": {}, \"mlp\": {}, "
                     "\"ffn_hidden\": {}, \"n_kv_head\": {}, \"bias\": {}, \"tie_embeddings\": {}",
                     quote(nn::name(c.norm)), c.norm_eps, quote(nn::name(c.position)), c.rope_theta,
                     quote(nn::name(c.mlp)), c.hidden(), c.kv_heads(), c.bias, c.tie_embeddings);
}

// SHA-256 of named tensors in order: each name, a NUL, its shape as 64-bit integers, its floats.
// Two checkpoints with the same digests hold the same numbers, whatever else differs (the training
// time each records, the paths of their files).
template <class Named>
std::string tensors_digest(const Named& tensors) {
  data::Sha256 hash;
  for (const auto& [name, t] : tensors) {
    hash.update(name.data(), name.size() + 1);
    for (const int64_t d : t.shape()) hash.update(&d, sizeof d);
    const Tensor values = t.contiguous();
    hash.update(values.data(), static_cast<size_t>(values.numel()) * sizeof(float));
  }
  return hash.hex_digest();
}

struct Digests {
  std::string weights, moments;  // moments: empty for a file without optimizer state
};
Digests digests(const train::Checkpoint& ck) {
  Digests d{tensors_digest(ck.model->named_parameters()), ""};
  if (ck.optim) {
    std::vector<std::pair<std::string, Tensor>> moments;
    for (const auto& [name, t] : ck.m) moments.emplace_back("m/" + name, t);
    for (const auto& [name, t] : ck.v) moments.emplace_back("v/" + name, t);
    d.moments = tensors_digest(moments);
  }
  return d;
}

// One line of `info`'s text: whatever came from the file (paths, special tokens, settings) shown
// with its control characters escaped (data::printable).
template <class... Args>
void print_line(fmt::format_string<Args...> format, Args&&... args) {
  std::string text = fmt::format(format, std::forward<Args>(args)...);
  if (!text.empty() && text.back() == '\n') text.pop_back();
  fmt::print("{}\n", data::printable(text));
}

void print_text(const std::string& path, const train::Checkpoint& ck) {
  const nn::GPTConfig& c = ck.config;
  print_line("checkpoint   {}\n", path);
  print_line("integrity    {}\n", ck.sealed ? "verified (its SHA-256 seal matches its bytes)"
                                            : "unverified (no tinygpt seal: written by another tool or an older "
                                              "tinygpt; read in a child process first)");
  print_line("model        {} layers, {} heads, {} embd, block {}, vocab {}\n", c.n_layer, c.n_head, c.n_embd,
             c.block_size, c.vocab_size);
  print_line("architecture {}\n", architecture_text(c));
  print_line("parameters   {}\n", ck.model->parameter_count());
  const Digests d = digests(ck);
  print_line("digests      weights {}{}\n", d.weights.substr(0, 16), d.moments.empty() ? "" : ", moments " + d.moments.substr(0, 16));
  print_line("tokenizer    {}\n", tokenizer_text(*ck.tokenizer));
  if (!ck.train) {
    print_line("training     none (weights only: start a run from it with train --init-from)\n");
    return;
  }
  const train::TrainState& s = *ck.train;
  print_line("iteration    {} of {}\n", s.iteration, s.options.iters);
  print_line("tokens seen  {}\n", s.tokens_seen);
  if (std::isfinite(s.train_loss)) print_line("train loss   {:.4f} (last iteration)\n", s.train_loss);
  else print_line("train loss   {} (last iteration, which the spike guard did not apply)\n", std::isnan(s.train_loss) ? "nan" : "inf");
  if (std::isfinite(s.val_loss)) print_line("val loss     {:.4f} (last estimate)\n", s.val_loss);
  if (std::isfinite(s.best_val_loss)) print_line("best val     {:.4f}\n", s.best_val_loss);
  if (!s.init_from.empty()) print_line("started from {} (--init-from)\n", s.init_from);
  if (s.eval_pending)
    print_line("evaluation   at iteration {} cut short by a signal: train --resume does it first\n", s.iteration);
  print_line("training     {:.1f} s, {} products{}\n", s.seconds, tinygpt::name(s.options.precision),
             s.sampler_states.size() > 1 ? fmt::format(", {} ranks (mpirun -np {})", s.sampler_states.size(), s.sampler_states.size()) : "");
  if (s.data_files.empty())
    print_line("data         {}\n", fmt::join(s.options.data.empty() ? std::vector<std::string>{"(fortunes)"} : s.options.data, " "));
  for (const train::DataFile& f : s.data_files)
    print_line("data         {} '{}' ({} bytes, SHA-256 {})\n", f.split, f.path, f.size, f.sha256);
  // Every setting as the flag that sets it, wrapped: the lines read as the run's command line.
  std::string line;
  const auto defaults = settings(train::TrainOptions{}, false);
  for (size_t i = 0; const auto& [name, value] : settings(s.options, false)) {
    const bool on_by_default = defaults[i++].second == "true";
    if (value.empty() || (value == "false" && !on_by_default)) continue;  // no files, or a switch that is off
    if (value == "true" && on_by_default) continue;
    const std::string item = value == "true"    ? fmt::format("--{}", name)
                             : value == "false" ? fmt::format("--no-{}", name)
                                                : fmt::format("--{} {}", name, value);
    if (!line.empty() && line.size() + 1 + item.size() > 90) {
      print_line("settings     {}\n", line);
      line.clear();
    }
    line += (line.empty() ? "" : " ") + item;
  }
  if (!line.empty()) print_line("settings     {}\n", line);
  for (const std::string& change : s.changes) print_line("changed      {}\n", change);
}

void print_json(const std::string& path, const train::Checkpoint& ck) {
  const nn::GPTConfig& c = ck.config;
  std::string training = "null";
  if (ck.train) {
    const train::TrainState& s = *ck.train;
    std::vector<std::string> options, files, changes;
    for (const auto& [name, value] : settings(s.options, true)) options.push_back(fmt::format("{}: {}", quote(name), value));
    for (const train::DataFile& f : s.data_files)
      files.push_back(fmt::format("{{\"split\": {}, \"path\": {}, \"bytes\": {}, \"sha256\": {}}}", quote(f.split),
                                  quote(f.path), f.size, quote(f.sha256)));
    for (const std::string& change : s.changes) changes.push_back(quote(change));
    training = fmt::format(
        "{{\"iteration\": {}, \"iters\": {}, \"ranks\": {}, \"tokens_seen\": {}, \"train_loss\": {}, \"val_loss\": {}, "
        "\"best_val_loss\": {}, \"eval_pending\": {}, \"init_from\": {}, \"seconds\": {}, \"settings\": {{{}}}, \"data_files\": [{}], \"changes\": [{}]}}",
        s.iteration, s.options.iters, s.sampler_states.size(), s.tokens_seen, data::json::number(s.train_loss), data::json::number(s.val_loss),
        data::json::number(s.best_val_loss), s.eval_pending, s.init_from.empty() ? "null" : quote(s.init_from), s.seconds, fmt::join(options, ", "), fmt::join(files, ", "),
        fmt::join(changes, ", "));
  }
  const Digests d = digests(ck);
  fmt::print("{{\"checkpoint\": {}, \"sealed\": {}, \"model\": {{\"vocab_size\": {}, \"block_size\": {}, \"n_layer\": {}, "
             "\"n_head\": {}, \"n_embd\": {}, {}, \"parameters\": {}}}, \"tokenizer\": {}, \"training\": {}, "
             "\"digests\": {{\"weights\": {}, \"moments\": {}}}}}\n",
             quote(path), ck.sealed, c.vocab_size, c.block_size, c.n_layer, c.n_head, c.n_embd, architecture_json(c),
             ck.model->parameter_count(), tokenizer_json(*ck.tokenizer), training, quote(d.weights),
             d.moments.empty() ? "null" : quote(d.moments));
}

}  // namespace

void add_info(CLI::App& app) {
  struct Args {
    std::string ckpt, config;
    bool json = false, force = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("info", "describe a checkpoint: model, tokenizer, progress, losses, every setting");
  cmd->add_option("--ckpt", args->ckpt, "checkpoint to describe")->required();
  cmd->add_flag("--json", args->json, "print one JSON object: model, tokenizer, training (null for weights only)");
  cmd->add_option("--config", args->config,
                  "also write the run's settings to this JSON file, for train --config to repeat the run");
  cmd->add_flag("--force", args->force, "replace a settings file already at --config");
  cmd->callback([args] {
    if (!args->config.empty())  // before reading: a file that is not ours is never replaced
      train::refuse_replacing(args->config, io::OutputKind::settings,
                              {.force = args->force, .inputs = {args->ckpt}, .flag = "--config"});
    const train::Checkpoint ck = train::read_checkpoint(args->ckpt);
    if (!args->config.empty()) {
      if (!ck.train)
        throw std::invalid_argument(fmt::format("'{}' holds weights only: it has no run settings for --config",
                                                args->ckpt));
      io::write_output_file(args->config, io::OutputKind::settings, train::settings_file_text(*ck.train));
    }
    if (args->json) return print_json(args->ckpt, ck);
    print_text(args->ckpt, ck);
  });
}

}  // namespace tinygpt::cli
