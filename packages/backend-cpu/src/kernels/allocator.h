// The host allocator: 64-byte aligned blocks behind a size-class free list.
//
// Sizes are rounded up to a class (multiples of 64 up to 256 bytes, then four classes per
// power of two, so at most 25% is wasted). A released block goes back to its class's free
// list while the cached bytes stay under a limit, and to the system otherwise. Every method
// is thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace plait::cpu {

inline constexpr size_t kAlignment = 64;

struct Block {
  void* data;
  size_t size;  // the size class, not the requested size
};

struct AllocatorStats {
  size_t allocated_bytes = 0;  // in blocks handed out and not yet released
  size_t peak_bytes = 0;       // the largest allocated_bytes since the last reset
  size_t cached_bytes = 0;     // in free lists
  size_t cache_limit = 0;
  uint64_t hits = 0;    // allocations served from a free list
  uint64_t misses = 0;  // allocations that went to the system
};

// The size class of a request of `nbytes` (0 is served as 64).
size_t size_class(size_t nbytes);

class HostAllocator {
 public:
  explicit HostAllocator(size_t cache_limit) : cache_limit_(cache_limit) {}
  HostAllocator(const HostAllocator&) = delete;
  HostAllocator& operator=(const HostAllocator&) = delete;

  // Throws std::bad_alloc when the system has no memory left even after the cache is freed.
  Block* allocate(size_t nbytes);
  void release(Block* block) noexcept;
  void empty_cache() noexcept;
  void set_cache_limit(size_t bytes) noexcept;
  void reset_peak() noexcept;
  AllocatorStats stats() const;

 private:
  void trim_locked(size_t limit) noexcept;

  mutable std::mutex mutex_;
  std::unordered_map<size_t, std::vector<Block*>> free_;
  AllocatorStats stats_;
  size_t cache_limit_;
};

// The process-wide allocator. It is never destroyed: numpy arrays that own blocks may be
// collected after static destructors have run at interpreter exit.
HostAllocator& host_allocator();

}  // namespace plait::cpu
