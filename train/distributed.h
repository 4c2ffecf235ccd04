#pragma once
// Data-parallel training over MPI. Every rank holds the whole model and draws its own batches; after
// backward the ranks average their gradients (MPI_Allreduce over one flat buffer, in buckets), so
// each applies the same AdamW update and the parameters stay identical. A Communicator is one
// process's view of that group; without MPI (not compiled, or not started by mpirun) it is a group
// of one and every collective is the identity.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "../autograd/random.h"
#include "../autograd/tensor.h"

namespace tinygpt::train {

// MPI for the life of the program: initialized when the program was started by mpirun (or
// another MPI launcher) and MPI was found at build time, finalized at the end.
class MpiSession {
 public:
  MpiSession(int& argc, char**& argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  bool active() const { return active_; }
  // Ends every rank's process at once (after an error on one rank, instead of a hang on the others).
  [[noreturn]] static void abort_all(int code);

 private:
  bool active_ = false;
};

// Ends the process with an error when a collective waits longer than `timeout`: MPI has no
// timeout of its own, and one rank that hangs would keep the others waiting forever. A thread
// that sleeps until a collective is armed, then until its deadline.
class Watchdog {
 public:
  Watchdog(std::chrono::seconds timeout, int rank);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
  void arm(const char* what);
  void disarm();

 private:
  void watch();
  std::chrono::seconds timeout_;
  int rank_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool armed_ = false, stop_ = false;
  const char* what_ = "";
  std::chrono::steady_clock::time_point deadline_;
  std::thread thread_;
};

// Arms a watchdog for the scope of one collective.
class Watch {
 public:
  Watch(Watchdog& dog, const char* what) : dog_(dog) { dog_.arm(what); }
  ~Watch() { dog_.disarm(); }
  Watch(const Watch&) = delete;
  Watch& operator=(const Watch&) = delete;

 private:
  Watchdog& dog_;
};

class Communicator {
 public:
  // world: every rank of the job when MPI is active, else a group of one. `timeout`: how long a
  // collective may wait for the other ranks before this rank gives up with an error (MPI itself
  // would wait forever for a rank that hangs).
  static Communicator world(std::chrono::seconds timeout = std::chrono::seconds(300));
  static Communicator single();  // a group of one (tests; single-process runs)

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool is_root() const { return rank_ == 0; }

  // The mean over ranks of the gradients of `params`, in place, through `flat` (one buffer of all
  // the gradients, reused across steps) in buckets of at most `bucket_floats` (MPI counts are ints).
  void average_gradients(const std::vector<Tensor>& params, Buffer& flat, int64_t bucket_floats = 1 << 22) const;
  double sum(double value) const;     // over ranks
  double mean(double value) const { return sum(value) / size_; }
  bool any(bool flag) const;          // true on every rank when true on one
  // Every rank's value, in rank order, on every rank.
  std::vector<uint64_t> all_gather(uint64_t value) const;
  std::vector<Rng::State> all_gather(const Rng::State& state) const;
  std::string broadcast(const std::string& from_root) const;
  // Throws on every rank, with every rank's value, unless all ranks hold the same one.
  void require_same(uint64_t value, const std::string& what) const;

 private:
  Communicator(int rank, int size, std::shared_ptr<Watchdog> watchdog)
      : rank_(rank), size_(size), watchdog_(std::move(watchdog)) {}
  int rank_ = 0, size_ = 1;
  std::shared_ptr<Watchdog> watchdog_;  // null: a group of one, no MPI calls
};

// A checksum of the parameters' bits (FNV-1a over every float, in order).
uint64_t parameter_checksum(const std::vector<Tensor>& params);

}  // namespace tinygpt::train
