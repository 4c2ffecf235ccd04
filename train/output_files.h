#pragma once
// Where a command may write: the paths its command line names (and the log and plot beside a
// named checkpoint), never over a file of another kind. An HDF5 file (a checkpoint, a saved module
// or optimizer) replaces only an HDF5 file, a log only a tinygpt log, an SVG only an SVG; an empty
// file may become any of them.
#include <string>

namespace tinygpt::train {

enum class OutputKind { hdf5, log, svg };

// Throws a one-line error when `path` cannot take that output: its folder is missing or not
// writable, or it exists and is a directory, a FIFO or device, or a file of another kind.
void check_output_path(const std::string& path, OutputKind kind);

// Throws unless `path` may take a new output of `kind` that replaces whatever is there: it does not
// exist or is empty, or `force` is given (check_output_path's rules still hold). The message says
// what is there and how to go on: "'run.h5' is a checkpoint at iteration 1000 of 2000: continue it
// with --resume run.h5, give --force to replace it, or choose another --out". `flag` names the
// command's output flag.
void refuse_replacing(const std::string& path, OutputKind kind, bool force, const std::string& flag = "--out");

// What an existing output file holds, in a few words ("a checkpoint at iteration 10 of 20", "the
// log of a run (12 rows, to iteration 120)", "an SVG picture").
std::string describe_output(const std::string& path, OutputKind kind);

// Writes `text` to `path` after check_output_path.
void write_output_file(const std::string& path, OutputKind kind, const std::string& text);

}  // namespace tinygpt::train
