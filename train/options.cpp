#include "options.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <type_traits>
#include <filesystem>
#include <stdexcept>

namespace tinygpt::train {

const char* name(ArchPreset preset) { return preset == ArchPreset::llama ? "llama" : "gpt2"; }

void apply_arch(ArchOptions& o, const std::vector<std::string>& given) {
  if (o.arch != ArchPreset::llama) return;
  auto unless_given = [&](const char* name, auto& field, auto value) {
    if (std::find(given.begin(), given.end(), name) == given.end()) field = value;
  };
  unless_given("norm", o.norm, nn::NormKind::rmsnorm);
  unless_given("position", o.position, nn::PositionKind::rope);
  unless_given("mlp", o.mlp, nn::MlpKind::swiglu);
  unless_given("bias", o.bias, false);
  unless_given("tie", o.tie, true);
}

nn::GPTConfig with_arch(nn::GPTConfig c, const ArchOptions& o) {
  c.norm = o.norm;
  c.norm_eps = static_cast<float>(o.norm_eps);
  c.position = o.position;
  c.rope_theta = static_cast<float>(o.rope_theta);
  c.mlp = o.mlp;
  c.ffn_hidden = o.ffn_hidden == 0 && o.arch == ArchPreset::llama ? nn::llama_hidden(c.n_embd) : o.ffn_hidden;
  c.n_kv_head = o.kv_heads;
  c.bias = o.bias;
  c.tie_embeddings = o.tie;
  c.validate();
  return c;
}

ArchOptions arch_of(const nn::GPTConfig& c) {
  ArchOptions o;
  o.arch = c.gpt2_shaped() ? ArchPreset::gpt2 : ArchPreset::llama;
  o.norm = c.norm, o.position = c.position, o.mlp = c.mlp;
  // The float's shortest decimal (1e-05, not 9.99999974738e-06): what a flag would have said.
  o.norm_eps = std::stod(fmt::format("{}", c.norm_eps)), o.rope_theta = std::stod(fmt::format("{}", c.rope_theta));
  // 0 where the flags' own derivation gives the same (a settings file then re-derives them).
  const int64_t derived_hidden = o.arch == ArchPreset::llama ? nn::llama_hidden(c.n_embd) : 4 * c.n_embd;
  o.ffn_hidden = c.hidden() == derived_hidden ? 0 : c.hidden();
  o.kv_heads = c.kv_heads() == c.n_head ? 0 : c.kv_heads();
  o.bias = c.bias, o.tie = c.tie_embeddings;
  return o;
}

bool resume_may_change(const std::string& name) {
  return std::find(std::begin(kResumeSettings), std::end(kResumeSettings), name) != std::end(kResumeSettings);
}

namespace {
// The checkpoint's own file: the one a symbolic link leads to, whose folder holds the run's files.
std::filesystem::path checkpoint_file(const std::string& out) {
  std::error_code ec;
  if (!std::filesystem::is_symlink(std::filesystem::symlink_status(out, ec))) return out;
  const std::filesystem::path file = std::filesystem::canonical(out, ec);
  return ec ? std::filesystem::path(out) : file;
}
}  // namespace

std::string log_path_for(const std::string& out) { return checkpoint_file(out).replace_extension(".csv").string(); }
std::string metrics_path_for(const std::string& out) {
  return checkpoint_file(out).replace_extension(".jsonl").string();
}
std::string plot_path_for(const std::string& out) { return checkpoint_file(out).replace_extension(".svg").string(); }
std::string best_path_for(const std::string& out) { return checkpoint_file(out).replace_extension(".best.h5").string(); }

std::string snapshot_path_for(const std::string& out, int64_t iteration) {
  return checkpoint_file(out).replace_extension(fmt::format(".step{}.h5", iteration)).string();
}

namespace {
// Edits (insertions, deletions, substitutions) between two words.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}
}  // namespace

std::string nearest_name(const std::string& word, const std::vector<std::string>& names) {
  std::string nearest;
  size_t best = 3;  // at most two edits away, or the start of a longer name
  for (const std::string& name : names) {
    const size_t d = name.starts_with(word) && word.size() > 3 ? 1 : edit_distance(word, name);
    if (d < best) best = d, nearest = name;
  }
  return nearest;
}

std::string choice_problem(const std::string& value, Choices choices) {
  if (choices.empty() || std::find(choices.begin(), choices.end(), value) != choices.end()) return "";
  std::string list;
  for (size_t i = 0; i < choices.size(); ++i)
    list += fmt::format("{}{}", i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ", choices[i]);
  return fmt::format("must be {} (got '{}')", list, value);
}

void validate(const TrainOptions& options) {
  TrainOptions o = options;
  for_each_option(o, [](const char* name, auto& field, const char*, const Range& range, Choices choices) {
    using T = std::decay_t<decltype(field)>;
    std::string problem;
    if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) problem = range_problem(field, range);
    if constexpr (std::is_same_v<T, std::string>) problem = choice_problem(field, choices);
    if (!problem.empty()) throw std::invalid_argument(fmt::format("--{} {}", name, problem));
  });
  (void)parse_data_weights(o.data_weights);
  if (o.bf16_kernels != Bf16Kernels::rounded && o.bf16_kernels != Bf16Kernels::native)
    throw std::invalid_argument("--bf16-kernels must be rounded or native: a run records the arithmetic it used, and "
                                "'measured' would depend on this machine's timing");
  if (o.embd % o.heads != 0)
    throw std::invalid_argument(fmt::format("--embd {} is not divisible by --heads {}", o.embd, o.heads));
  for (const auto& [flag, factor] : {std::pair{"spike-loss", o.spike_loss}, std::pair{"spike-grad", o.spike_grad}})
    if (factor != 0 && factor <= 1)
      throw std::invalid_argument(fmt::format("--{} must be 0 (off) or more than 1 (got {})", flag, factor));
  if (o.min_lr > o.lr) throw std::invalid_argument(fmt::format("--min-lr must be at most --lr {} (got {})", o.lr, o.min_lr));
  int64_t tokens = 0;  // tokens_seen counts every token of every iteration
  if (__builtin_mul_overflow(o.batch * o.block, o.grad_accum, &tokens) || __builtin_mul_overflow(tokens, o.iters, &tokens) ||
      tokens > (int64_t{1} << 53))
    throw std::invalid_argument(fmt::format("--iters {} of --batch {} x --block {} x --grad-accum {} tokens is more "
                                            "tokens than a run counts (2^53)", o.iters, o.batch, o.block, o.grad_accum));
}

std::vector<double> parse_data_weights(const std::string& text) {
  std::vector<double> weights;
  if (text.empty()) return weights;
  for (size_t start = 0;;) {
    const size_t end = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, end - start);
    double w = 0;
    const auto [stop, error] = std::from_chars(item.data(), item.data() + item.size(), w);
    if (item.empty() || error != std::errc() || stop != item.data() + item.size() || !(w > 0) || !std::isfinite(w))
      throw std::invalid_argument(fmt::format("--data-weights '{}': '{}' is not a positive number (give one weight per "
                                              "--data folder, separated by commas: 0.8,0.2)",
                                              text, item));
    weights.push_back(w);
    if (end == text.size()) return weights;
    start = end + 1;
  }
}

std::vector<std::string> training_files(const TrainOptions& o) {
  if (!o.data.empty()) return o.data;
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(kDefaultCorpusDir, ec))
    if (entry.is_regular_file() && !entry.path().has_extension()) files.push_back(entry.path().string());
  if (files.empty())
    throw std::runtime_error(fmt::format("no --data given and no default corpus in {} (install the Debian package "
                                         "'fortunes', or name text files with --data)",
                                         kDefaultCorpusDir));
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace tinygpt::train
