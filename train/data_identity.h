#pragma once
// Which text a run trains on: each file's absolute path, size and SHA-256, kept in the checkpoint,
// so that a resume finds the files where they were (from any folder), or where --data now points
// when the bytes are the same, and refuses text that changed instead of training on it unnoticed.
#include <cstdint>
#include <string>
#include <vector>

namespace tinygpt::train {

struct DataFile {
  std::string split;   // "train" or "val"
  std::string path;    // absolute
  int64_t size = 0;    // bytes
  std::string sha256;  // 64 lower-case hex digits
};

// Reads and hashes every file (training files first, in order). Errors name the file and the OS's reason.
std::vector<DataFile> identify_data(const std::vector<std::string>& train_files,
                                    const std::vector<std::string>& val_files);

// "" when `now` holds the same bytes as `then` in the same order (paths may differ); otherwise what
// differs, in words: "train file 1 was '/d/a.txt' (1709 bytes, SHA-256 0c1d...), now '/d/a.txt' (1800 ...)".
std::string data_difference(const std::vector<DataFile>& then, const std::vector<DataFile>& now);

// The checkpoint's text form: one line per file, "<split> <size> <sha256> <path>".
std::vector<std::string> data_lines(const std::vector<DataFile>& files);
// Parses data_lines' form; throws std::invalid_argument naming the line that is malformed.
std::vector<DataFile> parse_data_lines(const std::vector<std::string>& lines);

}  // namespace tinygpt::train
