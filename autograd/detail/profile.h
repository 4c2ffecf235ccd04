#pragma once
// Where a training step's time goes, by op family, for `tinygpt bench`. Off (one branch per op)
// unless a Profiler is alive on the calling thread; nested timers count once, in the outermost.
#include <chrono>
#include <map>
#include <string>

namespace tinygpt {

using OpSeconds = std::map<std::string, double>;  // family -> seconds (forward and backward)

class Profiler {
 public:
  explicit Profiler(OpSeconds& sink);  // starts recording into sink on this thread
  ~Profiler();
  Profiler(const Profiler&) = delete;
  Profiler& operator=(const Profiler&) = delete;

 private:
  OpSeconds* previous_;
};

// The family an op's name belongs to: matmul, attention, layernorm, gelu, cross-entropy,
// embedding, or other.
const char* op_family(const char* op);

// The op this thread is computing (the outermost OpTimer's), or null.
const char* current_op();

// Also records, per thread, the op being computed: an error about a tensor names it.
class OpTimer {
 public:
  explicit OpTimer(const char* op);
  ~OpTimer();
  OpTimer(const OpTimer&) = delete;
  OpTimer& operator=(const OpTimer&) = delete;

 private:
  const char* op_;
  const char* outer_op_;
  bool outermost_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace tinygpt
