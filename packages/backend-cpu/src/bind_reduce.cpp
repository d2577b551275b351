// Bindings of the reduction kernels (kernels/reduce.cpp): one function per row of
// PLAIT_CPU_REDUCE_OPS, plus argmax and argmin.
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "kernels/reduce.h"

using namespace nanobind::literals;

namespace plait::cpu {

void bind_reduce(nb::module_& m) {
  nb::list names;
#define PLAIT_BIND_REDUCE(NAME, PRIM)                                                        \
  m.def(                                                                                     \
      PRIM,                                                                                  \
      [](int out_dtype, int a_dtype, const Dims& shape, uintptr_t out,                       \
         const Dims& out_strides, uintptr_t a, const Dims& a_strides, uint64_t reduce_mask) { \
        MaybeReleaseGil nogil(shape);                                                        \
        return reduce(ReduceOp::NAME, out_dtype, a_dtype, shape, out, out_strides, a,        \
                      a_strides, reduce_mask);                                               \
      },                                                                                     \
      "out_dtype"_a, "a_dtype"_a, "shape"_a, "out"_a, "out_strides"_a, "a"_a, "a_strides"_a, \
      "reduce_mask"_a);                                                                      \
  names.append(PRIM);
  PLAIT_CPU_REDUCE_OPS(PLAIT_BIND_REDUCE)
#undef PLAIT_BIND_REDUCE
  m.attr("REDUCE_OPS") = nb::tuple(names);

  for (const bool is_max : {true, false}) {
    m.def(
        is_max ? "argmax" : "argmin",
        [is_max](int a_dtype, const Dims& shape, uintptr_t out, const Dims& out_strides,
                 uintptr_t a, const Dims& a_strides, int dim) {
          MaybeReleaseGil nogil(shape);
          return arg_reduce(is_max, a_dtype, shape, out, out_strides, a, a_strides, dim);
        },
        "a_dtype"_a, "shape"_a, "out"_a, "out_strides"_a, "a"_a, "a_strides"_a, "dim"_a);
  }
}

}  // namespace plait::cpu
