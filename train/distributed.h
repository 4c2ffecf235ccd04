#pragma once
// Data-parallel training over MPI. Every rank holds the whole model and draws its own batches; after
// backward the ranks average their gradients (MPI_Allreduce over one flat buffer, in buckets), so
// each applies the same AdamW update and the parameters stay identical. A Communicator is one
// process's view of that group; without MPI (not compiled, or not started by mpirun) it is a group
// of one and every collective is the identity.
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "autograd/random.h"
#include "autograd/tensor.h"

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
  // the gradients, reused across steps) in buckets of at most `bucket_floats`, all in flight at once.
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
  Communicator(int rank, int size, bool mpi, std::chrono::seconds timeout)
      : rank_(rank), size_(size), mpi_(mpi), timeout_(timeout) {}
  int rank_ = 0, size_ = 1;
  bool mpi_ = false;  // false: a group of one without MPI calls
  std::chrono::seconds timeout_;
};

// A checksum of the parameters' bits (FNV-1a over every float, in order).
uint64_t parameter_checksum(const std::vector<Tensor>& params);

}  // namespace tinygpt::train
