#pragma once
// What a command finds where it is to write: never one of its own inputs; a file of another kind
// never, --force or not; a run's checkpoint, log or picture (or an exported model's files) only
// with --force. Each refusal says what is there and how to go on.
#include <string>
#include <vector>

#include "../io/output_files.h"

namespace tinygpt::train {

// What lies at `path`, in a few words: "a checkpoint at iteration 10 of 20", "a tokenizer file",
// "the log of a run (12 rows, to iteration 120)", "an SVG picture", "a llama2.c model file",
// "a text file", "a folder of token shards (4 train and 1 val)", "a Hugging Face model folder",
// "an empty folder", "nothing".
std::string describe_path(const std::string& path);

// How an output may replace what is there.
struct Replacing {
  bool force = false;               // replace an output of the same kind
  std::vector<std::string> inputs;  // what the command reads (files or folders): never replaced
  std::string flag = "--out";       // the command's flag for the path, for messages
};

// Throws unless `path` may take a new output of `kind`: it is none of the inputs, and it does not
// exist, is empty, or holds that kind of output and `force` is given (check_output_path's rules
// still hold). "'run.h5' is a checkpoint at iteration 1000 of 2000: continue it with --resume
// run.h5, give --force to replace it, or choose another --out".
void refuse_replacing(const std::string& path, io::OutputKind kind, const Replacing& how);

// The same for a folder an exporter writes `files` into (a Hugging Face model folder): it may be
// new or empty; with force, one that holds other files, whose `files` are then replaced, unless it
// is a folder of another kind (token shards) or one of `files` is an input or not a plain file.
void refuse_replacing_folder(const std::string& dir, const std::vector<std::string>& files, const Replacing& how);

}  // namespace tinygpt::train
