#pragma once
// Saving and loading any module's parameters and any optimizer's state, in HDF5 files written and
// checked as checkpoints are (sealed, written atomically, every value verified on reading;
// docs/checkpoint-format.md):
//   module file     root attributes format = "tinygpt-module", format_version = 1; one float32
//                   dataset per parameter and buffer under its dotted name ("0.weight", "fc.bias")
//   optimizer file  format = "tinygpt-optimizer", format_version = 1, kind ("adamw", "sgd",
//                   "adam", "rmsprop", "adagrad"), step, lr; one dataset per state tensor
//                   ("m/0.weight", "v/0.weight")
//   either          the caller's SavedState as root attributes "state:<key>": int64, float64,
//                   a string, or 4 uint64 (a generator's state)
// load() checks every name and shape before it changes anything, and names the first mismatch
// (missing, not expected, another shape); on any error the module or optimizer is as it was.
#include <cstdint>
#include <map>
#include <string>

#include "../autograd/random.h"
#include "../nn/module.h"
#include "../optim/optimizer.h"

namespace tinygpt::io {

// What a training loop saves beside its model or optimizer to resume exactly: an epoch, a step, a
// sampler's position, a generator's state, a note. Keys are any non-empty text.
struct SavedState {
  std::map<std::string, int64_t> integers;
  std::map<std::string, double> numbers;
  std::map<std::string, std::string> texts;
  std::map<std::string, Rng::State> generators;
  bool operator==(const SavedState&) const = default;
};

}  // namespace tinygpt::io

namespace tinygpt::nn {

void save(const Module& module, const std::string& path, const io::SavedState& state = {});
// Also reads a tinygpt checkpoint, whose /model holds a GPT's parameters. Returns the saved state.
io::SavedState load(Module& module, const std::string& path);

}  // namespace tinygpt::nn

namespace tinygpt::optim {

void save(const Optimizer& optimizer, const std::string& path, const io::SavedState& state = {});
// The same kind, for the same parameters. Returns the saved state.
io::SavedState load(Optimizer& optimizer, const std::string& path);

}  // namespace tinygpt::optim
