#include "input_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace tinygpt::data {

namespace {
const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "is a directory, not a file";
  if (S_ISFIFO(mode)) return "is a FIFO (named pipe), not a regular file";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "is a device, not a regular file";
  if (S_ISSOCK(mode)) return "is a socket, not a regular file";
  return "is not a regular file";
}
}  // namespace

InputFile::InputFile(const std::string& path, const std::string& what) : path_(path), what_(what) {
  // O_NONBLOCK: opening a FIFO with no writer would wait forever; a regular file ignores it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) fail(errno == ENOENT ? "no such file" : std::strerror(errno));
  struct stat st {};
  const bool stat_ok = ::fstat(fd, &st) == 0;
  if (!stat_ok || !S_ISREG(st.st_mode)) {  // the destructor does not run for a throwing constructor
    const std::string problem = stat_ok ? kind_of(st.st_mode) : std::strerror(errno);
    ::close(fd);
    fail(problem);
  }
  fd_ = fd;
  size_ = static_cast<int64_t>(st.st_size);
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

void InputFile::fail(const std::string& problem) const {
  throw std::runtime_error(what_.empty() ? fmt::format("'{}': {}", path_, problem)
                                         : fmt::format("{} '{}': {}", what_, path_, problem));
}

size_t InputFile::read(void* into, size_t n) {
  size_t done = 0;
  while (done < n) {
    const ssize_t got = ::read(fd_, static_cast<char*>(into) + done, n - done);
    if (got == 0) break;
    if (got < 0) {
      if (errno == EINTR) continue;
      fail(fmt::format("cannot read: {}", std::strerror(errno)));
    }
    done += static_cast<size_t>(got);
  }
  return done;
}

FileBytes InputFile::read_all(int64_t max_bytes) {
  if (size_ > max_bytes) fail(fmt::format("{} bytes is more than the {} bytes allowed", size_, max_bytes));
  FileBytes bytes(static_cast<size_t>(size_));
  if (read(bytes.data(), bytes.size()) != bytes.size()) fail("the file shrank while it was read");
  char extra;
  if (read(&extra, 1) != 0) fail("the file grew while it was read");
  return bytes;
}

}  // namespace tinygpt::data
