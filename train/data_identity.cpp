#include "data_identity.h"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <charconv>
#include <filesystem>
#include <stdexcept>

#include "../data/input_file.h"
#include "../data/shards.h"
#include "../data/sha256.h"
#include "run_data.h"

namespace tinygpt::train {

namespace {

// Shards beyond this size are identified by samples of their bytes: reading all of a 10 GB corpus
// at every start would cost more than the run's first minutes.
constexpr int64_t kWholeDigestMost = int64_t{32} << 20;
constexpr int64_t kSamples = 64, kSampleBytes = int64_t{64} << 10;  // 4 MB read, spread over the file

// The SHA-256 of `size`'s 8 bytes and kSamples stretches of kSampleBytes, evenly spaced from the
// start to the end (the header, every region of the tokens, and the last bytes).
std::string sampled_digest(const std::string& path, int64_t size) {
  data::InputFile file(path, "shard");
  data::Sha256 hash;
  hash.update(&size, sizeof size);
  std::vector<char> block(static_cast<size_t>(kSampleBytes));
  for (int64_t k = 0; k < kSamples; ++k) {
    const int64_t at = (size - kSampleBytes) * k / (kSamples - 1);
    if (::pread(file.descriptor(), block.data(), block.size(), at) != static_cast<ssize_t>(block.size()))
      file.fail(fmt::format("cannot read {} bytes at {}: {}", block.size(), at, std::strerror(errno)));
    hash.update(block.data(), block.size());
  }
  return hash.hex_digest();
}

DataFile identify(const std::string& split, const std::string& path, bool shard = false) {
  if (shard) {
    std::error_code ec;
    const auto size = static_cast<int64_t>(std::filesystem::file_size(path, ec));
    if (!ec && size > kWholeDigestMost)
      return {split, std::filesystem::absolute(path).lexically_normal().string(), size, sampled_digest(path, size)};
  }
  data::InputFile file(path);
  data::Sha256 hash;
  std::vector<char> block(1 << 20);  // read in 1 MB pieces: memory stays flat for any corpus
  int64_t size = 0;
  while (const size_t n = file.read(block.data(), block.size())) {
    hash.update(block.data(), n);
    size += static_cast<int64_t>(n);
  }
  return {split, std::filesystem::absolute(path).lexically_normal().string(), size, hash.hex_digest()};
}

std::string describe(const DataFile& f) {
  return fmt::format("'{}' ({} bytes, SHA-256 {}...)", f.path, f.size, f.sha256.substr(0, 12));
}

}  // namespace

std::vector<DataFile> identify_data(const std::vector<std::string>& train_files,
                                    const std::vector<std::string>& val_files) {
  std::vector<DataFile> files;
  for (const std::string& path : train_files) {
    std::error_code ec;
    if (!std::filesystem::is_directory(path, ec)) {
      files.push_back(identify("train", path));
      continue;
    }
    for (const char* split : {"train", "val"})  // a folder of shards: each shard
      for (const std::string& shard : data::shard_files(path, split)) files.push_back(identify(split, shard, true));
  }
  for (const std::string& path : val_files) {
    std::error_code ec;
    if (!std::filesystem::is_directory(path, ec)) {
      files.push_back(identify("val", path));
      continue;
    }
    for (const std::string& shard : data::shard_files(path, validation_split_of(path)))  // the shards read
      files.push_back(identify("val", shard, true));
  }
  return files;
}

std::string data_difference(const std::vector<DataFile>& then, const std::vector<DataFile>& now) {
  auto count = [](const std::vector<DataFile>& files, const char* split) {
    return std::count_if(files.begin(), files.end(), [&](const DataFile& f) { return f.split == split; });
  };
  for (const char* split : {"train", "val"})
    if (count(then, split) != count(now, split))
      return fmt::format("the run had {} {} file{}, now there {} {}", count(then, split), split,
                         count(then, split) == 1 ? "" : "s", count(now, split) == 1 ? "is" : "are", count(now, split));
  for (size_t i = 0; i < then.size(); ++i)
    if (then[i].size != now[i].size || then[i].sha256 != now[i].sha256)
      return fmt::format("{} file {} was {}, now {}", then[i].split, i + 1, describe(then[i]), describe(now[i]));
  return "";
}

std::vector<std::string> data_lines(const std::vector<DataFile>& files) {
  std::vector<std::string> lines;
  for (const DataFile& f : files) lines.push_back(fmt::format("{} {} {} {}", f.split, f.size, f.sha256, f.path));
  return lines;
}

std::vector<DataFile> parse_data_lines(const std::vector<std::string>& lines) {
  std::vector<DataFile> files;
  for (const std::string& line : lines) {
    DataFile f;
    const size_t a = line.find(' '), b = line.find(' ', a + 1), c = line.find(' ', b + 1);
    const bool fields = a != std::string::npos && b != std::string::npos && c != std::string::npos;
    if (fields) {
      f.split = line.substr(0, a);
      const auto [end, error] = std::from_chars(line.data() + a + 1, line.data() + b, f.size);
      f.sha256 = line.substr(b + 1, c - b - 1);
      f.path = line.substr(c + 1);
      const bool ok = (f.split == "train" || f.split == "val") && error == std::errc() && end == line.data() + b &&
                      f.size >= 0 && f.sha256.size() == 64 &&
                      f.sha256.find_first_not_of("0123456789abcdef") == std::string::npos && !f.path.empty();
      if (ok) {
        files.push_back(std::move(f));
        continue;
      }
    }
    throw std::invalid_argument(fmt::format("data file line '{}' is not '<train|val> <bytes> <sha256> <path>'",
                                            line.substr(0, 200)));
  }
  return files;
}

}  // namespace tinygpt::train
