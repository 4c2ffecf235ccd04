#pragma once
// Parallel loops over outputs and sums whose bits do not depend on the thread count: what the
// kernels, the optimizers and a library user's own ops run on (threads.h sets how many threads).
// Where the blocks begin and end depends on the thread count, so a loop's results are the same on
// any number of threads when its body computes each item alone, in an order of its own (as every
// kernel does); sums across items belong in deterministic_sum's fixed chunks.
#include <algorithm>
#include <cstdint>

#include "memory.h"
#include "threads.h"

namespace tinygpt {

namespace detail {
// A borrowed body(begin, end): no copy, no allocation.
class BlockBody {
 public:
  template <class Body>
  BlockBody(const Body& body)  // NOLINT: converts from any body
      : object_(&body),
        call_([](const void* o, int64_t begin, int64_t end) { (*static_cast<const Body*>(o))(begin, end); }) {}
  void operator()(int64_t begin, int64_t end) const { call_(object_, begin, end); }

 private:
  const void* object_;
  void (*call_)(const void*, int64_t, int64_t);
};
// [0, n) halved until each block holds at most `grain` items, the blocks on the worker threads (oneTBB).
void run_blocks(int64_t n, int64_t grain, BlockBody body);
}  // namespace detail

// body(begin, end) over [0, n): one call when n <= grain or on one thread, else blocks of at most
// `grain` items on the worker threads.
template <class Body>
void parallel_for(int64_t n, int64_t grain, const Body& body) {
  if (n <= 0) return;
  if (n <= grain || num_threads() == 1) {
    body(int64_t{0}, n);
    return;
  }
  detail::run_blocks(n, grain, body);
}

// Grain that gives each task about `work_per_task` units when one item costs `work_per_item`.
inline int64_t grain_for(int64_t work_per_item, int64_t work_per_task = 32768) {
  int64_t g = work_per_task / (work_per_item > 0 ? work_per_item : 1);
  return g > 0 ? g : 1;
}

// Sum over i in [begin, end) of term(i) in 8 running lanes (term i goes to lane (i - begin) mod 8,
// the lanes and the tail combined in a fixed order): the same bits on every run, and independent
// adds, so the loop runs at vector speed instead of one add latency per term (a plain loop cannot
// be reordered without -ffast-math).
template <class T, class Term>
T sum_in_lanes(int64_t begin, int64_t end, const Term& term) {
  constexpr int kLanes = 8;
  T lanes[kLanes] = {};
  int64_t i = begin;
  for (; i + kLanes <= end; i += kLanes)
    for (int l = 0; l < kLanes; ++l) lanes[l] += term(i + l);
  T s = 0;
  for (; i < end; ++i) s += term(i);
  for (T lane : lanes) s += lane;
  return s;
}

// Sum over i in [0, n) of term(i), in double, in fixed chunks (each summed in lanes) combined in
// order: the same bits for any thread count.
template <class Term>
double deterministic_sum(int64_t n, const Term& term) {
  constexpr int64_t kChunk = 8192;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  // Partial sums on the stack up to half a million terms: row sums run inside parallel loops.
  constexpr int64_t kOnStack = 64;
  double on_stack[kOnStack];
  memory::Vector<double> on_heap(chunks > kOnStack ? chunks : 0);
  double* partial = chunks > kOnStack ? on_heap.data() : on_stack;
  parallel_for(chunks, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c)
      partial[c] = sum_in_lanes<double>(c * kChunk, std::min(n, (c + 1) * kChunk), term);
  });
  double total = 0.0;
  for (int64_t c = 0; c < chunks; ++c) total += partial[c];
  return total;
}

inline double deterministic_sum(const float* x, int64_t n) {
  return deterministic_sum(n, [x](int64_t i) { return static_cast<double>(x[i]); });
}

}  // namespace tinygpt
