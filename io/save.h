#pragma once
// Saving and loading any module's parameters and any optimizer's state, in HDF5 files written and
// checked as checkpoints are (sealed, written atomically, every value verified on reading;
// docs/checkpoint-format.md):
//   module file     root attributes format = "tinygpt-module", format_version = 1; one float32
//                   dataset per parameter under its dotted name ("0.weight", "fc.bias")
//   optimizer file  format = "tinygpt-optimizer", format_version = 1, kind ("adamw", "sgd"),
//                   step, lr; one dataset per state tensor ("m/0.weight", "v/0.weight")
// load() checks every name and shape before it changes anything, and names the first mismatch
// (missing, not expected, another shape); on any error the module or optimizer is as it was.
#include <string>

#include "tinygpt/nn/module.h"
#include "tinygpt/optim/optimizer.h"

namespace tinygpt::nn {

void save(const Module& module, const std::string& path);
// Also reads a tinygpt checkpoint, whose /model holds a GPT's parameters.
void load(Module& module, const std::string& path);

}  // namespace tinygpt::nn

namespace tinygpt::optim {

void save(const Optimizer& optimizer, const std::string& path);
void load(Optimizer& optimizer, const std::string& path);  // the same kind, for the same parameters

}  // namespace tinygpt::optim
