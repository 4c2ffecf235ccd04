#include "distributed.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "../autograd/graph.h"
#include "../autograd/random.h"

#ifdef TINYGPT_HAVE_MPI
#define OMPI_SKIP_MPICXX 1  // the C API only: the deprecated C++ bindings need another library
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace tinygpt::train {

namespace {

// Launchers (Open MPI's mpirun, PMIx, Hydra) tell their processes so; a plain `tinygpt train`
// then never starts MPI (no launcher warnings, no start-up cost).
bool started_by_launcher() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"})
    if (std::getenv(name)) return true;
  return false;
}

#ifndef TINYGPT_HAVE_MPI
// How many processes the launcher started (1 when it does not say).
int launched_processes() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char* n = std::getenv(name)) return std::atoi(n);
  return 1;
}
#endif

#ifdef TINYGPT_HAVE_MPI
void check(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw std::runtime_error(fmt::format("MPI {} failed: {} (did another rank stop?)", what, std::string(text, length)));
}

#endif

}  // namespace

Watchdog::Watchdog(std::chrono::seconds timeout, int rank) : timeout_(timeout), rank_(rank) {
  thread_ = std::thread([this] { watch(); });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void Watchdog::arm(const char* what) {
  std::lock_guard lock(mutex_);
  what_ = what;
  deadline_ = std::chrono::steady_clock::now() + timeout_;
  armed_ = true;
  wake_.notify_all();
}

void Watchdog::disarm() {
  std::lock_guard lock(mutex_);
  armed_ = false;
}

void Watchdog::watch() {
  std::unique_lock lock(mutex_);
  while (!stop_) {
    if (!armed_) {
      wake_.wait(lock);
      continue;
    }
    if (std::chrono::steady_clock::now() < deadline_) {
      wake_.wait_until(lock, deadline_);
      continue;
    }
    // The collective is stuck: end this process; the launcher then ends the others.
    std::fprintf(stderr,
                 "tinygpt: error on rank %d: MPI %s: rank %d waited %lld s for the other ranks; one of them stopped "
                 "or hangs, not busy: between two collectives a rank does at most one step, or one batch of an "
                 "evaluation (the limit is --mpi-timeout)\n",
                 rank_, what_, rank_, static_cast<long long>(timeout_.count()));
    std::fflush(stderr);
    std::_Exit(1);
  }
}

MpiSession::MpiSession(int& argc, char**& argv) {
#ifdef TINYGPT_HAVE_MPI
  if (!started_by_launcher()) return;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);  // only the main thread calls MPI
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);     // errors become exceptions (check)
  active_ = true;
#else
  (void)argc, (void)argv;
  if (started_by_launcher() && launched_processes() > 1) {  // each would train alone, all on one file
    std::fprintf(stderr, "tinygpt: error: this tinygpt was built without MPI, so under mpirun every process would "
                         "train alone; install libopenmpi-dev and rebuild\n");
    std::exit(1);
  }
#endif
}

MpiSession::~MpiSession() {
#ifdef TINYGPT_HAVE_MPI
  if (active_) MPI_Finalize();
#endif
}

void MpiSession::abort_all(int code) {
#ifdef TINYGPT_HAVE_MPI
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Abort(MPI_COMM_WORLD, code);
#endif
  std::_Exit(code);
}

Communicator Communicator::world(std::chrono::seconds timeout) {
#ifdef TINYGPT_HAVE_MPI
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) {
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > 1) return Communicator(rank, size, std::make_shared<Watchdog>(timeout, rank));
  }
#else
  (void)timeout;
#endif
  return single();
}

Communicator Communicator::single() { return Communicator(0, 1, nullptr); }

