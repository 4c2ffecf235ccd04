#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <numeric>

#include "tinygpt/io/weight_map.h"
#include "tinygpt/nn/gpt.h"

using namespace tinygpt;
using namespace tinygpt::io;

namespace {

nn::GPTConfig gpt2_shape() { return {.vocab_size = 37, .block_size = 8, .n_layer = 2, .n_head = 2, .n_embd = 8}; }

// Llama shapes: multi-head and grouped-query attention, tied and untied output layers.
std::vector<nn::GPTConfig> llama_shapes() {
  std::vector<nn::GPTConfig> out;
  for (int64_t kv : {4, 2, 1})
    for (bool tied : {false, true}) {
      nn::GPTConfig c = nn::llama_style({.vocab_size = 37, .block_size = 8, .n_layer = 2, .n_head = 4, .n_embd = 16});
      c.n_kv_head = kv, c.tie_embeddings = tied;
      out.push_back(c);
    }
  return out;
}

// A model whose every weight is its own index in the model, so that any misplaced value shows.
std::shared_ptr<nn::GPT> numbered(const nn::GPTConfig& c) {
  auto model = nn::GPT::unwritten(c);
  float next = 0;
  for (auto& [name, p] : model->named_parameters())
    for (int64_t i = 0; i < p.numel(); ++i) p.data()[i] = next++;
  return model;
}

std::vector<float> all_weights(const nn::GPT& m) {
  std::vector<float> out;
  for (const auto& [name, p] : m.named_parameters()) out.insert(out.end(), p.data(), p.data() + p.numel());
  return out;
}

// Through the file's layout and back: the same model.
void round_trips(const WeightMap& map, const nn::GPTConfig& c) {
  const auto model = numbered(c);
  auto back = nn::GPT::unwritten(c);
  for (auto& [name, p] : back->named_parameters()) std::fill_n(p.data(), p.numel(), -1.0f);
  for (const FileTensor& t : map)
    if (!t.parameter.empty()) {
      const std::vector<float> values = pack(t, *model);
      REQUIRE(values.size() == static_cast<size_t>(numel(file_shape(t, c))));
      unpack(t, values, *back);
    }
  REQUIRE(all_weights(*back) == all_weights(*model));
}

}  // namespace

TEST_CASE("weight map: every format's table holds each row of each parameter once", "[io][formats]") {
  check_covers(hf_gpt2_weights(gpt2_shape()), gpt2_shape());
  round_trips(hf_gpt2_weights(gpt2_shape()), gpt2_shape());
  for (const nn::GPTConfig& c : llama_shapes()) {
    INFO(fmt::format("kv heads {}, tied {}", c.kv_heads(), c.tie_embeddings));
    for (const WeightMap& map : {hf_llama_weights(c), llama2c_weights(c)}) {
      check_covers(map, c);
      round_trips(map, c);
    }
  }
  // A table that leaves a row out, or holds one twice, is caught.
  const nn::GPTConfig c = llama_shapes().front();
  WeightMap missing = hf_llama_weights(c), twice = missing;
  missing.erase(missing.begin() + 3);  // layer 0's k_proj
  REQUIRE_THROWS_WITH(check_covers(missing, c), Catch::Contains("'transformer.h.0.attn.c_attn.weight' are not each held once"));
  twice[3].row -= 1;
  REQUIRE_THROWS_WITH(check_covers(twice, c), Catch::Contains("'transformer.h.0.attn.c_attn.weight' are not each held once"));
}

TEST_CASE("weight map: the layouts put each value where the format keeps it", "[io][formats]") {
  const nn::GPTConfig c = llama_shapes().front();  // 4 heads of 4 rows, 16 columns
  const auto model = numbered(c);
  const int64_t C = c.n_embd;
  const float c_attn = model->h[0]->attn.c_attn.weight.data()[0];  // the first value of layer 0's c_attn
  // Hugging Face's q_proj: row j hs/2 + i of a head is our row 2i + j (hs = 4): rows 0, 2, 1, 3 per head.
  const WeightMap map = hf_llama_weights(c);
  const std::vector<float> q = pack(map.at(2), *model);
  REQUIRE(map.at(2).name == "model.layers.0.self_attn.q_proj.weight");
  for (int64_t head = 0; head < 4; ++head)
    for (int64_t r = 0; r < 4; ++r) {
      const int64_t ours = head * 4 + std::array{0, 2, 1, 3}[static_cast<size_t>(r)];
      REQUIRE(q[static_cast<size_t>((head * 4 + r) * C)] == c_attn + static_cast<float>(ours * C));
    }
  // v_proj keeps its rows, from row C + KV of c_attn on.
  const std::vector<float> v = pack(map.at(4), *model);
  REQUIRE(v.front() == c_attn + static_cast<float>((C + c.kv_heads() * c.head_size()) * C));
  // GPT-2's Conv1D: the transpose, [in, out].
  const nn::GPTConfig g = gpt2_shape();
  const auto gpt = numbered(g);
  for (const FileTensor& t : hf_gpt2_weights(g)) {
    if (t.name != "transformer.h.0.mlp.c_fc.weight") continue;
    REQUIRE(t.layout == Layout::transposed);
    REQUIRE(file_shape(t, g) == Shape{8, 32});
    const Tensor& w = gpt->h[0]->mlp.c_fc.weight;  // [32, 8]
    const std::vector<float> values = pack(t, *gpt);
    REQUIRE(values[1] == w.data()[1 * 8 + 0]);  // file [0][1] = ours [1][0]
    REQUIRE(values[8 * 32 - 1] == w.data()[32 * 8 - 1]);
  }
  // llama2.c: every layer's wq before any wk, then RoPE's two tables of [seq_len, hs / 2].
  const WeightMap run = llama2c_weights(c);
  REQUIRE(run.at(3).name == "wq of layer 0");
  REQUIRE(run.at(4).name == "wq of layer 1");
  REQUIRE(run.at(5).name == "wk of layer 0");
  REQUIRE(file_shape(run.at(run.size() - 2), c) == Shape{8, 2});
}
