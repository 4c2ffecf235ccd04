#pragma once
// Parallel loops that give each task its thread's slot of scratch memory (oneTBB; the
// implementation's own header, not installed). The plain loops and sums are public (parallel.h).
#include <cstdint>

#include "../memory.h"
#include "../parallel.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

namespace tinygpt {

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

}  // namespace tinygpt
