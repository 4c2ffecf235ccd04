#pragma once
// Parallel loops over outputs (oneTBB; the implementation's own header, not installed). Every kernel
// gives each output element to exactly one task and computes it in a fixed order, so results are
// bitwise identical for any number of threads (threads.h sets how many).
#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "tinygpt/autograd/memory.h"
#include "tinygpt/autograd/threads.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

namespace tinygpt {

// body(begin, end) over [0, n) in blocks of at least `grain` items; runs inline when small.
template <class Body>
void parallel_for(int64_t n, int64_t grain, const Body& body) {
  if (n <= 0) return;
  if (n <= grain || num_threads() == 1) {
    body(int64_t{0}, n);
    return;
  }
  tbb::parallel_for(tbb::blocked_range<int64_t>(0, n, grain),
                    [&](const tbb::blocked_range<int64_t>& r) { body(r.begin(), r.end()); },
                    tbb::simple_partitioner());
}

// Like parallel_for, but body(slot, begin, end) also gets the slot (< max_slots()) of the thread
// running it: a kernel that needs scratch memory per task allocates max_slots() shares once per call
// and each task uses its thread's share. (Scratch grown lazily per thread would allocate whenever
// the scheduler first sends such a task to a thread, which may be any step.)
int max_slots();
template <class Body>
void parallel_for_slots(int64_t n, int64_t grain, const Body& body) {
  if (n <= 0) return;
  if (n <= grain || num_threads() == 1) {
    body(0, int64_t{0}, n);
    return;
  }
  tbb::parallel_for(tbb::blocked_range<int64_t>(0, n, grain),
                    [&](const tbb::blocked_range<int64_t>& r) {
                      body(tbb::this_task_arena::current_thread_index(), r.begin(), r.end());
                    },
                    tbb::simple_partitioner());
}

// Scratch for parallel_for_slots: a share of `floats` for each of `slots` threads (reused blocks,
// memory.h), each share a guard gap away from its neighbours. A core's prefetchers run on past the
// end of the share it streams through, about 36 KB here; without the gap they fetch the start of
// the next share into that core's cache while another thread writes it, and that thread waits for
// each line to come back (SlotScratch).
class SlotScratch {
 public:
  explicit SlotScratch(int64_t floats, int slots = max_slots())
      : stride_(floats > 0 ? (floats + 15) / 16 * 16 + kGap : 0), buffer_(floats > 0 ? kGap + slots * stride_ : 0) {}
  float* operator[](int slot) { return stride_ > 0 ? buffer_.data() + kGap + slot * stride_ : nullptr; }

 private:
  static constexpr int64_t kGap = 16384;  // floats: 64 KB
  int64_t stride_;
  memory::Vector<float> buffer_;
};

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
    for (int64_t c = c0; c < c1; ++c) {
      partial[c] = sum_in_lanes<double>(c * kChunk, std::min(n, (c + 1) * kChunk), term);
    }
  });
  double total = 0.0;
  for (int64_t c = 0; c < chunks; ++c) total += partial[c];
  return total;
}

inline double deterministic_sum(const float* x, int64_t n) {
  return deterministic_sum(n, [x](int64_t i) { return static_cast<double>(x[i]); });
}

}  // namespace tinygpt
