#pragma once
// Runs a piece of work in a forked child process, under a wall-clock limit and a memory limit, for
// code that may crash or hang on hostile input (libhdf5 on a damaged file): whatever happens there,
// this process only learns how the child ended (the child's stdout and stderr go to /dev/null). The work must not need other threads (a forked
// child has only the thread that forked) and must not write anything the parent relies on.
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

namespace tinygpt::io {

struct ChildEnd {
  enum class How { returned, threw, crashed, timed_out, out_of_memory };
  How how = How::returned;
  int signal = 0;       // crashed: the signal that ended it
  std::string message;  // threw: what() of the exception
  std::string result;   // returned: what the work returned (run_in_child_for)
  std::string describe() const;  // e.g. "crashed (signal 11, SIGSEGV)"
};

// memory_budget: bytes the child may map beyond what this process has mapped now (not enforced
// under AddressSanitizer, which maps its shadow memory up front).
ChildEnd run_in_child(const std::function<void()>& work, std::chrono::milliseconds limit, int64_t memory_budget);
// The same for work that returns bytes (at most max_result of them; more is an error, "threw"):
// they travel through anonymous shared memory, not a path, and come back in ChildEnd::result.
ChildEnd run_in_child_for(const std::function<std::string()>& work, std::chrono::milliseconds limit,
                          int64_t memory_budget, size_t max_result);

}  // namespace tinygpt::io
