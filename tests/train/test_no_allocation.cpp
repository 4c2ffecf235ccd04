// A steady-state training step allocates nothing: activations, gradients, graph nodes and scratch
// all come from memory the earlier steps handed back. This executable replaces the global
// operator new to count every heap allocation made while the counter is armed.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <new>

#include "tinygpt/autograd/threads.h"
#include "temp_files.h"
#include "tinygpt/train/trainer.h"

namespace {
std::atomic<bool> g_armed{false};
std::atomic<long> g_allocations{0};

void* counted(std::size_t size, std::size_t align) {
  if (g_armed.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (size == 0) size = 1;
  void* p = align > alignof(std::max_align_t) ? std::aligned_alloc(align, (size + align - 1) / align * align)
                                              : std::malloc(size);
  if (!p) throw std::bad_alloc();
  return p;
}
}  // namespace

void* operator new(std::size_t size) { return counted(size, 0); }
void* operator new[](std::size_t size) { return counted(size, 0); }
void* operator new(std::size_t size, std::align_val_t align) { return counted(size, static_cast<std::size_t>(align)); }
void* operator new[](std::size_t size, std::align_val_t align) {
  return counted(size, static_cast<std::size_t>(align));
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try { return counted(size, 0); } catch (...) { return nullptr; }
}
// Every block above came from malloc or aligned_alloc, so free is the matching release; GCC sees
// free inside an operator delete and warns of a mismatch that is not one.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

using namespace tinygpt;

namespace {
long allocations_in_steps_3_to_5(train::TrainOptions options, int threads) {
  options.threads = threads;  // the trainer sets the thread count from its options
  train::Trainer trainer(options);
  trainer.train_step(1e-3f);
  trainer.train_step(1e-3f);
  g_allocations = 0;
  g_armed = true;
  for (int step = 3; step <= 5; ++step) trainer.train_step(1e-3f);
  g_armed = false;
  REQUIRE(num_threads() == threads);
  return g_allocations.load();
}
}  // namespace

TEST_CASE("a steady-state training step makes no heap allocation", "[train][memory]") {
  testing::TempDir dir;
  std::string text;
  for (int i = 0; i < 60; ++i) text += "To be, or not to be, that is the question. Whether 'tis nobler in the mind.\n";
  train::TrainOptions o;
  o.data = {dir.write("text.txt", text)};
  o.out = dir.file("run.h5");
  o.layers = 2, o.heads = 2, o.embd = 32, o.block = 32, o.batch = 4;
  o.dropout = 0.1;  // the dropout masks too
  SECTION("one thread") { CHECK(allocations_in_steps_3_to_5(o, 1) == 0); }
  SECTION("two threads, gradient accumulation") {
    o.grad_accum = 2;
    CHECK(allocations_in_steps_3_to_5(o, 2) == 0);
  }
  SECTION("a long context: tiled attention") {
    o.block = 520, o.batch = 1, o.val_fraction = 0.0;
    CHECK(allocations_in_steps_3_to_5(o, 2) == 0);
  }
}

TEST_CASE("the counter sees an allocation (the test above can fail)", "[train][memory]") {
  g_allocations = 0;
  g_armed = true;
  auto* p = new std::vector<int>(100);
  g_armed = false;
  delete p;
  CHECK(g_allocations.load() == 2);
}
