#include "autograd/parallel.h"

#include <tbb/global_control.h>
#include <tbb/info.h>

#include <memory>
#include <vector>

namespace tinygpt {

namespace {
std::unique_ptr<tbb::global_control> g_thread_limit;
int g_threads = 0;
}  // namespace

void set_num_threads(int threads) {
  g_thread_limit.reset();
  g_threads = 0;
  if (threads > 0) {
    g_thread_limit = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                                           static_cast<size_t>(threads));
    g_threads = threads;
  }
}

int num_threads() {
  return g_threads > 0 ? g_threads : static_cast<int>(tbb::info::default_concurrency());
}

double deterministic_sum(const float* x, int64_t n) {
  constexpr int64_t kChunk = 8192;
  int64_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<double> partial(static_cast<size_t>(chunks), 0.0);
  parallel_for(chunks, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      double s = 0.0;
      for (int64_t i = c * kChunk, e = std::min(n, i + kChunk); i < e; ++i) s += x[i];
      partial[static_cast<size_t>(c)] = s;
    }
  });
  double total = 0.0;
  for (double p : partial) total += p;
  return total;
}

}  // namespace tinygpt
