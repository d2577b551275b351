// Bindings of the random kernels (kernels/random.cpp): random_bits_.
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "kernels/reduce.h"

using namespace nanobind::literals;

namespace plait::cpu {

void bind_random(nb::module_& m) {
  m.def(
      "random_bits",
      [](const Dims& shape, uintptr_t out, const Dims& out_strides, uint64_t seed,
         uint64_t offset) {
        MaybeReleaseGil nogil(shape);
        return random_bits(shape, out, out_strides, seed, offset);
      },
      "shape"_a, "out"_a, "out_strides"_a, "seed"_a, "offset"_a,
      "Philox4x32-10 words into a contiguous int64 tensor; seed and offset are unsigned 64-bit.");
}

}  // namespace plait::cpu
