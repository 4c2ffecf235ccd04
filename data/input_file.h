#pragma once
// A file opened for reading only when it is a regular file: a FIFO would block in open or read,
// a device such as /dev/zero never ends, a directory holds no bytes. The type is checked on the
// open descriptor, so the file cannot be swapped for another between the check and the reads.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "../autograd/memory.h"

namespace tinygpt::data {

// A whole file's bytes. The buffer is not zeroed first (a std::vector would be), so a large file
// is written to memory once, by the read.
class FileBytes {
 public:
  FileBytes() = default;
  explicit FileBytes(size_t size) : data_(new char[size]), size_(size) { memory::advise_huge_pages(data_.get(), size); }
  char* data() { return data_.get(); }
  const char* data() const { return data_.get(); }
  size_t size() const { return size_; }
  std::string_view view() const { return {data_.get(), size_}; }

 private:
  std::unique_ptr<char[]> data_;
  size_t size_ = 0;
};

class InputFile {
 public:
  // Throws std::runtime_error "<what> '<path>': <problem>" (what: "checkpoint", "log", ...; empty
  // for plain text), e.g. "checkpoint 'x.h5': is a directory, not a file".
  explicit InputFile(const std::string& path, const std::string& what = "");
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  int64_t size() const { return size_; }  // at open time
  int descriptor() const { return fd_; }  // for mmap; owned by this object
  // Up to n bytes (fewer only at the end of the file); throws on a read error.
  size_t read(void* into, size_t n);
  // The whole file, refused when it is larger than max_bytes.
  FileBytes read_all(int64_t max_bytes);
  [[noreturn]] void fail(const std::string& problem) const;  // throws, naming the file

 private:
  std::string path_, what_;
  int fd_ = -1;
  int64_t size_ = 0;
};

}  // namespace tinygpt::data
