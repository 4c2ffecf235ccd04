// Hugging Face's Llama layout: what export_hf_llama writes computes our model under Hugging Face's
// own RoPE convention (rotate_half, read by the plain double model straight from the files, rows as
// written), import reads it back bit for bit, and folders that do not fit are refused.
#include <catch2/catch.hpp>

#include <filesystem>

#include "random_ids.h"
#include "reference/plain_model.h"
#include "sentencepiece_model.h"
#include "temp_files.h"
#include "tinygpt/autograd/graph.h"
#include "tinygpt/io/hf_llama.h"
#include "tinygpt/io/safetensors.h"
#include "tinygpt/io/sentencepiece_model.h"

using namespace tinygpt;
using namespace tinygpt::testing;
namespace fs = std::filesystem;

namespace {

std::shared_ptr<nn::GPT> hf_llama_model(bool tied) {
  nn::GPTConfig c = nn::llama_style({.vocab_size = 400, .block_size = 10, .n_layer = 2, .n_head = 4, .n_embd = 16}, 4);
  c.n_kv_head = 2, c.tie_embeddings = tied, c.rope_theta = 500, c.norm_eps = 1e-6f;
  auto model = std::make_shared<nn::GPT>(c, 3);
  NoGradGuard no_grad;
  uint64_t seed = 70;
  for (Tensor& p : model->parameters()) p.copy_from_(p + Tensor::randn(p.shape(), ++seed, 0.3f));
  return model;
}

// The folder's tensors under the checkpoint's names, rows as Hugging Face wrote them (q and k permuted).
PlainModel plain_from_hf(const std::string& dir, const nn::GPTConfig& c) {
  const io::SafetensorsFile st((fs::path(dir) / "model.safetensors").string());
  PlainModel m;
  m.c = c, m.rotate_half = true;
  auto tensor = [&](const std::string& name) {
    const auto& t = st.tensors().at(name);
    int64_t n = 1;
    for (int64_t d : t.shape) n *= d;
    std::vector<float> v(static_cast<size_t>(n));
    st.read(name, t.shape, "the test", v);
    return v;
  };
  auto joined = [&](std::initializer_list<std::string> names) {
    std::vector<float> all;
    for (const std::string& n : names) {
      const std::vector<float> v = tensor(n);
      all.insert(all.end(), v.begin(), v.end());
    }
    return all;
  };
  m.p["transformer.wte.weight"] = tensor("model.embed_tokens.weight");
  for (int64_t i = 0; i < c.n_layer; ++i) {
    const std::string ours = "transformer.h." + std::to_string(i) + ".", hf = "model.layers." + std::to_string(i) + ".";
    m.p[ours + "ln_1.weight"] = tensor(hf + "input_layernorm.weight");
    m.p[ours + "attn.c_attn.weight"] =
        joined({hf + "self_attn.q_proj.weight", hf + "self_attn.k_proj.weight", hf + "self_attn.v_proj.weight"});
    m.p[ours + "attn.c_proj.weight"] = tensor(hf + "self_attn.o_proj.weight");
    m.p[ours + "ln_2.weight"] = tensor(hf + "post_attention_layernorm.weight");
    m.p[ours + "mlp.c_fc.weight"] = joined({hf + "mlp.gate_proj.weight", hf + "mlp.up_proj.weight"});
    m.p[ours + "mlp.c_proj.weight"] = tensor(hf + "mlp.down_proj.weight");
  }
  m.p["transformer.ln_f.weight"] = tensor("model.norm.weight");
  if (!c.tie_embeddings) m.p["lm_head.weight"] = tensor("lm_head.weight");
  return m;
}

}  // namespace

TEST_CASE("hf llama: the files compute the model under Hugging Face's RoPE, and import back", "[hf][llama]") {
  TempDir dir;
  const auto tokenizer = io::read_sentencepiece_file(write_sentencepiece_model(dir));
  for (bool tied : {true, false}) {
    INFO("tied " << tied);
    const auto model = hf_llama_model(tied);
    const std::string out = dir.file(tied ? "tied" : "untied");
    io::export_hf_llama(*model, *tokenizer, out, false);
    REQUIRE(read_file(out + "/tokenizer.model") == tokenizer->model_proto());
    const std::vector<int32_t> ids = random_ids(10, 400, 9);
    NoGradGuard no_grad;
    const std::vector<float> ours = model->forward(ids, 1, 10).logits.to_vector();
    const Matrix theirs = plain_from_hf(out, model->config()).logits(ids);
    for (int64_t t = 0; t < 10; ++t)
      for (int64_t v = 0; v < 400; ++v) REQUIRE(ours[t * 400 + v] == Approx(theirs[t][v]).margin(1e-4).epsilon(1e-4));
    const io::HfLlama back = io::import_hf_llama(out);
    const nn::GPTConfig &a = model->config(), &b = back.model->config();
    REQUIRE(b.norm_eps == a.norm_eps);
    REQUIRE(b.rope_theta == a.rope_theta);
    REQUIRE(b.kv_heads() == 2);
    REQUIRE(b.hidden() == a.hidden());
    REQUIRE(b.tie_embeddings == tied);
    const auto pa = model->named_parameters(), pb = back.model->named_parameters();
    REQUIRE(pa.size() == pb.size());
    for (size_t i = 0; i < pa.size(); ++i) REQUIRE(pa[i].second.to_vector() == pb[i].second.to_vector());
    REQUIRE(back.tokenizer->identity() == tokenizer->identity());
  }
  REQUIRE_THROWS_WITH(io::export_hf_llama(nn::GPT({.n_head = 2, .n_embd = 8}), *tokenizer, dir.file("gpt2"), false),
                      Catch::Contains("Hugging Face's Llama is RMSNorm, RoPE and SwiGLU without biases"));
  REQUIRE_THROWS_WITH(io::export_hf_llama(*hf_llama_model(true), *tokenizer, dir.file("tied"), false),
                      Catch::Contains("is not empty: give --force"));
}

