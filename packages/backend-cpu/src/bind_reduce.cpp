// Bindings of the reduction kernels (kernels/reduce.cpp).
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "kernels/kernels.h"

using namespace nanobind::literals;

namespace plait::cpu {

void bind_reduce(nb::module_& m) {
  m.def(
      "sum",
      [](int out_dtype, int a_dtype, const Dims& shape, uintptr_t out, const Dims& out_strides,
         uintptr_t a, const Dims& a_strides, uint64_t reduce_mask) {
        MaybeReleaseGil nogil(shape);
        return sum(out_dtype, a_dtype, shape, out, out_strides, a, a_strides, reduce_mask);
      },
      "out_dtype"_a, "a_dtype"_a, "shape"_a, "out"_a, "out_strides"_a, "a"_a, "a_strides"_a,
      "reduce_mask"_a);

}

}  // namespace plait::cpu
