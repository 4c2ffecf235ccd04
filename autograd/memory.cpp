#include "memory.h"

#include <sys/mman.h>

#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace tinygpt::memory {

namespace {
constexpr std::size_t kAlign = 64;

// The allocator's state. Like malloc's, it is process-wide: a block may be freed on another thread
// than the one that took it.
struct Pool {
  std::mutex mutex;
  int scopes = 0;
  std::unordered_map<std::size_t, void*> free_lists;  // rounded size -> first free block
};

// Never destroyed: a tensor in static or thread-local storage may be freed after it would be.
Pool& pool() {
  static Pool& instance = *new Pool;
  return instance;
}

std::size_t rounded(std::size_t bytes) { return bytes == 0 ? kAlign : (bytes + kAlign - 1) / kAlign * kAlign; }

// A free block holds the address of the next free block of its size in its first bytes.
void*& next_of(void* block) { return *static_cast<void**>(block); }

void release_all(Pool& p) {
  for (auto& [size, head] : p.free_lists)
    while (head) {
      void* block = head;
      head = next_of(block);
      ::operator delete(block, std::align_val_t{kAlign});
    }
}
}  // namespace

void* allocate(std::size_t bytes) {
  const std::size_t size = rounded(bytes);
  Pool& p = pool();
  {
    std::lock_guard lock(p.mutex);
    if (p.scopes > 0) {
      auto it = p.free_lists.find(size);
      if (it != p.free_lists.end() && it->second) {
        void* block = it->second;
        it->second = next_of(block);
        return block;
      }
    }
  }
  // Tensors get ordinary pages: memory asked for as 2 MB pages and then reused step after step made
  // training slower on the machines measured (huge pages), while it spared only first-use faults.
  return ::operator new(size, std::align_val_t{kAlign});
}

void advise_huge_pages(void* block, std::size_t bytes) {
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  if (bytes < 2 * kHuge) return;
  const auto begin = (reinterpret_cast<std::uintptr_t>(block) + kHuge - 1) / kHuge * kHuge;
  const auto end = (reinterpret_cast<std::uintptr_t>(block) + bytes) / kHuge * kHuge;
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

void release(void* block, std::size_t bytes) noexcept {
  if (!block) return;
  const std::size_t size = rounded(bytes);
  Pool& p = pool();
  {
    std::lock_guard lock(p.mutex);
    if (p.scopes > 0) {
      try {
        void*& head = p.free_lists[size];  // a new size allocates a map entry, once
        next_of(block) = head;
        head = block;
        return;
      } catch (...) {  // no room for the entry: give the block back instead
      }
    }
  }
  ::operator delete(block, std::align_val_t{kAlign});
}

Reuse::Reuse() {
  Pool& p = pool();
  std::lock_guard lock(p.mutex);
  ++p.scopes;
}

Reuse::~Reuse() {
  Pool& p = pool();
  std::lock_guard lock(p.mutex);
  if (--p.scopes == 0) release_all(p);
}

}  // namespace tinygpt::memory