TEST_CASE("hf llama: folders that do not fit are refused with the reason", "[hf][llama][errors]") {
  TempDir dir;
  const auto tokenizer = io::read_sentencepiece_file(write_sentencepiece_model(dir));
  const std::string good = dir.file("good");
  io::export_hf_llama(*hf_llama_model(false), *tokenizer, good, false);
  const std::string config = read_file(good + "/config.json");
  auto with_config = [&](const std::string& name, const std::string& from, const std::string& to) {
    const std::string folder = dir.file(name);
    fs::copy(good, folder);
    std::string edited = config;
    REQUIRE(edited.find(from) != std::string::npos);
    edited.replace(edited.find(from), from.size(), to);
    dir.write(name + "/config.json", edited);
    return folder;
  };
  auto refused = [&](const std::string& folder, const std::string& reason) {
    INFO(folder);
    REQUIRE_THROWS_WITH(io::import_hf_llama(folder), Catch::Contains(reason));
  };
  refused(with_config("act", "\"silu\"", "\"gelu\""), "field \"hidden_act\" is not \"silu\"");
  refused(with_config("scaling", "\"rope_scaling\": null", "\"rope_scaling\": {\"type\": \"linear\"}"),
          "field \"rope_scaling\" asks for RoPE scaling");
  refused(with_config("bias", "\"attention_bias\": false", "\"attention_bias\": true"), "biases on the attention");
  refused(with_config("kv", "\"num_key_value_heads\": 2", "\"num_key_value_heads\": 3"), "n_kv_head 3 does not divide");
  refused(with_config("width", "\"intermediate_size\": 44", "\"intermediate_size\": 48"),
          "tensor 'model.layers.0.mlp.gate_proj.weight' has shape [44, 16], but config.json makes it [48, 16]");
  refused(with_config("tied", "\"tie_word_embeddings\": false", "\"tie_word_embeddings\": true"),
          "tensor 'lm_head.weight' differs from the embeddings");
  refused(with_config("eps", "\"rms_norm_eps\": 1e-06", "\"rms_norm_eps\": 1e30"), "norm_eps 1e+30 is not in (0, 1]");
  refused(with_config("theta", "\"rope_theta\": 500", "\"rope_theta\": 1e30"), "rope_theta 1e+30 is not in (0, 1e+12]");
  const std::string small_vocab = with_config("vocab", "\"vocab_size\": 400", "\"vocab_size\": 300");
  refused(small_vocab, "vocab': the tokenizer has 400 tokens, but config.json's vocab_size is only 300");
  REQUIRE_THROWS_AS(io::import_hf_llama(small_vocab), std::invalid_argument);  // as GPT-2's folder says it
  {  // tied, with an lm_head.weight wider than the embeddings: refused before a byte is copied
    const std::string folder = with_config("wide_head", "\"tie_word_embeddings\": false", "\"tie_word_embeddings\": true");
    std::vector<std::pair<std::string, Tensor>> tensors;
    const io::SafetensorsFile st(folder + "/model.safetensors");
    for (const auto& [name, t] : st.tensors()) {
      Tensor values = Tensor::zeros(t.shape);
      st.read(name, t.shape, "the test", std::span<float>(values.data(), static_cast<size_t>(values.numel())));
      tensors.push_back({name, name == "lm_head.weight" ? Tensor::zeros({t.shape[0], t.shape[1] + 64}) : values});
    }
    io::write_safetensors(folder + "/model.safetensors", tensors);
    refused(folder, "tensor 'lm_head.weight' has shape [");
    refused(folder, "but the embeddings (tied to them) makes it [");
  }
  const std::string no_tokenizer = dir.file("no_tokenizer");
  fs::copy(good, no_tokenizer);
  fs::remove(no_tokenizer + "/tokenizer.model");
  refused(no_tokenizer, "tokenizer.model");
  REQUIRE(io::is_hf_llama_dir(good));
  REQUIRE_FALSE(io::is_hf_llama_dir(no_tokenizer + "/missing"));
}
