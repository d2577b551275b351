// OpenCL programs (built from OpenCL C source, or loaded from a cached device binary) and
// kernel launches. The caches (in memory and on disk) are the Python layer's: programs.py.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cl_api.h"

namespace plait::xpu {

struct Device;

class Program {
 public:
  // Builds `source` with `options` for device `index`. When `binary` is not empty it is tried
  // first (a binary the driver rejects is ignored: the source is built instead). A failed build
  // throws std::runtime_error whose message holds the build log.
  Program(int index, const std::string& source, const std::string& options,
          const std::string& binary);
  ~Program();
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  // The device binary (clGetProgramInfo's CL_PROGRAM_BINARIES), for the disk cache.
  std::string binary() const;
  bool from_binary() const noexcept { return from_binary_; }
  int device() const noexcept { return device_; }
  cl::cl_program handle() const noexcept { return program_; }

 private:
  cl::cl_program program_ = nullptr;
  int device_ = 0;
  bool from_binary_ = false;
};

class Kernel {
 public:
  Kernel(std::shared_ptr<Program> program, const std::string& name);
  ~Kernel();
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;

  // Packs arguments: `groups[g]` is the count of consecutive 8-byte arguments, starting at
  // logical index `starts[g]`, that the kernel takes as one vector argument (a `long4` or
  // `long8`: the count rounded up to a power of two, at least 2). Logical indices (what
  // set_arg takes) count each packed value; the kernel's own indices count a group once.
  // PoCL copies every argument into its own allocation at each enqueue (~0.1 us of the calling
  // thread and more of its workers' per argument on this machine's CPU device): a small
  // elementwise kernel's count and offsets as one vector halve its argument count.
  void set_packing(const std::vector<unsigned>& starts, const std::vector<unsigned>& counts);
  // Sets argument `index`; skips the driver call when the argument already holds these bytes
  // (OpenCL keeps a kernel's arguments between launches, and a repeated small op sets the same
  // buffers, offsets and counts again; PoCL takes a lock per clSetKernelArg: seven of them cost
  // ~0.16 us of thread CPU time uncontended, a few percent of a small op's host time).
  // Launches are not thread-safe: setting the arguments and enqueueing is one sequence, which
  // bindings.cpp runs with the GIL held.
  void set_arg(unsigned index, size_t size, const void* value);
  // Enqueues the kernel over `global` work items (1 to 3 dimensions), in work-groups of `local`
  // (empty: the driver chooses). Returns without waiting.
  void enqueue(const std::vector<size_t>& global, const std::vector<size_t>& local);
  // The same, sizes as arrays of `dims` (no allocation: the fast path's launches).
  void enqueue(unsigned dims, const size_t* global, const size_t* local);
  const std::string& name() const noexcept { return name_; }
  const std::shared_ptr<Program>& program() const noexcept { return program_; }

 private:
  std::shared_ptr<Program> program_;
  std::string name_;
  cl::cl_kernel kernel_ = nullptr;
  // The program's device, found at the first enqueue (devices live for the process): each
  // launch then skips the device table's lock.
  Device* device_ = nullptr;
  // The bytes each argument was last set to, for arguments of at most kRemembered bytes set by
  // value; `known` false: unknown (never set, a local-memory size, a larger value).
  static constexpr size_t kRemembered = 8;
  struct Remembered {
    bool known = false;
    uint8_t size = 0;
    unsigned char bytes[kRemembered] = {};
  };
  std::vector<Remembered> args_;
  // set_packing's layout: each logical index's kernel argument and, for a packed value, its
  // group (-1: set directly) and byte offset in the group's bytes.
  struct Place {
    unsigned arg;
    int group;
    unsigned offset;
  };
  struct Packed {
    unsigned arg;
    unsigned size;  // bytes: 8 x (the count rounded up to a power of two)
    bool dirty = true;
    unsigned char bytes[64] = {};
  };
  std::vector<Place> places_;  // empty: no packing (logical index = kernel index)
  std::vector<Packed> packed_;
  // Hands the groups' changed bytes to the driver (before an enqueue).
  void flush_packed();
  // clSetKernelArg of the kernel's own argument `index`, skipped when it holds these bytes.
  void set_kernel_arg(unsigned index, size_t size, const void* value);
};

}  // namespace plait::xpu
