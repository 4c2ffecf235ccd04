#pragma once
// Work run on a given number of threads that really run at once, on any machine. set_num_threads
// alone only caps the pool: on a one-CPU runner "2 threads" would be one, and a test comparing 1
// thread with 2 would compare 1 with 1. A task arena of that many slots gets the workers, and a
// probe in it fails the test unless that many tasks run side by side.
#include <catch2/catch.hpp>

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

#include "tinygpt/autograd/threads.h"

namespace tinygpt::testing {

// Whether `threads` tasks of one parallel loop ran at the same time: each waits for all the others
// to start, giving up after 10 s.
inline bool threads_run_together(int threads) {
  std::atomic<int> started{0};
  std::atomic<bool> together{true};
  tbb::parallel_for(0, threads, 1, [&](int) {
    ++started;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (started.load() < threads) {
      if (std::chrono::steady_clock::now() > give_up) {
        together = false;
        return;
      }
      std::this_thread::yield();
    }
  });
  return together;
}

// Runs `work` with the kernels splitting for `threads` threads and that many running; the default
// thread setting afterwards, however `work` ends.
inline void with_threads(int threads, const std::function<void()>& work) {
  struct Restore {
    ~Restore() { set_num_threads(0); }
  } restore;
  set_num_threads(threads);
  tbb::task_arena arena(threads);
  arena.execute([&] {
    if (threads > 1) REQUIRE(threads_run_together(threads));
    work();
  });
}

}  // namespace tinygpt::testing
