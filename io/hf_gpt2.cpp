#include "hf_gpt2.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <stdexcept>

#include "../data/gpt2_vocab.h"
#include "../data/input_file.h"
#include "../data/json.h"
#include "detail/hf_folder.h"
#include "output_files.h"
#include "safetensors.h"
#include "weight_map.h"

namespace tinygpt::io {

namespace {

namespace fs = std::filesystem;
using data::json::Value;

std::string without_prefix(const std::string& name) { return name.substr(std::string("transformer.").size()); }

nn::GPTConfig read_config(const std::string& path) {
  data::InputFile file(path, "config");
  const Value doc = data::json::parse(file.read_all(int64_t{16} << 20).view(), fmt::format("config '{}'", path),
                                      data::json::kConfigLimits);
  auto fail = [&](const std::string& why) { throw std::runtime_error(fmt::format("config '{}': {}", path, why)); };
  if (doc.type != Value::Type::object) fail("not a JSON object");
  auto size = [&](const char* key, int64_t most) {
    const Value* v = doc.find(key);
    if (!v) fail(fmt::format("field \"{}\" is missing", key));
    if (!v->is_integer() || v->number < 1 || v->number > static_cast<double>(most))
      fail(fmt::format("field \"{}\" must be an integer in [1, {}] (got {})", key, most,
                       v->type == Value::Type::number ? v->text : v->type_name()));
    return static_cast<int64_t>(v->number);
  };
  auto text = [&](const char* key, std::initializer_list<const char*> allowed) {
    const Value* v = doc.find(key);
    if (!v) return;
    for (const char* a : allowed)
      if (v->type == Value::Type::string && v->text == a) return;
    fail(fmt::format("field \"{}\" is {}; tinygpt's GPT-2 needs {}", key,
                     v->type == Value::Type::string ? data::json::quote(v->text) : v->type_name(), fmt::join(allowed, " or ")));
  };
  auto flag = [&](const char* key, bool needed) {
    const Value* v = doc.find(key);
    if (v && (v->type != Value::Type::boolean || v->boolean != needed))
      fail(fmt::format("field \"{}\" must be {} for tinygpt's GPT-2", key, needed));
  };
  nn::GPTConfig c;
  c.vocab_size = size("vocab_size", nn::kMaxVocab);
  c.block_size = size("n_positions", nn::kMaxBlock);
  c.n_layer = size("n_layer", nn::kMaxLayers);
  c.n_head = size("n_head", nn::kMaxHeads);
  c.n_embd = size("n_embd", nn::kMaxEmbd);
  text("model_type", {"gpt2"});
  text("activation_function", {"gelu_new", "gelu_pytorch_tanh"});  // both GELU's tanh form, as tinygpt's
  if (const Value* eps = doc.find("layer_norm_epsilon"); eps && !(eps->type == Value::Type::number && eps->number == 1e-5))
    fail(fmt::format("field \"layer_norm_epsilon\" is {}; tinygpt's LayerNorm uses 1e-5",
                     eps->type == Value::Type::number ? eps->text : eps->type_name()));
  if (const Value* inner = doc.find("n_inner");
      inner && inner->type != Value::Type::null && !(inner->is_integer() && inner->number == 4.0 * c.n_embd))
    fail(fmt::format("field \"n_inner\" must be null or 4 n_embd = {}", 4 * c.n_embd));
  flag("scale_attn_weights", true);
  flag("scale_attn_by_inverse_layer_idx", false);
  flag("add_cross_attention", false);
  try {
    c.validate();
  } catch (const std::exception& e) {
    fail(e.what());
  }
  return c;
}

// Which of the file's tensors holds our parameter `name`: with or without "transformer.".
std::string file_name(const SafetensorsFile& st, const std::string& name) {
  const bool full = st.tensors().count(name), bare = st.tensors().count(without_prefix(name));
  if (full && bare) st.fail(fmt::format("it holds both '{}' and '{}'", name, without_prefix(name)));
  if (!full && !bare) st.fail(fmt::format("tensor '{}' is missing", without_prefix(name)));
  return full ? name : without_prefix(name);
}

bool is_mask_buffer(const std::string& name, int64_t n_layer) {
  const std::string bare = name.starts_with("transformer.") ? without_prefix(name) : name;
  for (int64_t i = 0; i < n_layer; ++i)
    for (const char* buffer : {".attn.bias", ".attn.masked_bias"})
      if (bare == fmt::format("h.{}{}", i, buffer)) return true;
  return false;
}

// A file with more or fewer blocks than config.json's n_layer: the config is what is wrong (or the
// file is another model's), which a missing or unexpected tensor would not say.
void refuse_layers_past_config(const SafetensorsFile& st, const nn::GPTConfig& config) {
  int64_t blocks = 0;
  for (const auto& [name, t] : st.tensors()) {
    const std::string bare = name.starts_with("transformer.") ? without_prefix(name) : name;
    int64_t layer = 0;
    if (bare.starts_with("h.") && std::sscanf(bare.c_str(), "h.%ld.", &layer) == 1 && layer >= 0)
      blocks = std::max(blocks, layer + 1);
  }
  if (blocks != config.n_layer)
    throw std::runtime_error(fmt::format("config.json says n_layer {}, but '{}' holds blocks h.0 to h.{}: the config "
                                         "does not describe this model", config.n_layer, st.path(), blocks - 1));
}

}  // namespace

HfGpt2 import_hf_gpt2(const std::string& dir, std::shared_ptr<const data::Tokenizer> tokenizer) {
  const nn::GPTConfig config = read_config((fs::path(dir) / "config.json").string());
  std::string tokenizer_files = "given";
  if (tokenizer) {
    std::error_code ec;
    for (const char* own : {"vocab.json", "encoder.json"})
      if (fs::exists(fs::path(dir) / own, ec))
        throw std::invalid_argument(fmt::format("'{}' has a tokenizer of its own ({}): a tokenizer given beside it "
                                                "would be a second one",
                                                dir, own));
    require_vocab_holds(*tokenizer, config.vocab_size, dir);
  } else {
    const data::Gpt2TokenizerFiles files = data::find_gpt2_tokenizer(dir);
    tokenizer = std::make_shared<const data::BpeTokenizer>(data::read_gpt2_tokenizer(files, config.vocab_size));
    tokenizer_files = files.pair;
  }
  const SafetensorsFile st((fs::path(dir) / "model.safetensors").string());
  refuse_layers_past_config(st, config);
  // Every name and shape first, so that nothing is allocated for a file that does not fit.
  WeightMap map = hf_gpt2_weights(config);
  std::set<std::string> used;
  for (FileTensor& t : map) {
    t.name = file_name(st, t.name);  // the file's own spelling: with or without "transformer."
    st.expect(t.name, file_shape(t, config), "config.json");
    used.insert(t.name);
  }
  bool lm_head = false;
  for (const auto& [name, t] : st.tensors()) {
    if (used.count(name) || is_mask_buffer(name, config.n_layer)) continue;
    if (name != "lm_head.weight") st.fail(fmt::format("tensor '{}' is not part of a GPT-2 model", name));
    st.expect(name, Shape{config.vocab_size, config.n_embd}, "wte (tied to it)");
    lm_head = true;
  }
  HfGpt2 out{nn::GPT::unwritten(config), tokenizer, tokenizer_files};  // every parameter is read below
  read_weights(map, safetensors_reader(st, "config.json"), *out.model);
  std::vector<float> buffer;
  if (lm_head) {  // tinygpt ties the output layer to wte: only an equal copy can be dropped
    const Tensor& wte = out.model->wte.weight;
    buffer.resize(static_cast<size_t>(wte.numel()));
    st.read("lm_head.weight", wte.shape(), "wte (tied to it)", buffer);
    if (!std::equal(buffer.begin(), buffer.end(), wte.data()))
      st.fail("tensor 'lm_head.weight' differs from wte's weights; tinygpt ties the two, so it cannot hold this model");
  }
  return out;
}

std::string gpt2_files_problem(const data::Tokenizer& tokenizer) {
  const auto* bpe = dynamic_cast<const data::BpeTokenizer*>(&tokenizer);
  if (!bpe)
    return fmt::format("a {} tokenizer has no Hugging Face GPT-2 equivalent (GPT-2's is a byte-level BPE)",
                       data::name(tokenizer.kind()));
  try {
    data::gpt2_files(*bpe);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

void export_hf_gpt2(const nn::GPT& model, const data::Tokenizer& tokenizer, const std::string& dir, bool force,
                    ExportTokenizer with) {
  // The tokenizer's files first: nothing is written when they cannot be.
  std::optional<data::Gpt2Files> files;
  if (with == ExportTokenizer::required) {
    if (const std::string problem = gpt2_files_problem(tokenizer); !problem.empty())
      throw std::invalid_argument(fmt::format("export: {}; give --weights-only to write the weights alone (import them "
                                              "back with --tokenizer-from)",
                                              problem));
    files = data::gpt2_files(dynamic_cast<const data::BpeTokenizer&>(tokenizer));
  }
  // A tokenizer that is not written leaves no stale one beside the new model.
  StagedFolder out = export_folder(dir, {"config.json", "model.safetensors", "vocab.json", "merges.txt"}, force);
  const nn::GPTConfig& c = model.config();
  const std::string config = fmt::format(
      "{{\n  \"architectures\": [\"GPT2LMHeadModel\"],\n  \"model_type\": \"gpt2\",\n  \"vocab_size\": {},\n"
      "  \"n_positions\": {},\n  \"n_ctx\": {},\n  \"n_embd\": {},\n  \"n_layer\": {},\n  \"n_head\": {},\n"
      "  \"n_inner\": null,\n  \"activation_function\": \"gelu_new\",\n  \"layer_norm_epsilon\": 1e-05,\n"
      "  \"resid_pdrop\": 0.0,\n  \"embd_pdrop\": 0.0,\n  \"attn_pdrop\": 0.0,\n  \"scale_attn_weights\": true,\n"
      "  \"tie_word_embeddings\": true{}\n}}\n",
      c.vocab_size, c.block_size, c.block_size, c.n_embd, c.n_layer, c.n_head,
      files && tokenizer.vocab_size() > 50256 && tokenizer.token_bytes(50256) == "<|endoftext|>"
          ? ",\n  \"bos_token_id\": 50256,\n  \"eos_token_id\": 50256"
          : "");
  auto write = [&](const char* name, const std::string& text) { write_file_atomically(out.file(name), text); };
  write("config.json", config);
  write_safetensors(out.file("model.safetensors"), weight_tensors(hf_gpt2_weights(c), model));
  if (files) {
    write("vocab.json", files->vocab_json);
    write("merges.txt", files->merges_txt);
  }
  out.commit();
}

}  // namespace tinygpt::io
