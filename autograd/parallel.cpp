#include "kernels/parallel.h"

#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/info.h>
#include <tbb/parallel_for.h>

#include <fmt/format.h>

#include <memory>
#include <stdexcept>

namespace tinygpt {

namespace {
std::unique_ptr<tbb::global_control> g_thread_limit;
int g_threads = 0;
}  // namespace

void set_num_threads(int threads) {
  if (threads < 0)
    throw std::invalid_argument(fmt::format("set_num_threads: {} threads (0: all cores, or a positive count)", threads));
  g_thread_limit.reset();
  g_threads = 0;
  if (threads > 0) {
    g_thread_limit = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                                           static_cast<size_t>(threads));
    g_threads = threads;
  }
}

int max_slots() { return tbb::this_task_arena::max_concurrency(); }

void detail::run_blocks(int64_t n, int64_t grain, BlockBody body) {
  tbb::parallel_for(tbb::blocked_range<int64_t>(0, n, grain),
                    [&](const tbb::blocked_range<int64_t>& r) { body(r.begin(), r.end()); },
                    tbb::simple_partitioner());
}

int num_threads() {
  return g_threads > 0 ? g_threads : static_cast<int>(tbb::info::default_concurrency());
}

}  // namespace tinygpt
