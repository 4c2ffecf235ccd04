#include "checkpoint.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "../io/hdf5_reader.h"
#include "../io/hdf5_seal.h"
#include "../io/hdf5_writer.h"
#include "../io/tokenizer_group.h"

namespace tinygpt::train {

namespace {

using io::kFormatVersion, io::kFormatVersionSpecials, io::kFormatVersionLlama;

int format_version(const nn::GPTConfig& config, const data::Tokenizer& tokenizer) {
  return config.gpt2_shaped() ? io::tokenizer_format_version(tokenizer) : kFormatVersionLlama;
}
constexpr double kMany = 1e12;
constexpr const char* kTokenizerFormat = "tinygpt-tokenizer";
constexpr int64_t kMaxRanks = 65536;

// ---- writing -----------------------------------------------------------------------------------

// Newline-joined lines: an attribute while they fit in one (HDF5 caps an attribute at 64 KiB), else a
// uint8 dataset of the same text (a folder of thousands of shards lists a line for each).
constexpr size_t kLinesInAttribute = 32 << 10;

void put_lines(const io::hdf5::GroupWriter& g, const char* name, const std::vector<std::string>& lines) {
  std::string joined;
  for (size_t k = 0; k < lines.size(); ++k) joined += (k > 0 ? "\n" : "") + lines[k];
  if (joined.size() <= kLinesInAttribute) g.put(name, joined);
  else g.put_bytes(name, joined);
}

void write_train_state(const io::hdf5::GroupWriter& root, const TrainState& s) {
  const io::hdf5::GroupWriter g = root.group("train");
  g.put("iteration", s.iteration);
  g.put_words("rng_state", s.sampler_states.at(0).data(), {4});
  g.put("world_size", static_cast<int64_t>(s.sampler_states.size()));
  if (s.sampler_states.size() > 1)
    g.put_words("rank_rng_states", s.sampler_states.data()->data(), {s.sampler_states.size(), 4});
  g.put("dropout_counter", static_cast<int64_t>(s.dropout_counter));
  g.put("train_loss", s.train_loss);
  g.put("val_loss", s.val_loss);
  g.put("tokens_seen", s.tokens_seen);
  g.put("seconds", s.seconds);
  g.put("train_tokens", s.train_tokens);
  g.put("val_tokens", s.val_tokens);
  g.put("best_val_loss", s.best_val_loss);
  g.put("eval_pending", int64_t{s.eval_pending});
  g.put("init_from", s.init_from);
  put_lines(g, "given_settings", s.given);
  put_lines(g, "data_files", data_lines(s.data_files));
  put_lines(g, "changes", s.changes);
  put_lines(g, "spike_guard", guard_lines(s.guard));
  TrainOptions o = s.options;
  for_each_option(o, [&](const char* name, auto& field, const char*, const Range&, Choices choices) {
    using T = std::decay_t<decltype(field)>;
    if constexpr (std::is_same_v<T, bool>)
      g.put(name, int64_t{field});
    else if constexpr (std::is_enum_v<T>)
      g.put(name, std::string(choices[static_cast<size_t>(field)]));
    else if constexpr (std::is_same_v<T, std::vector<std::string>>)
      put_lines(g, name, field);
    else
      g.put(name, field);
  });
}

void write_file(const io::hdf5::GroupWriter& root, const nn::GPT& model, const data::Tokenizer& tokenizer,
                const optim::AdamW* optimizer, const TrainState* state) {
  root.put("format", std::string("tinygpt"));
  const nn::GPTConfig& c = model.config();
  const int version = format_version(c, tokenizer);
  root.put_int32("format_version", version);
  const io::hdf5::GroupWriter config = root.group("config");
  config.put("vocab_size", c.vocab_size);
  config.put("block_size", c.block_size);
  config.put("n_layer", c.n_layer);
  config.put("n_head", c.n_head);
  config.put("n_embd", c.n_embd);
  if (version == kFormatVersionLlama) {  // every Llama-family field, defaults included
    config.put("norm", std::string(nn::name(c.norm)));
    config.put("norm_eps", static_cast<double>(c.norm_eps));
    config.put("position", std::string(nn::name(c.position)));
    config.put("rope_theta", static_cast<double>(c.rope_theta));
    config.put("mlp", std::string(nn::name(c.mlp)));
    config.put("ffn_hidden", c.hidden());
    config.put("n_kv_head", c.kv_heads());
    config.put("bias", int64_t{c.bias});
    config.put("tie_embeddings", int64_t{c.tie_embeddings});
  }
  const io::hdf5::GroupWriter weights = root.group("model");
  for (const auto& [name, p] : model.named_parameters()) weights.put_floats(name, p);
  io::write_tokenizer_group(root, tokenizer);
  if (optimizer) {
    const io::hdf5::GroupWriter g = root.group("optim");
    g.put("step", optimizer->steps());
    g.put("lr", static_cast<double>(optimizer->options().lr));
    g.put("beta1", static_cast<double>(optimizer->options().beta1));
    g.put("beta2", static_cast<double>(optimizer->options().beta2));
    g.put("eps", static_cast<double>(optimizer->options().eps));
    g.put("weight_decay", static_cast<double>(optimizer->options().weight_decay));
    const io::hdf5::GroupWriter m = g.group("m"), v = g.group("v");
    for (const auto& s : optimizer->state())
      m.put_floats(s.name, s.m), v.put_floats(s.name, s.v, io::hdf5::FloatValues::non_negative);
  }
  if (state) write_train_state(root, *state);
}

// ---- reading -----------------------------------------------------------------------------------

// The Llama family's optional /config fields (format_version 3); an absent one keeps its default.
void read_llama_fields(const io::hdf5::Reader& r, const io::hdf5::Group& g, nn::GPTConfig& c) {
  auto has = [&](const char* name) { return g.attributes.count(name) > 0; };
  auto kind = [&](const char* name, auto parse) {
    try {
      return parse(r.text(g, "/config", name));
    } catch (const std::invalid_argument& e) {
      r.fail(fmt::format("/config: {}", e.what()));
    }
  };
  auto flag = [&](const char* name) { return r.integer(g, "/config", name, Range{0, 1}) == 1; };
  if (has("norm")) c.norm = kind("norm", nn::parse_norm);
  if (has("norm_eps")) c.norm_eps = static_cast<float>(r.number(g, "/config", "norm_eps", Range{0, nn::kMaxNormEps, true}));
  if (has("position")) c.position = kind("position", nn::parse_position);
  if (has("rope_theta")) c.rope_theta = static_cast<float>(r.number(g, "/config", "rope_theta", Range{0, nn::kMaxRopeTheta, true}));
  if (has("mlp")) c.mlp = kind("mlp", nn::parse_mlp);
  if (has("ffn_hidden")) c.ffn_hidden = r.integer(g, "/config", "ffn_hidden", Range{1, 4.0 * nn::kMaxEmbd});
  if (has("n_kv_head")) c.n_kv_head = r.integer(g, "/config", "n_kv_head", Range{1, double(nn::kMaxHeads)});
  if (has("bias")) c.bias = flag("bias");
  if (has("tie_embeddings")) c.tie_embeddings = flag("tie_embeddings");
}

nn::GPTConfig read_config(const io::hdf5::Reader& r, int64_t version) {
  const io::hdf5::Group& g = r.group("/config");
  nn::GPTConfig c;
  c.vocab_size = r.integer(g, "/config", "vocab_size", Range{1, double(nn::kMaxVocab)});
  c.block_size = r.integer(g, "/config", "block_size", Range{1, double(nn::kMaxBlock)});
  c.n_layer = r.integer(g, "/config", "n_layer", Range{1, double(nn::kMaxLayers)});
  c.n_head = r.integer(g, "/config", "n_head", Range{1, double(nn::kMaxHeads)});
  c.n_embd = r.integer(g, "/config", "n_embd", Range{1, double(nn::kMaxEmbd)});
  read_llama_fields(r, g, c);
  if (version < kFormatVersionLlama && !c.gpt2_shaped())
    r.fail(fmt::format("/config has format_version 3's Llama fields in a version {} file", version));
  try {
    c.validate();
  } catch (const std::exception& e) {
    r.fail(fmt::format("/config is invalid: {}", e.what()));
  }
  return c;
}

// /config and /model agree: every parameter of that config is there in its shape, and nothing else
// is; checked on the shapes alone, before a model is allocated.
void check_model_datasets(const io::hdf5::Reader& r, const nn::GPTConfig& c, const std::string& group) {
  r.check_named(group, nn::parameter_shapes(c),
                fmt::format("the model that /config describes ({} layers)", c.n_layer));
}


// The optimizer's settings, and its moments' names and shapes; their values only for `everything`.
void read_optimizer(const io::hdf5::Reader& r, Checkpoint& ck, CheckpointPart part) {
  const io::hdf5::Group& g = r.group("/optim");
  auto hyper = [&](const char* name, const Range& range) { return r.number(g, "/optim", name, range); };
  auto single = [&](const char* name, const Range& range) { return static_cast<float>(hyper(name, range)); };
  ck.optim = optim::AdamWOptions{single("lr", Range{0, 10}), hyper("beta1", Range{0, 1, false, true}),
                                 hyper("beta2", Range{0, 1, false, true}), single("eps", Range{0, 1, true}),
                                 single("weight_decay", Range{0, 100})};
  ck.optim_step = r.integer(g, "/optim", "step", Range{0, kMany});
  check_model_datasets(r, ck.config, "/optim/m");
  check_model_datasets(r, ck.config, "/optim/v");
  if (part == CheckpointPart::weights) return ck.optim.reset();
  for (const auto& [name, p] : ck.model->named_parameters()) {
    ck.m[name] = Tensor::empty(p.shape());
    ck.v[name] = Tensor::empty(p.shape());
    r.floats("/optim/m/" + name, ck.m[name]);
    r.floats("/optim/v/" + name, ck.v[name], io::hdf5::FloatValues::non_negative);
  }
}

// Run options added after format_version 1's first files: absent, they keep their defaults (the
// behaviour those files were written with).
bool option_may_be_absent(std::string_view name) {
  for (const char* later : {"precision", "lr-decay-iters", "beta1", "beta2", "sample-every", "keep-best", "tokenizer-from",
                           "snapshot-every", "arch", "norm", "norm-eps", "position", "rope-theta", "mlp", "ffn-hidden",
                           "kv-heads", "bias", "tie", "tokenizer-model", "data-weights", "spike-loss", "spike-grad",
                           "spike-window", "spike-patience", "eval-task", "bf16-kernels"})
    if (name == later) return true;
  return false;
}

// The most bytes of lines a checkpoint may hold in one dataset (a million shards' lines).
constexpr size_t kMaxLinesBytes = size_t{256} << 20;

bool has_lines(const io::hdf5::Group& g, const char* name) {
  return g.attributes.count(name) > 0 || g.datasets.count(name) > 0;
}

// put_lines' text, from the attribute or the dataset; absent: none.
std::vector<std::string> lines_of(const io::hdf5::Reader& r, const io::hdf5::Group& g, const char* name) {
  std::vector<std::string> lines;
  if (g.attributes.count(name) && g.datasets.count(name))
    r.fail(fmt::format("/train holds '{}' both as an attribute and as a dataset", name));
  if (!has_lines(g, name)) return lines;
  const std::string joined = g.datasets.count(name) ? r.bytes(fmt::format("/train/{}", name), kMaxLinesBytes)
                                                    : r.text(g, "/train", name);
  for (size_t start = 0; start < joined.size();) {
    size_t end = joined.find('\n', start);
    if (end == std::string::npos) end = joined.size();
    lines.push_back(joined.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

TrainState read_train_state(const io::hdf5::Reader& r) {
  const io::hdf5::Group& g = r.group("/train");
  const std::string where = "/train";
  TrainState s;
  s.iteration = r.integer(g, where, "iteration", Range{0, kMany});
  const int64_t world = g.attributes.count("world_size") ? r.integer(g, where, "world_size", Range{1, kMaxRanks}) : 1;
  s.sampler_states = r.rng_states(g, "rng_state", 1);
  if (world > 1) s.sampler_states = r.rng_states(g, "rank_rng_states", world);
  s.dropout_counter = static_cast<uint64_t>(r.integer(g, where, "dropout_counter", Range{0, 9.2e18}));
  // The last step's loss, as it was: nan or inf when the spike guard skipped that step.
  s.train_loss = r.number(g, where, "train_loss", Range{0, 1e30}, io::hdf5::Reader::Nan::non_finite_allowed);
  s.val_loss = r.number(g, where, "val_loss", Range{0, 1e30}, io::hdf5::Reader::Nan::allowed);  // NaN: no estimate yet
  s.tokens_seen = r.integer(g, where, "tokens_seen", Range{0, 9.2e18});
  s.seconds = r.number(g, where, "seconds", Range{0, 1e12});
  s.train_tokens = r.integer(g, where, "train_tokens", Range{0, 9.2e18});
  s.val_tokens = r.integer(g, where, "val_tokens", Range{0, 9.2e18});
  if (g.attributes.count("best_val_loss")) s.best_val_loss = r.number(g, where, "best_val_loss", Range{0, 1e30},
                                                                    io::hdf5::Reader::Nan::allowed);
  if (g.attributes.count("eval_pending")) s.eval_pending = r.integer(g, where, "eval_pending", Range{0, 1}) == 1;
  if (g.attributes.count("init_from")) s.init_from = r.text(g, where, "init_from");
  if (has_lines(g, "given_settings")) s.given = lines_of(r, g, "given_settings");
  try {
    s.data_files = parse_data_lines(lines_of(r, g, "data_files"));
  } catch (const std::invalid_argument& e) {
    r.fail(fmt::format("attribute 'data_files' of /train: {}", e.what()));
  }
  s.changes = lines_of(r, g, "changes");
  if (has_lines(g, "spike_guard")) {
    try {
      s.guard = parse_guard_lines(lines_of(r, g, "spike_guard"));
    } catch (const std::invalid_argument& e) {
      r.fail(fmt::format("attribute 'spike_guard' of /train: {}", e.what()));
    }
  }
  for_each_option(s.options, [&](const char* name, auto& field, const char*, const Range& range, Choices choices) {
    using T = std::decay_t<decltype(field)>;
    if (!has_lines(g, name) && option_may_be_absent(name)) return;  // keeps its default
    if constexpr (std::is_same_v<T, std::string>) {
      field = r.text(g, where, name);
    } else if constexpr (std::is_enum_v<T>) {
      const std::string text = r.text(g, where, name);
      const std::optional<T> value = parse_choice<T>(text, choices);
      if (!value) r.fail(fmt::format("attribute '{}' of /train {}", name, choice_problem(text, choices)));
      field = *value;
    } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
      if (!has_lines(g, name)) r.fail(fmt::format("/train has no attribute '{}'", name));
      field = lines_of(r, g, name);
    } else if constexpr (std::is_same_v<T, bool>) {
      field = r.integer(g, where, name, Range{0, 1}) != 0;
    } else if constexpr (std::is_integral_v<T>) {
      field = r.integer(g, where, name, range);
    } else {
      field = r.number(g, where, name, range);
    }
  });
  try {
    validate(s.options);
  } catch (const std::exception& e) {
    r.fail(fmt::format("the run options in /train are invalid: {}", e.what()));
  }
  if (s.iteration > s.options.iters)
    r.fail(fmt::format("/train is at iteration {}, past its iters {}", s.iteration, s.options.iters));
  return s;
}

Checkpoint read_file(const io::hdf5::Reader& r, bool sealed, CheckpointPart part) {
  const io::hdf5::Group& root = r.group("/");
  if (!root.attributes.count("format") || r.text(root, "/", "format") != "tinygpt")
    r.fail("not a tinygpt checkpoint (the root attribute format is not \"tinygpt\")");
  const int64_t version = r.integer(root, "/", "format_version", Range{0, kMany});
  if (version < kFormatVersion || version > kFormatVersionLlama)
    r.fail(fmt::format("format_version {} is not supported (this tinygpt reads versions {} to {})", version,
                       kFormatVersion, kFormatVersionLlama));
  Checkpoint ck;
  ck.sealed = sealed;
  ck.config = read_config(r, version);
  check_model_datasets(r, ck.config, "/model");
  ck.tokenizer = io::read_tokenizer_group(r, version);
  if (ck.tokenizer->vocab_size() > ck.config.vocab_size)  // more rows than tokens: padding (nanoGPT's 50304)
    r.fail(fmt::format("the tokenizer has {} tokens but /config vocab_size is only {}", ck.tokenizer->vocab_size(),
                       ck.config.vocab_size));
  ck.model = nn::GPT::unwritten(ck.config);  // its size is bounded: every weight is in the file
  for (auto& [name, p] : ck.model->named_parameters()) r.floats("/model/" + name, p);
  if (r.find_group("/optim")) read_optimizer(r, ck, part);
  if (r.find_group("/train")) ck.train = read_train_state(r);
  return ck;
}

}  // namespace

void write_checkpoint(const std::string& path, const nn::GPT& model, const data::Tokenizer& tokenizer,
                      const optim::AdamW* optimizer, const TrainState* state) {
  io::hdf5::write_sealed(path, "checkpoint", [&](const io::hdf5::GroupWriter& root) {
    write_file(root, model, tokenizer, optimizer, state);
  });
}

Checkpoint read_checkpoint(const std::string& path, CheckpointPart part) {
  if (part == CheckpointPart::weights) {
    const io::hdf5::OpenedCheckpoint opened = io::hdf5::open_checkpoint_streamed(path);
    const io::hdf5::Reader reader("checkpoint", path, *opened.file);
    try {
      return read_file(reader, opened.sealed, part);
    } catch (const std::invalid_argument& e) {
      reader.fail(e.what());
    }
  }
  io::hdf5::CheckpointImage image = io::hdf5::read_checkpoint_image(path);
  const bool sealed = image.sealed;
  const io::hdf5::File file = io::hdf5::open_checkpoint_image(std::move(image), path);
  const io::hdf5::Reader reader("checkpoint", path, file);
  try {
    return read_file(reader, sealed, part);
  } catch (const std::invalid_argument& e) {  // e.g. a tokenizer whose data does not make sense
    reader.fail(e.what());
  }
}

void write_tokenizer_file(const std::string& path, const data::Tokenizer& tokenizer) {
  io::hdf5::write_sealed(path, "tokenizer file", [&](const io::hdf5::GroupWriter& root) {
    root.put("format", std::string(kTokenizerFormat));
    root.put_int32("format_version", io::tokenizer_format_version(tokenizer));
    io::write_tokenizer_group(root, tokenizer);
  });
}

std::shared_ptr<const data::Tokenizer> read_tokenizer_file(const std::string& path) {
  io::hdf5::CheckpointImage image = io::hdf5::read_checkpoint_image(path);
  const io::hdf5::File file = io::hdf5::open_checkpoint_image(std::move(image), path);
  const io::hdf5::Reader r("tokenizer file", path, file);
  try {
    const io::hdf5::Group& root = r.group("/");
    const std::string format = root.attributes.count("format") ? r.text(root, "/", "format") : "";
    if (format != kTokenizerFormat && format != "tinygpt")
      r.fail(fmt::format("not a tinygpt tokenizer file or checkpoint (the root attribute format is not \"{}\" or "
                         "\"tinygpt\")",
                         kTokenizerFormat));
    const int64_t version = r.integer(root, "/", "format_version", Range{0, kMany});
    if (version < kFormatVersion || version > kFormatVersionLlama)
      r.fail(fmt::format("format_version {} is not supported", version));
    return io::read_tokenizer_group(r, version);
  } catch (const std::invalid_argument& e) {
    r.fail(e.what());
  }
}

}  // namespace tinygpt::train
