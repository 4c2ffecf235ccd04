#include "weight_map.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <type_traits>

namespace tinygpt::io {

namespace {

Shape parameter_shape(const std::string& name, const nn::GPTConfig& config) {
  for (const auto& [n, shape] : nn::parameter_shapes(config))
    if (n == name) return shape;
  throw std::logic_error(fmt::format("weight map: the model has no parameter '{}'", name));
}

Tensor parameter(const std::string& name, const nn::GPT& model) {
  for (const auto& [n, p] : model.named_parameters())
    if (n == name) return p;
  throw std::logic_error(fmt::format("weight map: the model has no parameter '{}'", name));
}

// The band of rows `t` holds in a parameter of shape `ours`: [first, first + count), `cols` floats each.
struct Band {
  int64_t first, count, cols;
};

Band band_of(const FileTensor& t, const Shape& ours) {
  if (ours.size() != 2) return {0, 1, numel(ours)};  // a vector is one row
  return {t.row, t.rows < 0 ? ours[0] - t.row : t.rows, ours[1]};
}

// Hugging Face's row of our head row r = 2i + j (heads of hs rows): j hs/2 + i.
int64_t rope_halves_row(int64_t r, int64_t hs) { return r % hs / 2 + (r % 2) * (hs / 2) + r / hs * hs; }

}  // namespace

Shape file_shape(const FileTensor& t, const nn::GPTConfig& config) {
  if (t.parameter.empty()) return t.table;
  const Shape ours = parameter_shape(t.parameter, config);
  const Band b = band_of(t, ours);
  if (ours.size() != 2) return ours;
  return t.layout == Layout::transposed ? Shape{b.cols, b.count} : Shape{b.count, b.cols};
}

// Copies a band of rows between our layout (`ours`) and the file's (`theirs`), either way.
enum class Direction { to_file, from_file };

template <Direction d>
void copy_band(const FileTensor& t, const Band& b, int64_t hs,
               std::conditional_t<d == Direction::to_file, const float*, float*> ours,
               std::conditional_t<d == Direction::to_file, float*, const float*> theirs) {
  const auto move = [](auto* our, auto* their, int64_t n) {
    if constexpr (d == Direction::to_file) std::copy_n(our, n, their);
    else std::copy_n(their, n, our);
  };
  switch (t.layout) {
    case Layout::same:
      move(ours, theirs, b.count * b.cols);
      break;
    case Layout::rope_halves:
      for (int64_t r = 0; r < b.count; ++r) move(ours + r * b.cols, theirs + rope_halves_row(r, hs) * b.cols, b.cols);
      break;
    case Layout::transposed:  // theirs is [cols, count]
      for (int64_t r = 0; r < b.count; ++r)
        for (int64_t c = 0; c < b.cols; ++c) move(ours + r * b.cols + c, theirs + c * b.count + r, 1);
      break;
  }
}

std::vector<float> pack(const FileTensor& t, const nn::GPT& model) {
  const Tensor p = parameter(t.parameter, model);
  const Band b = band_of(t, p.shape());
  std::vector<float> out(static_cast<size_t>(b.count * b.cols));
  copy_band<Direction::to_file>(t, b, model.config().head_size(), p.data() + b.first * b.cols, out.data());
  return out;
}

void unpack(const FileTensor& t, std::span<const float> values, nn::GPT& model) {
  const Tensor p = parameter(t.parameter, model);
  const Band b = band_of(t, p.shape());
  if (values.size() != static_cast<size_t>(b.count * b.cols))
    throw std::logic_error(fmt::format("weight map: '{}' has {} values for {} rows of {}", t.name, values.size(),
                                       b.count, b.cols));
  copy_band<Direction::from_file>(t, b, model.config().head_size(), p.data() + b.first * b.cols, values.data());
}

void read_weights(const WeightMap& map, const TensorReader& read, nn::GPT& model) {
  std::vector<float> values;
  for (const FileTensor& t : map) {
    const Shape shape = file_shape(t, model.config());
    values.resize(static_cast<size_t>(numel(shape)));
    read(t, shape, values);
    if (!t.parameter.empty()) unpack(t, values, model);
  }
}

std::vector<std::pair<std::string, Tensor>> weight_tensors(const WeightMap& map, const nn::GPT& model) {
  std::vector<std::pair<std::string, Tensor>> out;
  for (const FileTensor& t : map)
    if (!t.parameter.empty()) out.push_back({t.name, Tensor::from_vector(file_shape(t, model.config()), pack(t, model))});
  return out;
}

void check_covers(const WeightMap& map, const nn::GPTConfig& config) {
  std::map<std::string, std::vector<int>> held;  // rows of each parameter: how many tensors hold it
  for (const auto& [name, shape] : nn::parameter_shapes(config))
    held[name].assign(static_cast<size_t>(shape.size() == 2 ? shape[0] : 1), 0);
  for (const FileTensor& t : map) {
    if (t.parameter.empty()) continue;
    const auto it = held.find(t.parameter);
    if (it == held.end()) throw std::logic_error(fmt::format("weight map: '{}' names no parameter", t.name));
    const Band b = band_of(t, parameter_shape(t.parameter, config));
    if (b.first < 0 || b.count < 1 || b.first + b.count > static_cast<int64_t>(it->second.size()))
      throw std::logic_error(fmt::format("weight map: '{}' holds rows outside '{}'", t.name, t.parameter));
    for (int64_t r = b.first; r < b.first + b.count; ++r) ++it->second[static_cast<size_t>(r)];
  }
  for (const auto& [name, rows] : held)
    if (std::any_of(rows.begin(), rows.end(), [](int n) { return n != 1; }))
      throw std::logic_error(fmt::format("weight map: the rows of '{}' are not each held once", name));
}

}  // namespace tinygpt::io
