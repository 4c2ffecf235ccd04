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

// Writes `text` to `path` after check_output_path.
void write_output_file(const std::string& path, OutputKind kind, const std::string& text);

}  // namespace tinygpt::train
