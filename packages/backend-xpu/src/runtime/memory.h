// Device memory: OpenCL buffers from a caching allocator, and copies to, from and between them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <vector>

#include "cl_api.h"

namespace plait::xpu {

// Raised when a device allocation fails even after the cache was emptied (Python MemoryError).
class OutOfMemory : public std::bad_alloc {
 public:
  explicit OutOfMemory(std::string message) : message_(std::move(message)) {}
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};

// One block of device memory, handed to core as a storage's handle. Destroying it returns the
// block to its device's cache (the in-order queue runs any kernel still using it first).
class Buffer {
 public:
  Buffer(size_t nbytes, int device);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  cl::cl_mem mem() const noexcept { return mem_; }
  size_t nbytes() const noexcept { return nbytes_; }      // what was asked for
  size_t capacity() const noexcept { return capacity_; }  // the size class it came from
  int device() const noexcept { return device_; }
  // A stand-in address, unique to the block for the life of the process (OpenCL 1.2 buffers
  // have none): data_ptr() arithmetic and overlap checks in core work on it. 0 when empty.
  uint64_t address() const noexcept { return address_; }

 private:
  cl::cl_mem mem_ = nullptr;
  size_t nbytes_ = 0;
  size_t capacity_ = 0;
  int device_ = 0;
  uint64_t address_ = 0;
};

// Where a stand-in address lies: its block's OpenCL buffer, device, and the byte offset in it.
struct Location {
  cl::cl_mem mem;
  int device;
  uint64_t offset;
};

// Finds the block holding `address` (a block's address plus a byte offset inside its size
// class); false when no block holds it (0, the address of an empty buffer, included).
bool locate(uint64_t address, Location* where);

// The size class of a request: 512-byte steps below 1 MiB, then four classes per power of two
// (at most 25% of a block unused), so freed blocks fit later requests of similar sizes.
size_t size_class(size_t nbytes);

// PyTorch's memory statistics, in bytes and counts, for one device.
struct MemoryStats {
  uint64_t allocated = 0;       // size classes of live buffers
  uint64_t allocated_peak = 0;
  uint64_t requested = 0;       // bytes asked for by live buffers
  uint64_t reserved = 0;        // allocated + cached blocks
  uint64_t reserved_peak = 0;
  uint64_t active_blocks = 0;
  uint64_t cached_blocks = 0;
  uint64_t device_allocations = 0;  // clCreateBuffer calls
  uint64_t device_frees = 0;        // clReleaseMemObject calls
  uint64_t alloc_retries = 0;       // allocations that emptied the cache and tried again
  uint64_t ooms = 0;
};

MemoryStats memory_stats(int device);
void reset_peak_memory_stats(int device);
// Zeroes the counters that only grow (device allocations and frees, retries, out-of-memory
// errors); the current and peak values stay.
void reset_accumulated_memory_stats(int device);
// The most bytes the allocator may reserve on `device` (0: no limit, the default): a request
// past it empties the cache and, still past it, is an OutOfMemory (torch.xpu's per-process
// memory fraction).
void set_memory_limit(int device, uint64_t bytes);

// One block the allocator holds from OpenCL: its stand-in address, size class, and whether a
// buffer uses it (else it waits in the cache).
struct BlockInfo {
  uint64_t address;
  uint64_t size;
  bool active;
};
// Every block of `device`, in address order.
std::vector<BlockInfo> memory_blocks(int device);
// Releases the cached (unused) blocks of `device` (-1: every device) to OpenCL.
void empty_cache(int device);

// Host -> device. Blocking waits for the copy; otherwise `*done` receives its event (the caller
// keeps `src` alive until the event completes and releases the event).
void write(const Buffer& dst, size_t offset, const void* src, size_t nbytes, bool blocking,
           cl::cl_event* done);
// Device -> host, blocking (queued work runs first).
void read(const Buffer& src, size_t offset, void* dst, size_t nbytes);
// Device -> device: one enqueued copy on one device, through the host between two devices.
void copy(const Buffer& dst, size_t dst_offset, const Buffer& src, size_t src_offset,
          size_t nbytes);

}  // namespace plait::xpu
