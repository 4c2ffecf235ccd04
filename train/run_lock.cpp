#include "tinygpt/train/run_lock.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace tinygpt::train {

namespace {

// The process id the holder wrote into the lock file ("" if none can be read).
std::string holder_of(int fd) {
  char text[32] = {};
  const ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
  std::string pid(text, n > 0 ? static_cast<size_t>(n) : 0);
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  return pid.find_first_not_of("0123456789") == std::string::npos ? pid : "";
}

bool same_file(int fd, const std::string& path) {
  struct stat open_file {}, named {};
  return ::fstat(fd, &open_file) == 0 && ::stat(path.c_str(), &named) == 0 && open_file.st_dev == named.st_dev &&
         open_file.st_ino == named.st_ino;
}

}  // namespace

std::string RunLock::lock_path(const std::string& checkpoint) { return checkpoint + ".lock"; }

RunLock::RunLock(const std::string& checkpoint) : path_(lock_path(checkpoint)) {
  // A holder that finishes removes the file; if it did so between our open and our lock, the file
  // we locked is no longer the one at the path, and we start again.
  for (;;) {
    const int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0)
      throw std::runtime_error(fmt::format("cannot lock the run '{}': cannot open '{}': {}", checkpoint, path_,
                                           std::strerror(errno)));
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int error = errno;
      const std::string pid = holder_of(fd);
      ::close(fd);
      if (error == EWOULDBLOCK)
        throw std::runtime_error(fmt::format(
            "'{}' is being written by another tinygpt run ({}lock '{}'): one run has one writer; wait for it to "
            "finish, or stop it, then try again",
            checkpoint, pid.empty() ? "" : fmt::format("process {}; ", pid), path_));
      throw std::runtime_error(fmt::format("cannot lock the run '{}' ('{}'): {}", checkpoint, path_, std::strerror(error)));
    }
    if (!same_file(fd, path_)) {
      ::close(fd);
      continue;
    }
    const std::string pid = fmt::format("{}\n", ::getpid());
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
      const int error = errno;
      ::unlink(path_.c_str());
      ::close(fd);
      throw std::runtime_error(fmt::format("cannot lock the run '{}': cannot write '{}': {}", checkpoint, path_,
                                           std::strerror(error)));
    }
    fd_ = fd;
    return;
  }
}

void RunLock::release() {
  if (fd_ < 0) return;
  ::unlink(path_.c_str());  // while still holding the lock: see the constructor
  ::close(fd_);
  fd_ = -1;
}

RunLock::~RunLock() { release(); }

RunLock::RunLock(RunLock&& other) noexcept : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)) {}

RunLock& RunLock::operator=(RunLock&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

}  // namespace tinygpt::train