void Communicator::average_gradients(const std::vector<Tensor>& params, Buffer& flat, int64_t bucket_floats) const {
  if (!watchdog_) return;
#ifdef TINYGPT_HAVE_MPI
  int64_t total = 0;
  for (const Tensor& p : params) {
    grad_sink(p);  // a parameter no op reached gets zeros, so every rank sends the same layout
    total += p.numel();
  }
  if (static_cast<int64_t>(flat.size()) < total) flat.resize(static_cast<size_t>(total));
  int64_t offset = 0;
  for (const Tensor& p : params) {
    std::memcpy(flat.data() + offset, p.grad().data(), p.numel() * sizeof(float));
    offset += p.numel();
  }
  {
    const Watch watch(*watchdog_, "allreduce of the gradients");
    for (int64_t start = 0; start < total; start += bucket_floats) {
      const int count = static_cast<int>(std::min(bucket_floats, total - start));
      check(MPI_Allreduce(MPI_IN_PLACE, flat.data() + start, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD),
            "allreduce of the gradients");
    }
  }
  const float inv = 1.0f / static_cast<float>(size_);
  offset = 0;
  for (const Tensor& p : params) {
    float* g = p.grad().data();
    for (int64_t i = 0; i < p.numel(); ++i) g[i] = flat[offset + i] * inv;
    offset += p.numel();
  }
#else
  (void)params, (void)flat, (void)bucket_floats;
#endif
}

double Communicator::sum(double value) const {
#ifdef TINYGPT_HAVE_MPI
  if (watchdog_) {
    double total = 0;
    const Watch watch(*watchdog_, "sum");
    check(MPI_Allreduce(&value, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD), "sum");
    return total;
  }
#endif
  return value;
}

bool Communicator::any(bool flag) const {
#ifdef TINYGPT_HAVE_MPI
  if (watchdog_) {
    int mine = flag ? 1 : 0, result = 0;
    const Watch watch(*watchdog_, "agreement");
    check(MPI_Allreduce(&mine, &result, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD), "agreement");
    return result != 0;
  }
#endif
  return flag;
}

std::vector<uint64_t> Communicator::all_gather(uint64_t value) const {
  std::vector<uint64_t> all(static_cast<size_t>(size_), value);
#ifdef TINYGPT_HAVE_MPI
  if (watchdog_) {
    const Watch watch(*watchdog_, "gather");
    check(MPI_Allgather(&value, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD), "gather");
  }
#endif
  return all;
}

std::vector<Rng::State> Communicator::all_gather(const Rng::State& state) const {
  std::vector<Rng::State> all(static_cast<size_t>(size_), state);
#ifdef TINYGPT_HAVE_MPI
  if (watchdog_) {
    const Watch watch(*watchdog_, "gather of the sampler states");
    check(MPI_Allgather(state.data(), 4, MPI_UINT64_T, all.data(), 4, MPI_UINT64_T, MPI_COMM_WORLD),
          "gather of the sampler states");
  }
#endif
  return all;
}

std::string Communicator::broadcast(const std::string& from_root) const {
#ifdef TINYGPT_HAVE_MPI
  if (watchdog_) {
    uint64_t length = from_root.size();
    const Watch watch(*watchdog_, "broadcast");
    check(MPI_Bcast(&length, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD), "broadcast");
    std::string text = rank_ == 0 ? from_root : std::string(length, '\0');
    check(MPI_Bcast(text.data(), static_cast<int>(length), MPI_CHAR, 0, MPI_COMM_WORLD), "broadcast");
    return text;
  }
#endif
  return from_root;
}

void Communicator::require_same(uint64_t value, const std::string& what) const {
  const std::vector<uint64_t> all = all_gather(value);
  for (uint64_t v : all)
    if (v != all[0]) {
      std::string list;
      for (size_t r = 0; r < all.size(); ++r) list += fmt::format("{}rank {}: {:#018x}", r ? ", " : "", r, all[r]);
      throw std::runtime_error(fmt::format("{} differ across ranks ({}): the ranks no longer train the same model",
                                           what, list));
    }
}

uint64_t parameter_checksum(const std::vector<Tensor>& params) {
  Fnv1a hash;
  for (const Tensor& p : params) {
    const Tensor c = p.contiguous();
    const float* x = c.data();
    for (int64_t i = 0; i < c.numel(); ++i) {
      uint32_t bits;
      std::memcpy(&bits, x + i, sizeof bits);
      hash.add(bits);
    }
  }
  return hash.value();
}

}  // namespace tinygpt::train
