#pragma once
// tests/reference/torch_ops.txt, written by torch_ops.py with PyTorch: inputs made in closed
// form on both sides, and torch's outputs and gradients of sum(out * r) to compare against.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "gradcheck.h"

namespace tinygpt::testing {

// torch_ops.py's inputs: sin(a i + b) over the elements, rounded from double to float.
inline Tensor filled(const Shape& shape, double a, double b) {
  std::vector<float> v(static_cast<size_t>(numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(std::sin(a * static_cast<double>(i) + b));
  return Tensor::from_vector(shape, v);
}

inline Tensor upstream(const Shape& shape) {  // r in sum(out * r)
  std::vector<float> v(static_cast<size_t>(numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(std::cos(0.21 * static_cast<double>(i)));
  return Tensor::from_vector(shape, v);
}

// The fixture's lines, by key ("conv2d.out").
inline const std::map<std::string, std::vector<float>>& torch_values() {
  static const std::map<std::string, std::vector<float>> values = [] {
    std::ifstream in(TINYGPT_SOURCE_DIR "/tests/reference/torch_ops.txt");
    REQUIRE(in.good());
    std::map<std::string, std::vector<float>> read;
    for (std::string line; std::getline(in, line);) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream words(line);
      std::string key;
      words >> key;
      for (float v; words >> v;) read[key].push_back(v);
    }
    return read;
  }();
  return values;
}

// out's shape and values equal torch's `name`, and after sum(out * r).backward() so do the
// gradients of `inputs` (leaves, in torch_ops.py's order).
inline void require_torch_case(const std::string& name, const Tensor& out, const std::vector<Tensor>& inputs) {
  INFO(name);
  const auto& want = torch_values();
  const std::vector<float>& shape = want.at(name + ".shape");
  REQUIRE(out.shape() == Shape(shape.begin(), shape.end()));
  require_close(out.to_vector(), want.at(name + ".out"), 2e-5);
  sum(out * upstream(out.shape())).backward();
  for (size_t k = 0; k < inputs.size(); ++k) {
    INFO("input " << k);
    require_close(inputs[k].grad().to_vector(), want.at(name + ".grad" + std::to_string(k)), 2e-5);
  }
}

}  // namespace tinygpt::testing
