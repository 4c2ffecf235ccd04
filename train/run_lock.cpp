#include "run_lock.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string_view>
#include <utility>

namespace tinygpt::train {

namespace {

// What a lock file holds: this line, then the holder's process id and a newline.
constexpr std::string_view kLockMagic = "tinygpt run lock, process ";

// The lock file's text, up to 64 bytes (more is not ours).
std::string lock_text(int fd) {
  char text[65] = {};
  const ssize_t n = ::pread(fd, text, sizeof text, 0);
  return std::string(text, n > 0 ? static_cast<size_t>(n) : 0);
}

// A lock file tinygpt wrote: empty (its holder stopped between making and writing it) or the magic
// line and a process id.
bool is_ours(const std::string& text) {
  if (text.empty()) return true;
  if (!text.starts_with(kLockMagic) || text.back() != '\n') return false;
  const std::string pid = text.substr(kLockMagic.size(), text.size() - kLockMagic.size() - 1);
  return !pid.empty() && pid.size() <= 10 && pid.find_first_not_of("0123456789") == std::string::npos;
}

// The process id the holder wrote into the lock file ("" if none can be read).
std::string holder_of(const std::string& text) {
  return is_ours(text) && !text.empty() ? text.substr(kLockMagic.size(), text.size() - kLockMagic.size() - 1) : "";
}

bool same_file(int fd, const std::string& path) {
  struct stat open_file {}, named {};
  return ::fstat(fd, &open_file) == 0 && ::stat(path.c_str(), &named) == 0 && open_file.st_dev == named.st_dev &&
         open_file.st_ino == named.st_ino;
}

// The path with every symbolic link on the way resolved (the file itself need not exist yet).
std::string resolved(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path p = std::filesystem::weakly_canonical(path, ec);
  return ec ? path : p.string();
}

// An exclusive lock of the open file description on the whole of `fd`'s file (a read lock, after
// a check that no one holds any, when the file is not writable): false when another holds one.
bool lock_inode(int fd, bool writable) {
  struct flock lock {};
  lock.l_type = writable ? F_WRLCK : F_RDLCK;
  lock.l_whence = SEEK_SET;
  if (!writable) {
    struct flock probe = lock;
    probe.l_type = F_WRLCK;
    if (::fcntl(fd, F_OFD_GETLK, &probe) != 0 || probe.l_type != F_UNLCK) return false;
  }
  return ::fcntl(fd, F_OFD_SETLK, &lock) == 0;
}

// Opens the checkpoint (when it exists) and takes its inode lock; -1 when there is no file yet.
int lock_checkpoint_file(const std::string& checkpoint) {
  bool writable = true;
  int fd = ::open(checkpoint.c_str(), O_RDWR | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0 && (errno == EACCES || errno == EROFS)) writable = false, fd = ::open(checkpoint.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return -1;  // none yet (or not a file): check_output_path reports what is there
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return -1;
  }
  if (!lock_inode(fd, writable)) {
    ::close(fd);
    throw std::runtime_error(fmt::format(
        "'{}' is being written by another tinygpt run under another name (the same file, device {}:{} inode {}: a "
        "hard link): one run has one writer; wait for it to finish, or stop it, then try again",
        checkpoint, major(st.st_dev), minor(st.st_dev), st.st_ino));
  }
  return fd;
}

}  // namespace

std::string RunLock::lock_path(const std::string& checkpoint) { return resolved(checkpoint) + ".tinygpt-lock"; }

RunLock::RunLock(const std::string& checkpoint) : checkpoint_(checkpoint), path_(lock_path(checkpoint)) {
  // A holder that finishes removes the file; if it did so between our open and our lock, the file
  // we locked is no longer the one at the path, and we start again.
  for (;;) {
    const int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0)
      throw std::runtime_error(fmt::format("cannot lock the run '{}': cannot open '{}': {}", checkpoint, path_,
                                           std::strerror(errno)));
    struct stat st {};
    // A second name for the file (a hard link) makes it someone else's too: writing the pid would
    // change that other file.
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1 || st.st_size > 64 ||
        !is_ours(lock_text(fd))) {
      ::close(fd);
      throw std::runtime_error(fmt::format(
          "cannot lock the run '{}': '{}' exists and is not a tinygpt lock file; tinygpt leaves it as it is: move it "
          "away or write elsewhere",
          checkpoint, path_));
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int error = errno;
      const std::string pid = holder_of(lock_text(fd));
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
    fd_ = fd;
    break;
  }
  try {
    file_fd_ = lock_checkpoint_file(checkpoint_);
  } catch (...) {
    release();
    throw;
  }
  const std::string pid = fmt::format("{}{}\n", kLockMagic, ::getpid());
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    const int error = errno;
    release();
    throw std::runtime_error(fmt::format("cannot lock the run '{}': cannot write '{}': {}", checkpoint, path_,
                                         std::strerror(error)));
  }
}

void RunLock::follow() {
  if (fd_ < 0) return;
  const int old = std::exchange(file_fd_, -1);
  try {
    file_fd_ = lock_checkpoint_file(checkpoint_);
  } catch (...) {  // a hard link to the new file, made and locked in this instant: the old lock stays
    file_fd_ = old;
    return;
  }
  if (old >= 0) ::close(old);
}

void RunLock::release() {
  if (file_fd_ >= 0) ::close(std::exchange(file_fd_, -1));
  if (fd_ < 0) return;
  ::unlink(path_.c_str());  // while still holding the lock: see the constructor
  ::close(fd_);
  fd_ = -1;
}

RunLock::~RunLock() { release(); }

RunLock::RunLock(RunLock&& other) noexcept
    : checkpoint_(std::move(other.checkpoint_)),
      path_(std::move(other.path_)),
      fd_(std::exchange(other.fd_, -1)),
      file_fd_(std::exchange(other.file_fd_, -1)) {}

RunLock& RunLock::operator=(RunLock&& other) noexcept {
  if (this != &other) {
    release();
    checkpoint_ = std::move(other.checkpoint_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    file_fd_ = std::exchange(other.file_fd_, -1);
  }
  return *this;
}

}  // namespace tinygpt::train
