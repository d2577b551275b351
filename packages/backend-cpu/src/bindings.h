// Shared by the binding files of plait_backend_cpu._C: each kernel area binds its own functions
// in a `bind_<area>(module)` declared here and called from bindings.cpp.
#pragma once

#include <nanobind/nanobind.h>

#include <optional>

#include "kernels/strided.h"

namespace plait::cpu {

namespace nb = nanobind;

// Kernels on fewer elements than this keep the GIL: releasing it costs more than they run.
inline constexpr int64_t kReleaseGilAbove = int64_t{1} << 15;

// Releases the GIL for the lifetime of the object when the kernel is large.
class MaybeReleaseGil {
 public:
  explicit MaybeReleaseGil(const Dims& shape) {
    if (numel(shape) > kReleaseGilAbove) release_.emplace();
  }

 private:
  std::optional<nb::gil_scoped_release> release_;
};

struct Block;

// One block of the host allocator owned by a Python object (bind_fast.cpp): the block returns
// to the free list when the object dies. Tensor storages on the CPU hold these.
struct HostBlock {
  explicit HostBlock(size_t nbytes);
  ~HostBlock();
  HostBlock(const HostBlock&) = delete;
  HostBlock& operator=(const HostBlock&) = delete;

  Block* block;
  uintptr_t ptr;
  size_t nbytes;
};

// One per area (bind_<area>.cpp).
void bind_fast(nb::module_& m);
void bind_elementwise(nb::module_& m);
void bind_reduce(nb::module_& m);
void bind_scan(nb::module_& m);
void bind_index(nb::module_& m);
void bind_sort(nb::module_& m);
void bind_random(nb::module_& m);
void bind_linalg(nb::module_& m);
void bind_optim(nb::module_& m);
void bind_attention(nb::module_& m);
void bind_conv(nb::module_& m);
void bind_fused(nb::module_& m);
void bind_activation(nb::module_& m);
void bind_rnn(nb::module_& m);
void bind_loss(nb::module_& m);
void bind_ternary(nb::module_& m);
void bind_spectral(nb::module_& m);

}  // namespace plait::cpu
