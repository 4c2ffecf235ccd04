#include "hf_llama.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <filesystem>
#include <set>
#include <stdexcept>

#include "../data/input_file.h"
#include "../data/json.h"
#include "detail/hf_folder.h"
#include "output_files.h"
#include "safetensors.h"
#include "weight_map.h"
#include "sentencepiece_model.h"

namespace tinygpt::io {

namespace {

namespace fs = std::filesystem;
using data::json::Value;

Value read_json(const std::string& path) {
  data::InputFile file(path, "config");
  return data::json::parse(file.read_all(int64_t{16} << 20).view(), fmt::format("config '{}'", path),
                           data::json::kConfigLimits);
}

nn::GPTConfig read_llama_config(const std::string& path) {
  const Value doc = read_json(path);
  auto fail = [&](const std::string& why) { throw std::runtime_error(fmt::format("config '{}': {}", path, why)); };
  if (doc.type != Value::Type::object) fail("not a JSON object");
  auto shown = [](const Value* v) { return v->type == Value::Type::number ? v->text : std::string(v->type_name()); };
  auto size = [&](const char* key, int64_t most, int64_t fallback) {
    const Value* v = doc.find(key);
    if (!v || v->type == Value::Type::null) {
      if (fallback > 0) return fallback;
      fail(fmt::format("field \"{}\" is missing", key));
    }
    if (!v->is_integer() || v->number < 1 || v->number > static_cast<double>(most))
      fail(fmt::format("field \"{}\" must be an integer in [1, {}] (got {})", key, most, shown(v)));
    return static_cast<int64_t>(v->number);
  };
  auto number = [&](const char* key, double fallback) {
    const Value* v = doc.find(key);
    if (!v) return fallback;
    if (v->type != Value::Type::number || !(v->number > 0) || !std::isfinite(v->number))
      fail(fmt::format("field \"{}\" must be a positive number (got {})", key, shown(v)));
    return v->number;
  };
  auto flag = [&](const char* key, bool fallback) {
    const Value* v = doc.find(key);
    if (!v) return fallback;
    if (v->type != Value::Type::boolean) fail(fmt::format("field \"{}\" must be true or false", key));
    return v->boolean;
  };
  auto unsupported = [&](const char* key, const char* what) {
    const Value* v = doc.find(key);
    return v && !(v->type == Value::Type::null || (v->type == Value::Type::boolean && !v->boolean)) ? what : nullptr;
  };
  if (const Value* type = doc.find("model_type"); !type || type->type != Value::Type::string || type->text != "llama")
    fail("field \"model_type\" is not \"llama\"");
  if (const Value* act = doc.find("hidden_act"); act && !(act->type == Value::Type::string && act->text == "silu"))
    fail("field \"hidden_act\" is not \"silu\" (tinygpt's SwiGLU)");
  for (const auto& [key, what] : {std::pair{"attention_bias", "biases on the attention's projections"},
                                  std::pair{"mlp_bias", "biases in the MLP"},
                                  std::pair{"rope_scaling", "RoPE scaling"}})
    if (unsupported(key, what)) fail(fmt::format("field \"{}\" asks for {}, which tinygpt does not compute", key, what));
  nn::GPTConfig c;
  c.n_embd = size("hidden_size", nn::kMaxEmbd, 0);
  c.n_head = size("num_attention_heads", nn::kMaxHeads, 0);
  c = nn::llama_style({.vocab_size = size("vocab_size", nn::kMaxVocab, 0),
                       .block_size = size("max_position_embeddings", nn::kMaxBlock, 0),
                       .n_layer = size("num_hidden_layers", nn::kMaxLayers, 0), .n_head = c.n_head, .n_embd = c.n_embd});
  c.ffn_hidden = size("intermediate_size", 4 * nn::kMaxEmbd, 0);
  c.n_kv_head = size("num_key_value_heads", nn::kMaxHeads, c.n_head);
  c.norm_eps = static_cast<float>(number("rms_norm_eps", 1e-6));  // LlamaConfig's defaults
  c.rope_theta = static_cast<float>(number("rope_theta", 10000.0));
  c.tie_embeddings = flag("tie_word_embeddings", false);
  if (const Value* hd = doc.find("head_dim"); hd && hd->type != Value::Type::null &&
                                              !(hd->is_integer() && hd->number == static_cast<double>(c.n_embd / c.n_head)))
    fail(fmt::format("field \"head_dim\" is {}; tinygpt's heads are hidden_size / num_attention_heads = {}", shown(hd),
                     c.n_embd / c.n_head));
  try {
    c.validate();
  } catch (const std::exception& e) {
    fail(e.what());
  }
  return c;
}

bool is_rotary_buffer(const std::string& name) { return name.ends_with(".self_attn.rotary_emb.inv_freq"); }

}  // namespace

bool is_hf_llama_dir(const std::string& dir) {
  std::error_code ec;
  const fs::path config = fs::path(dir) / "config.json";
  if (!fs::is_regular_file(config, ec)) return false;
  try {
    const Value doc = read_json(config.string());
    const Value* type = doc.find("model_type");
    return type && type->type == Value::Type::string && type->text == "llama";
  } catch (const std::exception&) {
    return false;  // not JSON: the GPT-2 reader reports it
  }
}

HfLlama import_hf_llama(const std::string& dir, std::shared_ptr<const data::Tokenizer> tokenizer) {
  const nn::GPTConfig config = read_llama_config((fs::path(dir) / "config.json").string());
  const std::string model_file = (fs::path(dir) / "tokenizer.model").string();
  std::error_code ec;
  if (tokenizer && fs::exists(model_file, ec))
    throw std::invalid_argument(fmt::format("'{}' has a tokenizer of its own (tokenizer.model): a tokenizer given "
                                            "beside it would be a second one",
                                            dir));
  if (!tokenizer) tokenizer = read_sentencepiece_file(model_file);
  require_vocab_holds(*tokenizer, config.vocab_size, dir);
  const SafetensorsFile st((fs::path(dir) / "model.safetensors").string());
  // Every name and shape first, so that nothing is allocated for a file that does not fit.
  const WeightMap map = hf_llama_weights(config);
  std::set<std::string> used;
  for (const FileTensor& t : map) {
    st.expect(t.name, file_shape(t, config), "config.json");
    used.insert(t.name);
  }
  const bool tied_copy = config.tie_embeddings && st.tensors().count("lm_head.weight");
  const Shape embeddings = {config.vocab_size, config.n_embd};
  if (tied_copy) st.expect("lm_head.weight", embeddings, "the embeddings (tied to them)");
  for (const auto& [name, t] : st.tensors())
    if (!used.count(name) && !is_rotary_buffer(name) && !(tied_copy && name == "lm_head.weight"))
      st.fail(fmt::format("tensor '{}' is not part of this Llama model", name));
  HfLlama out{nn::GPT::unwritten(config), tokenizer};  // every parameter is read below
  read_weights(map, safetensors_reader(st, "config.json"), *out.model);
  std::vector<float> buffer;
  if (tied_copy) {  // only an equal copy can be tied
    buffer.resize(static_cast<size_t>(numel(embeddings)));
    st.read("lm_head.weight", embeddings, "the embeddings (tied to them)", buffer);
    if (!std::equal(buffer.begin(), buffer.end(), out.model->wte.weight.data()))
      st.fail("tensor 'lm_head.weight' differs from the embeddings, but config.json says tie_word_embeddings");
  }
  return out;
}

void export_hf_llama(const nn::GPT& model, const data::Tokenizer& tokenizer, const std::string& dir, bool force,
                     ExportTokenizer with) {
  const nn::GPTConfig& c = model.config();
  if (c.norm != nn::NormKind::rmsnorm || c.position != nn::PositionKind::rope || c.mlp != nn::MlpKind::swiglu || c.bias)
    throw std::invalid_argument(fmt::format("export: Hugging Face's Llama is RMSNorm, RoPE and SwiGLU without biases; "
                                            "this model has {}, {} positions, {}{} (train with --arch llama)",
                                            nn::name(c.norm), nn::name(c.position), nn::name(c.mlp),
                                            c.bias ? " and biases" : ""));
  const auto* sp = dynamic_cast<const data::SentencePieceTokenizer*>(&tokenizer);
  if (with == ExportTokenizer::required && !sp)
    throw std::invalid_argument(fmt::format("export: a {} tokenizer has no place in Hugging Face's Llama folder (its "
                                            "tokenizer.model is a SentencePiece model); give --weights-only to write "
                                            "the weights alone (import them back with --tokenizer-from)",
                                            data::name(tokenizer.kind())));
  if (with == ExportTokenizer::omitted) sp = nullptr;
  StagedFolder out = export_folder(dir, {"config.json", "model.safetensors", "tokenizer.model"}, force);
  const std::string config = fmt::format(
      "{{\n  \"architectures\": [\"LlamaForCausalLM\"],\n  \"model_type\": \"llama\",\n  \"vocab_size\": {},\n"
      "  \"hidden_size\": {},\n  \"intermediate_size\": {},\n  \"num_hidden_layers\": {},\n"
      "  \"num_attention_heads\": {},\n  \"num_key_value_heads\": {},\n  \"max_position_embeddings\": {},\n"
      "  \"rms_norm_eps\": {},\n  \"rope_theta\": {},\n  \"hidden_act\": \"silu\",\n  \"attention_bias\": false,\n"
      "  \"mlp_bias\": false,\n  \"rope_scaling\": null,\n  \"tie_word_embeddings\": {},\n"
      "  \"torch_dtype\": \"float32\"{}\n}}\n",
      c.vocab_size, c.n_embd, c.hidden(), c.n_layer, c.n_head, c.kv_heads(), c.block_size, c.norm_eps, c.rope_theta,
      c.tie_embeddings,
      sp ? fmt::format(",\n  \"bos_token_id\": {},\n  \"eos_token_id\": {}", sp->bos_id(), sp->eos_id()) : "");
  auto write = [&](const char* name, const std::string& bytes) { write_file_atomically(out.file(name), bytes); };
  write("config.json", config);
  write_safetensors(out.file("model.safetensors"), weight_tensors(hf_llama_weights(c), model));
  if (sp) write("tokenizer.model", sp->model_proto());
  out.commit();
}

}  // namespace tinygpt::io
