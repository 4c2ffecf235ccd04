#pragma once
// A model format's weights as a table: the file's tensors in the file's order, each naming the
// parameter of ours it holds (or a band of its rows, where we fuse what the format keeps apart:
// c_attn = q, k, v; SwiGLU's c_fc = gate, up) and how its layout differs from ours. Importers and
// exporters walk the table; a new format is a new table plus its container's reader and writer.
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "../autograd/tensor.h"
#include "../nn/gpt.h"

namespace tinygpt::io {

enum class Layout {
  same,         // the parameter's (band of) rows as they are
  transposed,   // [in, out]: GPT-2's Conv1D
  rope_halves,  // each head's rows reordered from our RoPE pairs (2i, 2i + 1) to Hugging Face's (i, i + hs/2)
};

struct FileTensor {
  std::string name;       // the file's
  std::string parameter;  // ours, as named_parameters() names it; empty: not a weight (a table the format keeps)
  int64_t row = 0;        // the first row of the parameter it holds
  int64_t rows = -1;      // how many (-1: all from `row` on)
  Layout layout = Layout::same;
  Shape table;            // without a parameter: the table's shape
};

using WeightMap = std::vector<FileTensor>;

// The formats' tables (weight_maps.cpp), for a model of `config` in each format's architecture.
// GPT-2's names are ours (Hugging Face's files may drop "transformer."); Llama's and llama2.c's split
// the fused c_attn and c_fc; llama2.c's list every layer's wq before any wk, as run.c reads them,
// with its RoPE tables (not weights) where run.c keeps them.
WeightMap hf_gpt2_weights(const nn::GPTConfig& config);
WeightMap hf_llama_weights(const nn::GPTConfig& config);
WeightMap llama2c_weights(const nn::GPTConfig& config);

// The file's shape of `t` for a model of `config`.
Shape file_shape(const FileTensor& t, const nn::GPTConfig& config);

// The file's values of `t` (file_shape's, row-major) from the model's parameter, and back into it.
std::vector<float> pack(const FileTensor& t, const nn::GPT& model);
void unpack(const FileTensor& t, std::span<const float> values, nn::GPT& model);

// A container's reader: the values of `t`, of the file's shape `shape`, into `values`; throws naming
// the file and the tensor where they are missing, of another shape, or not finite.
using TensorReader = std::function<void(const FileTensor& t, const Shape& shape, std::span<float> values)>;

// Every tensor of `map` in order through `read`, its weights into `model` (tables are read and dropped).
void read_weights(const WeightMap& map, const TensorReader& read, nn::GPT& model);
// The map's weights in the file's layout, named as the file names them, in its order (no tables).
std::vector<std::pair<std::string, Tensor>> weight_tensors(const WeightMap& map, const nn::GPT& model);

// Every parameter of `config`'s model held, each row once, by the map's tensors: a check of a table
// (throws std::logic_error naming the parameter), run by the tests for every format and architecture.
void check_covers(const WeightMap& map, const nn::GPTConfig& config);

}  // namespace tinygpt::io
