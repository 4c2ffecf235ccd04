#pragma once
// One writer per run: a training run holds an exclusive lock (flock) on "<checkpoint>.lock" for as
// long as it writes the checkpoint, its log and its plot. A second run on the same checkpoint stops
// at once with an error naming the process that holds it. The kernel drops the lock when the
// holder exits in any way (kill -9 included), so a lock file left behind never blocks a later run.
#include <string>

namespace tinygpt::train {

class RunLock {
 public:
  RunLock() = default;  // holds nothing
  // Takes the lock of `checkpoint`, or throws: "'run.h5' is being written by another tinygpt run
  // (process 4242; lock 'run.h5.lock') ...", or the OS's reason when the lock file cannot be made.
  explicit RunLock(const std::string& checkpoint);
  ~RunLock();  // removes the lock file and releases the lock
  RunLock(RunLock&& other) noexcept;
  RunLock& operator=(RunLock&& other) noexcept;
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

  bool held() const { return fd_ >= 0; }
  static std::string lock_path(const std::string& checkpoint);  // "<checkpoint>.lock"

 private:
  void release();
  std::string path_;
  int fd_ = -1;
};

}  // namespace tinygpt::train
