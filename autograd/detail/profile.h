#pragma once
// The ops' side of profile.h: each op times itself with an OpTimer, which records into the
// calling thread's Profiler, if any; nested timers count once, in the outermost.
#include <chrono>

#include "../profile.h"

namespace tinygpt {

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
