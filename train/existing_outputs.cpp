#include "existing_outputs.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <stdexcept>
#include <vector>

#include "../data/input_file.h"
#include "../data/shards.h"
#include "../data/utf8.h"
#include "../io/llama2c.h"
#include "../io/run_log.h"
#include "../io/run_metrics.h"
#include "checkpoint.h"

namespace tinygpt::train {

namespace fs = std::filesystem;

namespace {

std::string describe_folder(const std::string& dir) {
  std::error_code ec;
  const size_t train = data::shard_files(dir, "train").size(), val = data::shard_files(dir, "val").size();
  if (train + val > 0) return fmt::format("a folder of token shards ({} train and {} val)", train, val);
  if (fs::exists(fs::path(dir) / "config.json", ec)) return "a Hugging Face model folder";
  return fs::is_empty(dir, ec) ? "an empty folder" : "a folder";
}

// A file that is none of tinygpt's kinds: text (valid UTF-8 without NUL bytes at its start) or bytes.
std::string describe_other_file(const std::string& path, int64_t size) {
  data::InputFile in(path);
  std::string head(4096, '\0');
  head.resize(in.read(head.data(), head.size()));
  size_t valid = head.size();
  while (valid > 0 && valid + 4 > head.size() && data::find_invalid_utf8(head.substr(0, valid)) != std::string::npos)
    --valid;  // a character cut at the end of the sample is still text
  if (valid > 0 && head.find('\0') == std::string::npos && data::find_invalid_utf8(head.substr(0, valid)) == std::string::npos)
    return "a text file";
  return fmt::format("a file of {} bytes", size);
}

std::string describe_hdf5(const std::string& path) {
  try {
    const Checkpoint ck = read_checkpoint(path);
    if (ck.train) return fmt::format("a checkpoint at iteration {} of {}", ck.train->iteration, ck.train->options.iters);
    return fmt::format("a checkpoint of weights only ({} layers, {} embd)", ck.config.n_layer, ck.config.n_embd);
  } catch (const std::exception&) {
  }
  try {
    read_tokenizer_file(path);
    return "a tokenizer file";
  } catch (const std::exception&) {
  }
  return "an HDF5 file";
}

}  // namespace

std::string describe_path(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return describe_folder(path);
  if (!fs::exists(path, ec)) return "nothing";
  if (!fs::is_regular_file(path, ec)) return "not a regular file (a FIFO, device or socket)";
  const auto size = static_cast<int64_t>(fs::file_size(path, ec));
  if (size == 0) return "an empty file";
  try {
    if (io::holds_output(path, io::OutputKind::hdf5)) return describe_hdf5(path);
    if (io::holds_output(path, io::OutputKind::log)) {
      const std::vector<io::LogLine> lines = io::read_log_lines(path);
      if (lines.empty()) return "the log of a run (no rows)";
      return fmt::format("the log of a run ({} rows, to iteration {})", lines.size(), lines.back().row.iter);
    }
    if (io::holds_output(path, io::OutputKind::metrics)) {
      const std::vector<io::MetricsLine> lines = io::read_metrics_lines(path);
      if (lines.empty()) return "the metrics of a run (no steps)";
      return fmt::format("the metrics of a run (to iteration {})", lines.back().iter);
    }
    if (io::holds_output(path, io::OutputKind::settings)) return "a tinygpt settings file";
    if (io::holds_output(path, io::OutputKind::html)) return "a tinygpt explain page";
    if (io::holds_output(path, io::OutputKind::svg)) return "an SVG picture";
    switch (io::llama2c_file_kind(path)) {
      case io::Llama2cFile::model: return "a llama2.c model file";
      case io::Llama2cFile::tokenizer: return "a llama2.c tokenizer file";
      case io::Llama2cFile::neither: break;
    }
    return describe_other_file(path, size);
  } catch (const std::exception&) {  // unreadable: say so without a reason the caller will give
    return fmt::format("a file of {} bytes", size);
  }
}

void refuse_replacing(const std::string& path, io::OutputKind kind, const Replacing& how) {
  io::refuse_own_input(path, how.inputs, how.flag);
  std::error_code ec;
  const bool filled = fs::is_regular_file(path, ec) && fs::file_size(path, ec) > 0;
  if (filled && !io::holds_output(path, kind))
    throw std::invalid_argument(fmt::format("{} '{}' is {}, not {}: not replacing it, --force or not (choose another "
                                            "{})",
                                            how.flag, path, describe_path(path), io::kind_description(kind), how.flag));
  io::check_output_path(path, kind);
  if (how.force || !filled) return;
  const std::string what = describe_path(path);
  const bool resumable = what.starts_with("a checkpoint at iteration");
  throw std::invalid_argument(fmt::format("'{}' is {}: {}give --force to replace it, or choose another {}", path, what,
                                          resumable ? fmt::format("continue it with --resume {}, ", path) : "",
                                          how.flag));
}

void refuse_replacing_folder(const std::string& dir, const std::vector<std::string>& files, const Replacing& how) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return;
  if (!fs::is_directory(dir, ec))
    throw std::invalid_argument(fmt::format("{} '{}' is {}, not a folder: not replacing it, --force or not", how.flag,
                                            dir, describe_path(dir)));
  for (const std::string& name : files) io::refuse_own_input((fs::path(dir) / name).string(), how.inputs, how.flag);
  if (fs::is_empty(dir, ec)) return;
  const std::string what = describe_folder(dir);
  if (what.starts_with("a folder of token shards"))
    throw std::invalid_argument(fmt::format("{} '{}' is {}, not a model folder: not writing into it, --force or not "
                                            "(choose another {})",
                                            how.flag, dir, what, how.flag));
  if (!how.force)
    throw std::invalid_argument(fmt::format("{} '{}' is {} that is not empty: give --force to replace its {}, or "
                                            "choose another {}",
                                            how.flag, dir, what, fmt::join(files, ", "), how.flag));
  for (const std::string& name : files) {
    const fs::path file = fs::path(dir) / name;
    if (fs::is_symlink(fs::symlink_status(file, ec)) || (fs::exists(file, ec) && !fs::is_regular_file(file, ec)))
      throw std::invalid_argument(fmt::format("'{}' is not a plain file: not replacing it", file.string()));
  }
}

}  // namespace tinygpt::train
