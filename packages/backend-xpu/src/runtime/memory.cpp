// The caching allocator: free lists of blocks by size class, per device.
#include "memory.h"

#include <atomic>
#include <iterator>
#include <map>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "devices.h"

namespace plait::xpu {
namespace {

using namespace cl;

constexpr size_t kSmallStep = 512;
constexpr size_t kSmallLimit = size_t{1} << 20;
constexpr uint64_t kAddressAlignment = 4096;

struct CachedBlock {
  cl_mem mem;
  uint64_t address;
};

struct Pool {
  std::mutex mutex;
  std::map<size_t, std::vector<CachedBlock>> free;  // size class -> unused blocks
  MemoryStats stats;
  uint64_t limit = 0;  // the most bytes to reserve (0: no limit)
};

// Pools are created on first use and live for the process (buffers may be freed at exit).
// The first kPoolSlots devices' pools are also kept in a table read without the lock (each
// small op allocates and frees a block: two lookups a call).
constexpr int kPoolSlots = 64;
std::atomic<Pool*> pool_slots[kPoolSlots];

Pool& pool(int device) {
  if (device >= 0 && device < kPoolSlots) {
    if (Pool* p = pool_slots[device].load(std::memory_order_acquire)) return *p;
  }
  static std::mutex mutex;
  static std::map<int, Pool*> pools;
  std::lock_guard<std::mutex> lock(mutex);
  Pool*& p = pools[device];
  if (!p) p = new Pool();
  if (device >= 0 && device < kPoolSlots) pool_slots[device].store(p, std::memory_order_release);
  return *p;
}

// Stand-in addresses start high so that no block's address is 0 (PyTorch's empty data_ptr).
std::atomic<uint64_t> next_address{uint64_t{1} << 32};

uint64_t reserve_address(size_t capacity) {
  const uint64_t span = (capacity + kAddressAlignment - 1) / kAddressAlignment * kAddressAlignment;
  return next_address.fetch_add(span == 0 ? kAddressAlignment : span);
}

// Every block OpenCL holds for us (in use or cached), by its stand-in address: the native
// launches of the fast path (fast.h) find an operand's buffer from the address core passes.
struct Registered {
  cl_mem mem;
  uint64_t capacity;
  int device;
};

std::mutex registry_mutex;
std::map<uint64_t, Registered> registry;

void register_block(uint64_t address, cl_mem mem, uint64_t capacity, int device) {
  std::lock_guard<std::mutex> lock(registry_mutex);
  registry[address] = {mem, capacity, device};
}

void unregister_block(uint64_t address) {
  std::lock_guard<std::mutex> lock(registry_mutex);
  registry.erase(address);
}

void release_cached(Pool& p) {  // with p.mutex held
  for (auto& [size, blocks] : p.free) {
    for (const CachedBlock& block : blocks) {
      unregister_block(block.address);
      api().clReleaseMemObject(block.mem);
      p.stats.reserved -= size;
      p.stats.cached_blocks -= 1;
      p.stats.device_frees += 1;
    }
  }
  p.free.clear();
}

bool is_out_of_memory(cl_int err) {
  return err == kMemObjectAllocationFailure || err == kOutOfResources || err == kOutOfHostMemory;
}

std::string oom_message(size_t nbytes, int index, const Device& d, const MemoryStats& s,
                        const std::string& why) {
  return "xpu:" + std::to_string(index) + " out of memory: tried to allocate " +
         std::to_string(nbytes) + " bytes on " + d.info.name + " (" + why + "; " +
         std::to_string(s.allocated) + " bytes allocated, " + std::to_string(s.reserved) +
         " reserved by Plait, " + std::to_string(d.info.global_memory) + " on the device)";
}

}  // namespace

size_t size_class(size_t nbytes) {
  if (nbytes == 0) return 0;
  if (nbytes <= kSmallLimit) return (nbytes + kSmallStep - 1) / kSmallStep * kSmallStep;
  size_t power = kSmallLimit;
  while (power <= nbytes / 2) power *= 2;  // the largest power of two <= nbytes
  const size_t step = power / 4;
  return (nbytes + step - 1) / step * step;
}

Buffer::Buffer(size_t nbytes, int index) : nbytes_(nbytes), device_(index) {
  if (nbytes == 0) return;  // no block: a zero-size buffer is invalid in OpenCL
  // xpu::device checks the index and opens the device. An index with a pool is in range, and
  // a cached block's device is open: a cache hit skips the device table's lock, a miss opens.
  Device* opened = nullptr;
  if (index < 0 || index >= kPoolSlots || !pool_slots[index].load(std::memory_order_acquire)) {
    opened = &xpu::device(index);
  }
  capacity_ = size_class(nbytes);
  Pool& p = pool(index);
  std::lock_guard<std::mutex> lock(p.mutex);
  auto found = p.free.find(capacity_);
  if (found != p.free.end() && !found->second.empty()) {
    mem_ = found->second.back().mem;
    address_ = found->second.back().address;
    found->second.pop_back();
    p.stats.cached_blocks -= 1;
  } else {
    Device& d = opened ? *opened : xpu::device(index);
    if (d.info.max_allocation && capacity_ > d.info.max_allocation) {
      p.stats.ooms += 1;
      throw OutOfMemory(oom_message(nbytes, index, d, p.stats,
                                    "the device allows at most " +
                                        std::to_string(d.info.max_allocation) +
                                        " bytes in one buffer"));
    }
    if (p.limit && p.stats.reserved + capacity_ > p.limit) {
      if (!p.free.empty()) {  // the cache may hold what is missing
        p.stats.alloc_retries += 1;
        release_cached(p);
      }
      if (p.stats.reserved + capacity_ > p.limit) {
        p.stats.ooms += 1;
        throw OutOfMemory(oom_message(nbytes, index, d, p.stats,
                                      "the process's memory fraction allows " +
                                          std::to_string(p.limit) + " bytes"));
      }
    }
    cl_int err = kSuccess;
    mem_ = api().clCreateBuffer(d.context, kMemReadWrite, capacity_, nullptr, &err);
    if (is_out_of_memory(err) && !p.free.empty()) {
      // What the cache holds may be what is missing: give it back and try once more.
      p.stats.alloc_retries += 1;
      release_cached(p);
      mem_ = api().clCreateBuffer(d.context, kMemReadWrite, capacity_, nullptr, &err);
    }
    if (err != kSuccess) {
      if (!is_out_of_memory(err)) throw Error("clCreateBuffer", err);
      p.stats.ooms += 1;
      throw OutOfMemory(oom_message(nbytes, index, d, p.stats, error_name(err)));
    }
    address_ = reserve_address(capacity_);
    register_block(address_, mem_, capacity_, index);
    p.stats.device_allocations += 1;
    p.stats.reserved += capacity_;
    if (p.stats.reserved > p.stats.reserved_peak) p.stats.reserved_peak = p.stats.reserved;
  }
  p.stats.allocated += capacity_;
  p.stats.requested += nbytes;
  p.stats.active_blocks += 1;
  if (p.stats.allocated > p.stats.allocated_peak) p.stats.allocated_peak = p.stats.allocated;
}

Buffer::~Buffer() {
  if (!mem_) return;
  Pool& p = pool(device_);
  std::lock_guard<std::mutex> lock(p.mutex);
  p.free[capacity_].push_back({mem_, address_});
  p.stats.allocated -= capacity_;
  p.stats.requested -= nbytes_;
  p.stats.active_blocks -= 1;
  p.stats.cached_blocks += 1;
}

bool locate(uint64_t address, Location* where) {
  std::lock_guard<std::mutex> lock(registry_mutex);
  auto after = registry.upper_bound(address);
  if (after == registry.begin()) return false;
  const auto& [start, block] = *std::prev(after);
  if (address - start >= block.capacity) return false;
  *where = {block.mem, block.device, address - start};
  return true;
}

MemoryStats memory_stats(int index) {
  Pool& p = pool(index);
  std::lock_guard<std::mutex> lock(p.mutex);
  return p.stats;
}

void reset_peak_memory_stats(int index) {
  Pool& p = pool(index);
  std::lock_guard<std::mutex> lock(p.mutex);
  p.stats.allocated_peak = p.stats.allocated;
  p.stats.reserved_peak = p.stats.reserved;
}

void reset_accumulated_memory_stats(int index) {
  Pool& p = pool(index);
  std::lock_guard<std::mutex> lock(p.mutex);
  p.stats.device_allocations = 0;
  p.stats.device_frees = 0;
  p.stats.alloc_retries = 0;
  p.stats.ooms = 0;
}

void set_memory_limit(int index, uint64_t bytes) {
  Pool& p = pool(index);
  std::lock_guard<std::mutex> lock(p.mutex);
  p.limit = bytes;
}

std::vector<BlockInfo> memory_blocks(int index) {
  Pool& p = pool(index);
  std::lock_guard<std::mutex> pool_lock(p.mutex);  // (the order Buffer's constructor takes)
  std::vector<BlockInfo> blocks;
  {
    std::lock_guard<std::mutex> lock(registry_mutex);
    for (const auto& [address, block] : registry) {
      if (block.device == index) blocks.push_back({address, block.capacity, true});
    }
  }
  std::map<uint64_t, bool> cached;
  for (const auto& [size, list] : p.free) {
    for (const CachedBlock& block : list) cached[block.address] = true;
  }
  for (BlockInfo& b : blocks) b.active = cached.count(b.address) == 0;
  return blocks;
}

void empty_cache(int index) {
  const int first = index < 0 ? 0 : index;
  const int last = index < 0 ? selected_count() - 1 : index;
  for (int i = first; i <= last; ++i) {
    Pool& p = pool(i);
    std::lock_guard<std::mutex> lock(p.mutex);
    release_cached(p);
  }
}

namespace {
void check_range(const char* what, const Buffer& b, size_t offset, size_t nbytes) {
  if (offset > b.nbytes() || nbytes > b.nbytes() - offset) {
    throw std::out_of_range(std::string("xpu copy ") + what + " [" + std::to_string(offset) +
                            ", " + std::to_string(offset + nbytes) + ") is outside the block of " +
                            std::to_string(b.nbytes()) + " bytes");
  }
}
}  // namespace

void write(const Buffer& dst, size_t offset, const void* src, size_t nbytes, bool blocking,
           cl_event* done) {
  check_range("destination", dst, offset, nbytes);
  if (done) *done = nullptr;
  if (nbytes == 0) return;
  Device& d = device(dst.device());
  if (blocking) release_held(d);  // a blocking write waits for the kernels queued before it
  check(api().clEnqueueWriteBuffer(d.queue, dst.mem(), blocking ? kTrue : kFalse, offset, nbytes,
                                   src, 0, nullptr, blocking ? nullptr : done),
        "clEnqueueWriteBuffer");
  if (!blocking) api().clFlush(d.queue);  // start it now rather than at the next wait
}

void read(const Buffer& src, size_t offset, void* dst, size_t nbytes) {
  check_range("source", src, offset, nbytes);
  if (nbytes == 0) return;
  Device& d = device(src.device());
  release_held(d);  // the read waits for the kernels queued before it
  check(api().clEnqueueReadBuffer(d.queue, src.mem(), kTrue, offset, nbytes, dst, 0, nullptr,
                                  nullptr),
        "clEnqueueReadBuffer");
}

void copy(const Buffer& dst, size_t dst_offset, const Buffer& src, size_t src_offset,
          size_t nbytes) {
  check_range("destination", dst, dst_offset, nbytes);
  check_range("source", src, src_offset, nbytes);
  if (nbytes == 0) return;
  if (dst.device() == src.device()) {
    Device& d = device(dst.device());
    check(api().clEnqueueCopyBuffer(d.queue, src.mem(), dst.mem(), src_offset, dst_offset,
                                    nbytes, 0, nullptr, nullptr),
          "clEnqueueCopyBuffer");
    return;
  }
  // Buffers of two contexts: OpenCL 1.2 has no direct copy, so through the host.
  std::vector<unsigned char> staging(nbytes);
  read(src, src_offset, staging.data(), nbytes);
  write(dst, dst_offset, staging.data(), nbytes, true, nullptr);
}

}  // namespace plait::xpu
