#pragma once
// llama2.c's model file read the way its run.c reads it (the legacy version-0 layout, offsets as
// run.c's memory_map_weights), written independently of tinygpt's importer: the tensors, renamed
// to the checkpoint's names (c_attn = wq, wk, wv stacked; c_fc = w1, w3), for the plain model.
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "reference/plain_model.h"
#include "temp_files.h"

namespace tinygpt::testing {

inline PlainModel read_llama2c_file(const std::string& path) {
  const std::string bytes = read_file(path);
  int32_t h[7];
  if (bytes.size() < sizeof h) throw std::runtime_error("short llama2.c file");
  std::memcpy(h, bytes.data(), sizeof h);
  const int64_t dim = h[0], hidden = h[1], layers = h[2], heads = h[3], kv_heads = h[4], seq = h[6];
  const bool shared = h[5] > 0;
  const int64_t vocab = shared ? h[5] : -h[5], hs = dim / heads, kv_dim = kv_heads * hs;
  size_t at = sizeof h;
  auto take = [&](int64_t n) {  // the next n floats
    std::vector<float> v(static_cast<size_t>(n));
    if (at + v.size() * 4 > bytes.size()) throw std::runtime_error("llama2.c file too short");
    std::memcpy(v.data(), bytes.data() + at, v.size() * 4);
    at += v.size() * 4;
    return v;
  };
  PlainModel m;
  m.c = {.vocab_size = vocab, .block_size = seq, .n_layer = layers, .n_head = heads, .n_embd = dim};
  m.c.norm = NormKind::rmsnorm, m.c.position = PositionKind::rope, m.c.mlp = MlpKind::swiglu;
  m.c.ffn_hidden = hidden, m.c.n_kv_head = kv_heads, m.c.bias = false, m.c.tie_embeddings = shared;
  auto block = [](int64_t l, const char* name) { return "transformer.h." + std::to_string(l) + "." + name; };
  auto append = [&](const std::string& name, const std::vector<float>& v) {
    auto& dst = m.p[name];
    dst.insert(dst.end(), v.begin(), v.end());
  };
  m.p["transformer.wte.weight"] = take(vocab * dim);
  for (int64_t l = 0; l < layers; ++l) m.p[block(l, "ln_1.weight")] = take(dim);
  for (const int64_t rows : {dim, kv_dim, kv_dim})  // wq, then wk, then wv, each for every layer
    for (int64_t l = 0; l < layers; ++l) append(block(l, "attn.c_attn.weight"), take(rows * dim));
  for (int64_t l = 0; l < layers; ++l) m.p[block(l, "attn.c_proj.weight")] = take(dim * dim);
  for (int64_t l = 0; l < layers; ++l) m.p[block(l, "ln_2.weight")] = take(dim);
  std::vector<std::vector<float>> w1;
  for (int64_t l = 0; l < layers; ++l) w1.push_back(take(hidden * dim));
  for (int64_t l = 0; l < layers; ++l) m.p[block(l, "mlp.c_proj.weight")] = take(dim * hidden);
  for (int64_t l = 0; l < layers; ++l) {  // c_fc: the gate (w1), then the up projection (w3)
    append(block(l, "mlp.c_fc.weight"), w1[static_cast<size_t>(l)]);
    append(block(l, "mlp.c_fc.weight"), take(hidden * dim));
  }
  m.p["transformer.ln_f.weight"] = take(dim);
  take(seq * hs / 2), take(seq * hs / 2);  // RoPE's tables, which run.c skips
  if (!shared) m.p["lm_head.weight"] = take(vocab * dim);
  if (at != bytes.size()) throw std::runtime_error("llama2.c file longer than its header says");
  return m;
}

}  // namespace tinygpt::testing
