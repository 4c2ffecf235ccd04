#include "tinygpt/train/existing_outputs.h"

#include <fmt/format.h>

#include <filesystem>
#include <stdexcept>
#include <vector>

#include "tinygpt/io/run_log.h"
#include "tinygpt/train/checkpoint.h"

namespace tinygpt::train {

std::string describe_output(const std::string& path, io::OutputKind kind) {
  try {
    switch (kind) {
      case io::OutputKind::hdf5: {
        const Checkpoint ck = read_checkpoint(path);
        if (ck.train) return fmt::format("a checkpoint at iteration {} of {}", ck.train->iteration, ck.train->options.iters);
        return fmt::format("a checkpoint of weights only ({} layers, {} embd)", ck.config.n_layer, ck.config.n_embd);
      }
      case io::OutputKind::log: {
        const std::vector<io::LogLine> lines = io::read_log_lines(path);
        if (lines.empty()) return "the log of a run (no rows)";
        return fmt::format("the log of a run ({} rows, to iteration {})", lines.size(), lines.back().row.iter);
      }
      case io::OutputKind::svg: return "an SVG picture";
      case io::OutputKind::html: return "a tinygpt explain page";
      case io::OutputKind::llama2c: return "a llama2.c file";
    }
  } catch (const std::exception&) {  // a file that does not read as its kind is still described by it
  }
  return kind == io::OutputKind::hdf5 ? "an HDF5 file" : "a tinygpt log";
}

void refuse_replacing(const std::string& path, io::OutputKind kind, bool force, const std::string& flag) {
  io::check_output_path(path, kind);
  std::error_code ec;
  if (force || !std::filesystem::exists(path, ec) || std::filesystem::file_size(path, ec) == 0) return;
  const std::string what = describe_output(path, kind);
  const bool resumable = what.starts_with("a checkpoint at iteration");
  throw std::invalid_argument(fmt::format("'{}' is {}: {}give --force to replace it, or choose another {}", path, what,
                                          resumable ? fmt::format("continue it with --resume {}, ", path) : "", flag));
}

}  // namespace tinygpt::train
