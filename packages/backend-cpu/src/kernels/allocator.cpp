#include "allocator.h"

#include <cstdlib>
#include <new>

namespace plait::cpu {

namespace {
constexpr size_t kDefaultCacheLimit = size_t{256} << 20;  // 256 MiB
constexpr size_t kLargestRequest = size_t{1} << 62;       // keeps the rounding from overflowing
}  // namespace

size_t size_class(size_t nbytes) {
  if (nbytes > kLargestRequest) throw std::bad_alloc();
  if (nbytes <= 256) return nbytes <= 64 ? 64 : (nbytes + 63) / 64 * 64;
  // 2^k < nbytes <= 2^(k+1): round up to a multiple of 2^(k-2), which is >= 64 as k >= 8.
  const int k = 63 - __builtin_clzll(static_cast<unsigned long long>(nbytes - 1));
  const size_t step = size_t{1} << (k - 2);
  return (nbytes + step - 1) / step * step;
}

Block* HostAllocator::allocate(size_t nbytes) {
  const size_t size = size_class(nbytes);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = free_.find(size);
    if (it != free_.end() && !it->second.empty()) {
      Block* block = it->second.back();
      it->second.pop_back();
      stats_.cached_bytes -= size;
      stats_.allocated_bytes += size;
      if (stats_.allocated_bytes > stats_.peak_bytes) stats_.peak_bytes = stats_.allocated_bytes;
      ++stats_.hits;
      return block;
    }
  }
  void* data = std::aligned_alloc(kAlignment, size);
  if (data == nullptr) {
    empty_cache();  // cached blocks of other classes may be what the system is missing
    data = std::aligned_alloc(kAlignment, size);
    if (data == nullptr) throw std::bad_alloc();
  }
  Block* block = new (std::nothrow) Block{data, size};
  if (block == nullptr) {
    std::free(data);
    throw std::bad_alloc();
  }
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.allocated_bytes += size;
  if (stats_.allocated_bytes > stats_.peak_bytes) stats_.peak_bytes = stats_.allocated_bytes;
  ++stats_.misses;
  return block;
}

void HostAllocator::release(Block* block) noexcept {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.allocated_bytes -= block->size;
    if (stats_.cached_bytes + block->size <= cache_limit_) {
      try {
        free_[block->size].push_back(block);
        stats_.cached_bytes += block->size;
        return;
      } catch (const std::bad_alloc&) {
        // No room to remember the block: give it back to the system below.
      }
    }
  }
  std::free(block->data);
  delete block;
}

// Frees cached blocks until at most `limit` bytes stay cached; the caller holds the mutex.
void HostAllocator::trim_locked(size_t limit) noexcept {
  for (auto& [size, blocks] : free_) {
    while (stats_.cached_bytes > limit && !blocks.empty()) {
      Block* block = blocks.back();
      blocks.pop_back();
      stats_.cached_bytes -= size;
      std::free(block->data);
      delete block;
    }
  }
}

void HostAllocator::empty_cache() noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  trim_locked(0);
}

void HostAllocator::set_cache_limit(size_t bytes) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  cache_limit_ = bytes;
  trim_locked(bytes);
}

void HostAllocator::reset_peak() noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.peak_bytes = stats_.allocated_bytes;
}

AllocatorStats HostAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  AllocatorStats out = stats_;
  out.cache_limit = cache_limit_;
  return out;
}

HostAllocator& host_allocator() {
  static HostAllocator* allocator = new HostAllocator(kDefaultCacheLimit);
  return *allocator;
}

}  // namespace plait::cpu
