#pragma once
// What a command finds where it is to write: a run's checkpoint, log or picture is replaced only
// with --force, and the refusal says what is there and how to go on.
#include <string>

#include "tinygpt/io/output_files.h"

namespace tinygpt::train {

// Throws unless `path` may take a new output of `kind` that replaces whatever is there: it does not
// exist or is empty, or `force` is given (check_output_path's rules still hold). The message says
// what is there and how to go on: "'run.h5' is a checkpoint at iteration 1000 of 2000: continue it
// with --resume run.h5, give --force to replace it, or choose another --out". `flag` names the
// command's output flag.
void refuse_replacing(const std::string& path, io::OutputKind kind, bool force, const std::string& flag = "--out");

// What an existing output file holds, in a few words ("a checkpoint at iteration 10 of 20", "the
// log of a run (12 rows, to iteration 120)", "an SVG picture").
std::string describe_output(const std::string& path, io::OutputKind kind);

}  // namespace tinygpt::train
