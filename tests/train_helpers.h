#pragma once
// What the trainer tests share: a progress sink that prints nothing, a model's weights, a log's losses.
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "tinygpt/nn/gpt.h"
#include "tinygpt/train/progress.h"

namespace tinygpt::testing {

struct Quiet {
  std::FILE* sink = std::fopen("/dev/null", "w");
  train::Progress progress{sink, false, 1000};
  ~Quiet() { std::fclose(sink); }
};

inline std::vector<std::vector<float>> weights(const nn::GPT& model) {
  std::vector<std::vector<float>> out;
  for (const auto& [name, p] : model.named_parameters()) out.push_back(p.to_vector());
  return out;
}

// "iter,train_loss,val_loss" of each row of a training log (CSV).
inline std::vector<std::string> loss_columns(const std::string& csv) {
  std::ifstream in(csv);
  std::vector<std::string> rows;
  std::string line;
  while (std::getline(in, line)) {
    size_t third = line.find(',', line.find(',', line.find(',') + 1) + 1);
    rows.push_back(line.substr(0, third));
  }
  return rows;
}

}  // namespace tinygpt::testing
