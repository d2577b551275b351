// Bindings of the scan kernels (kernels/scan.cpp): cumsum, cumprod, cummax, cummin.
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "kernels/reduce.h"

using namespace nanobind::literals;

namespace plait::cpu {

void bind_scan(nb::module_& m) {
  for (const bool is_prod : {false, true}) {
    m.def(
        is_prod ? "cumprod" : "cumsum",
        [is_prod](int dtype, const Dims& shape, uintptr_t out, const Dims& out_strides,
                  uintptr_t a, const Dims& a_strides, int dim) {
          MaybeReleaseGil nogil(shape);
          return scan(is_prod, dtype, shape, out, out_strides, a, a_strides, dim);
        },
        "dtype"_a, "shape"_a, "out"_a, "out_strides"_a, "a"_a, "a_strides"_a, "dim"_a);
  }
  for (const bool is_max : {true, false}) {
    m.def(
        is_max ? "cummax" : "cummin",
        [is_max](int dtype, const Dims& shape, uintptr_t values, const Dims& values_strides,
                 uintptr_t indices, const Dims& indices_strides, uintptr_t a,
                 const Dims& a_strides, int dim) {
          MaybeReleaseGil nogil(shape);
          return cum_extreme(is_max, dtype, shape, values, values_strides, indices,
                             indices_strides, a, a_strides, dim);
        },
        "dtype"_a, "shape"_a, "values"_a, "values_strides"_a, "indices"_a,
        "indices_strides"_a, "a"_a, "a_strides"_a, "dim"_a);
  }
}

}  // namespace plait::cpu
