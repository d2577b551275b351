// Prepared kernel launches: the native half of the eager fast path (plait_backend_xpu/fast.py).
//
// Python renders and builds a kernel once per call signature and describes its arguments as
// slots; a repeated call is then one native call: find each operand's buffer from the address
// core passes (memory.h's locate), allocate the output from the caching allocator, set the
// arguments and enqueue. No Python objects are touched here (bindings.cpp wraps the result).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "memory.h"
#include "programs.h"

namespace plait::xpu {

// One kernel argument of a prepared launch.
struct Slot {
  enum Kind : uint8_t {
    kBuffer,  // operand `operand`'s cl_mem (0: the output, 1...: the inputs)
    kOffset,  // operand `operand`'s offset in elements of `size` bytes, as a 64-bit int
    kCount,   // the call's element count, as a 64-bit int
    kScalar,  // the call's scalar, as a float (`size` 4) or a double (8)
    kFixed,   // `value`'s low `size` bytes, the same on every call
  };
  Kind kind;
  uint8_t operand;
  uint32_t size;
  uint64_t value;
};

class Launch {
 public:
  // `global` empty: one work item per `per_item` elements of the call's count, rounded up to
  // whole work-groups of `local[0]` (one dimension); otherwise these sizes on every call.
  Launch(std::shared_ptr<Kernel> kernel, std::vector<Slot> slots, unsigned inputs,
         std::vector<size_t> global, std::vector<size_t> local, size_t per_item);

  unsigned inputs() const noexcept { return inputs_; }
  int device() const noexcept { return kernel_->program()->device(); }

  // Runs the kernel on the located inputs into a new buffer of `out_nbytes`, returned (the
  // caller owns it); nullptr when an input is on another device.
  std::unique_ptr<Buffer> run(const Location* inputs, size_t numel, size_t out_nbytes,
                              double scalar) const;

  // Runs the kernel on the located inputs into the existing memory at `out` (an in-place op:
  // `out` may be one of the inputs); false, having enqueued nothing, when an operand is on
  // another device.
  bool run_into(const Location& out, const Location* inputs, size_t numel, double scalar) const;

 private:
  // Sets the arguments (operand 0 is `out`) and enqueues over `numel` elements.
  void enqueue(const Location& out, const Location* inputs, size_t numel, double scalar) const;

  std::shared_ptr<Kernel> kernel_;
  std::vector<Slot> slots_;
  unsigned inputs_;
  std::vector<size_t> global_;
  std::vector<size_t> local_;
  size_t per_item_;
};

}  // namespace plait::xpu
