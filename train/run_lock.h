#pragma once
// One writer per run: a training run holds its checkpoint's lock for as long as it writes the
// checkpoint, its log and its plot, and a second run on the same checkpoint stops at once with an
// error naming the process that holds it. The lock knows the file, not the name: it is taken on
// "<checkpoint>.tinygpt-lock" beside the file a symbolic link leads to (the same lock for every link
// to it; a file of that name that tinygpt did not write is refused, never emptied or removed), and, with an open-file-description lock (fcntl F_OFD_SETLK), on the checkpoint file itself,
// which every hard link to it shares (device and inode). The kernel drops both when the holder
// exits in any way (kill -9 included), so a lock file left behind never blocks a later run.
#include <string>

namespace tinygpt::train {

class RunLock {
 public:
  RunLock() = default;  // holds nothing
  // Takes the lock of `checkpoint`, or throws: "'run.h5' is being written by another tinygpt run
  // (process 4242; lock 'run.h5.tinygpt-lock') ...", or the OS's reason when the lock file cannot be made.
  explicit RunLock(const std::string& checkpoint);
  ~RunLock();  // removes the lock file and releases the locks
  RunLock(RunLock&& other) noexcept;
  RunLock& operator=(RunLock&& other) noexcept;
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

  bool held() const { return fd_ >= 0; }
  // After the checkpoint was written anew (a new file renamed over the old): locks the new file,
  // so that a hard link made to it later is known too.
  void follow();
  // "<checkpoint>.tinygpt-lock" beside the file `checkpoint` leads to (through symbolic links).
  static std::string lock_path(const std::string& checkpoint);

 private:
  void release();
  std::string checkpoint_, path_;
  int fd_ = -1;       // the lock file's
  int file_fd_ = -1;  // the checkpoint's, holding its inode lock (-1 before it exists)
};

}  // namespace tinygpt::train
