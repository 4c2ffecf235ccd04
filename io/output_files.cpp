#include "output_files.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string_view>

#include "../data/input_file.h"
#include "../data/shards.h"
#include "llama2c.h"
#include "run_log.h"
#include "run_metrics.h"

namespace tinygpt::io {

namespace {

const char* kind_name(OutputKind kind) {
  switch (kind) {
    case OutputKind::hdf5: return "an HDF5 file (a checkpoint or saved module)";
    case OutputKind::log: return "a tinygpt log";
    case OutputKind::metrics: return "a tinygpt metrics file";
    case OutputKind::settings: return "a tinygpt settings file";
    case OutputKind::svg: return "an SVG file";
    case OutputKind::html: return "a tinygpt explain page";
    case OutputKind::llama2c: return "a llama2.c model or tokenizer file";
  }
  return "?";
}

// Whether a file that starts with `head` holds that kind of output.
bool holds(OutputKind kind, std::string_view head) {
  switch (kind) {
    case OutputKind::hdf5:
      return head.starts_with("\x89HDF\r\n\x1a\n") || head.starts_with("tinygpt checkpoint seal ");
    case OutputKind::log:
      return is_log_header(std::string(head.substr(0, head.find('\n'))));
    case OutputKind::metrics: return is_metrics_header(head.substr(0, head.find('\n')));
    case OutputKind::settings: return head.starts_with("{\n  \"tinygpt\": \"train settings\"");
    case OutputKind::svg:
      return (head.starts_with("<svg") || head.starts_with("<?xml")) && head.find("<svg") != std::string_view::npos;
    case OutputKind::html:
      return head.starts_with("<!DOCTYPE html>") && head.find("<title>tinygpt explain</title>") != std::string_view::npos;
    case OutputKind::llama2c: return false;  // judged by the whole file (holds_output)
  }
  return false;
}

}  // namespace

void check_output_path(const std::string& path, OutputKind kind) {
  if (path.empty()) throw std::invalid_argument("an empty output path: name the file to write");
  const std::filesystem::path target(path);
  const auto dir = target.parent_path().empty() ? std::filesystem::path(".") : target.parent_path();
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    throw std::invalid_argument(fmt::format("cannot write '{}': there is no folder '{}'", path, dir.string()));
  if (::access(dir.c_str(), W_OK) != 0)
    throw std::invalid_argument(fmt::format("cannot write '{}': the folder '{}' is not writable", path, dir.string()));
  if (!std::filesystem::exists(target, ec)) {
    if (std::filesystem::is_symlink(std::filesystem::symlink_status(target, ec)))
      throw std::invalid_argument(fmt::format("'{}' is a symbolic link to a missing file: not writing through it", path));
    return;
  }
  data::InputFile existing(path);  // refuses directories, FIFOs and devices, naming them
  if (existing.size() > 0 && !holds_output(path, kind))
    throw std::invalid_argument(fmt::format("'{}' exists and is not {}: not replacing it (choose another path)", path,
                                            kind_name(kind)));
}

bool holds_output(const std::string& path, OutputKind kind) {
  if (kind == OutputKind::llama2c) return llama2c_file_kind(path) != Llama2cFile::neither;
  data::InputFile existing(path);
  std::string head(512, '\0');
  head.resize(existing.read(head.data(), head.size()));
  return holds(kind, head);
}

std::string kind_description(OutputKind kind) { return kind_name(kind); }

bool same_file(const std::string& a, const std::string& b) {
  struct stat x {}, y {};
  return ::stat(a.c_str(), &x) == 0 && ::stat(b.c_str(), &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

std::vector<std::string> files_read_in(const std::string& dir) {
  std::vector<std::string> files;
  for (const char* split : {"train", "val"})
    for (const std::string& shard : data::shard_files(dir, split)) files.push_back(shard);
  for (const char* name : {"tokenizer.h5", "config.json", "model.safetensors", "vocab.json", "merges.txt",
                           "encoder.json", "vocab.bpe", "tokenizer.model", "tokenizer_config.json",
                           "special_tokens_map.json", "generation_config.json"}) {
    const std::string file = (std::filesystem::path(dir) / name).string();
    std::error_code ec;
    if (std::filesystem::exists(file, ec)) files.push_back(file);
  }
  return files;
}

void refuse_own_input(const std::string& output, const std::vector<std::string>& inputs, const std::string& flag) {
  std::error_code ec;
  if (!std::filesystem::exists(output, ec)) return;
  for (const std::string& input : inputs) {
    if (input.empty()) continue;
    const std::vector<std::string> read =
        std::filesystem::is_directory(input, ec) ? files_read_in(input) : std::vector<std::string>{input};
    for (const std::string& file : read)
      if (same_file(output, file))
        throw std::invalid_argument(fmt::format("{} '{}' is {}, which this command reads: a command never replaces its "
                                                "own input, --force or not; choose another {}",
                                                flag, output,
                                                file == input ? fmt::format("'{}'", input)
                                                              : fmt::format("'{}' of the folder '{}'", file, input),
                                                flag));
  }
}

AtomicFile::AtomicFile(const std::string& path, const std::string& what) : path_(path), what_(what) {
  std::error_code ec;
  if (std::filesystem::is_symlink(std::filesystem::symlink_status(path, ec))) {  // write the file it leads to
    const std::filesystem::path file = std::filesystem::canonical(path, ec);
    if (ec) fail("follow the symbolic link", ec.value());
    path_ = file.string();
  }
  const std::filesystem::path target(path_);
  const auto dir = target.parent_path().empty() ? std::filesystem::path(".") : target.parent_path();
  temporary_ = (dir / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
  fd_ = ::mkstemp(temporary_.data());  // a new, unique name: nothing that exists is reused
  if (fd_ < 0) {
    const int error = errno;
    temporary_.clear();
    fail("create a file beside it", error);
  }
  const mode_t mask = ::umask(0);  // mkstemp makes the file private; it gets the usual mode
  ::umask(mask);
  ::fchmod(fd_, 0666 & ~mask);
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!temporary_.empty()) ::unlink(temporary_.c_str());
}

void AtomicFile::fail(const std::string& doing, int error) {
  throw std::runtime_error(fmt::format("cannot write {}'{}'{}: {}", what_.empty() ? "" : what_ + " ", path_,
                                       doing.empty() ? "" : " (" + doing + ")", std::strerror(error)));
}

void AtomicFile::write(const void* data, size_t size) {
  const char* at = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd_, at, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("", errno);
    at += n, size -= static_cast<size_t>(n);
  }
}

void AtomicFile::write_at(int64_t offset, const void* data, size_t size) {
  const char* at = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::pwrite(fd_, at, size, offset);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("", errno);
    at += n, size -= static_cast<size_t>(n), offset += n;
  }
}

void AtomicFile::commit() {
  if (::fsync(fd_) != 0) fail("", errno);  // the data is on disk before the name points at it
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) fail("", errno);
  if (::rename(temporary_.c_str(), path_.c_str()) != 0) fail("rename", errno);
  temporary_.clear();
  const std::filesystem::path target(path_);
  const auto dir = target.parent_path().empty() ? std::filesystem::path(".") : target.parent_path();
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {  // and the rename itself is durable
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
}

void write_output_file(const std::string& path, OutputKind kind, const std::string& text) {
  check_output_path(path, kind);
  write_file_atomically(path, text);
}

void write_file_atomically(const std::string& path, const std::string& bytes) {
  AtomicFile out(path);
  out.write(bytes.data(), bytes.size());
  out.commit();
}

StagedFolder export_folder(const std::string& dir, const std::vector<std::string>& files, bool force) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec)) throw std::runtime_error(fmt::format("export: '{}' exists and is not a directory", dir));
    if (!force && !fs::is_empty(dir, ec))
      throw std::runtime_error(fmt::format("export: directory '{}' is not empty: give --force to replace its {}, or "
                                           "choose another --out",
                                           dir, fmt::join(files, ", ")));
    for (const std::string& name : files) {
      const fs::path path = fs::path(dir) / name;
      if (fs::is_directory(path, ec) || fs::is_symlink(path, ec))
        throw std::runtime_error(fmt::format("export: '{}' is not a plain file: not replacing it", path.string()));
    }
  }
  return StagedFolder(dir, [files](const std::string& name) {
    return std::find(files.begin(), files.end(), name) != files.end();
  });
}

}  // namespace tinygpt::io
