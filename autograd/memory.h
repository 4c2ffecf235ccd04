#pragma once
// Memory that a training step hands back and the next step takes again. A step frees its
// activations, gradients and graph when backward is done, and the next step asks for the same sizes
// in the same order; while a memory::Reuse scope is open, freed blocks wait on a free list per size
// instead of going back to the system, so after the first steps a step makes no heap allocation.
// Tensors' storage, their shapes, TensorImpls and graph nodes all come from here.
#include <cstddef>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace tinygpt::memory {

// Asks the kernel for 2 MB pages over a large block not yet written (a no-op under 4 MB): a 500 MB
// file image read once then takes 250 page faults instead of 128,000, each of which costs
// microseconds in a VM. Not for tensors that training reuses step after step (memory.cpp says why).
void advise_huge_pages(void* block, std::size_t bytes);

// A 64-byte aligned block of at least `bytes`; `release` must get the same `bytes` back.
void* allocate(std::size_t bytes);
void release(void* block, std::size_t bytes) noexcept;

// Keeps freed blocks for reuse while at least one Reuse is alive (a Trainer holds one); when the
// last one ends, the kept blocks go back to the system. Sizes that come and go (sampling with a
// growing context) therefore cost nothing once the scope is over.
class Reuse {
 public:
  Reuse();
  ~Reuse();
  Reuse(const Reuse&) = delete;
  Reuse& operator=(const Reuse&) = delete;
};

// A standard allocator over allocate/release. Elements are default-initialized, so that
// std::vector<float, Allocator<float>>(n) leaves floats unwritten (every op writes its whole
// output) while (n, 0.0f) still zero-fills where a sum starts from zero.
template <class T>
struct Allocator {
  using value_type = T;
  Allocator() = default;
  template <class U>
  Allocator(const Allocator<U>&) {}
  T* allocate(std::size_t n) { return static_cast<T*>(memory::allocate(n * sizeof(T))); }
  void deallocate(T* p, std::size_t n) noexcept { memory::release(p, n * sizeof(T)); }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U>
  bool operator==(const Allocator<U>&) const { return true; }
};

template <class T>
using Vector = std::vector<T, Allocator<T>>;

// std::make_shared with the object and its control block from the reused blocks.
template <class T, class... Args>
std::shared_ptr<T> make_shared(Args&&... args) {
  return std::allocate_shared<T>(Allocator<T>(), std::forward<Args>(args)...);
}

}  // namespace tinygpt::memory
