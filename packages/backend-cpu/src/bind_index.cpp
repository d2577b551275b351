// Bindings of the indexing kernels (kernels/index.cpp): gather, scatter, nonzero.
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "kernels/reduce.h"

using namespace nanobind::literals;

namespace plait::cpu {

void bind_index(nb::module_& m) {
  m.def(
      "gather",
      [](int dtype, const Dims& index_shape, uintptr_t out, const Dims& out_strides,
         const Dims& a_shape, uintptr_t a, const Dims& a_strides, int dim, uintptr_t index,
         const Dims& index_strides) {
        MaybeReleaseGil nogil(index_shape);
        return gather(dtype, index_shape, out, out_strides, a_shape, a, a_strides, dim, index,
                      index_strides);
      },
      "dtype"_a, "index_shape"_a, "out"_a, "out_strides"_a, "a_shape"_a, "a"_a,
      "a_strides"_a, "dim"_a, "index"_a, "index_strides"_a);
  m.def(
      "scatter",
      [](int dtype, const Dims& out_shape, uintptr_t out, const Dims& out_strides, int dim,
         const Dims& index_shape, uintptr_t index, const Dims& index_strides, uintptr_t src,
         const Dims& src_strides, int reduce, bool include_self) {
        MaybeReleaseGil nogil(index_shape);
        return scatter(dtype, out_shape, out, out_strides, dim, index_shape, index,
                       index_strides, src, src_strides, reduce, include_self);
      },
      "dtype"_a, "out_shape"_a, "out"_a, "out_strides"_a, "dim"_a, "index_shape"_a,
      "index"_a, "index_strides"_a, "src"_a, "src_strides"_a, "reduce"_a, "include_self"_a,
      "reduce: 0 none, 1 sum, 2 prod, 3 amax, 4 amin, 5 mean.");
  m.def(
      "count_nonzero",
      [](int dtype, const Dims& shape, uintptr_t a, const Dims& a_strides) {
        MaybeReleaseGil nogil(shape);
        return count_nonzero(dtype, shape, a, a_strides);
      },
      "dtype"_a, "shape"_a, "a"_a, "a_strides"_a, "-1 when the dtype is left to the reference.");
  m.def(
      "nonzero",
      [](int dtype, const Dims& shape, uintptr_t a, const Dims& a_strides, int64_t count,
         uintptr_t out, int64_t row_stride, int64_t col_stride) {
        MaybeReleaseGil nogil(shape);
        return nonzero(dtype, shape, a, a_strides, count, out, row_stride, col_stride);
      },
      "dtype"_a, "shape"_a, "a"_a, "a_strides"_a, "count"_a, "out"_a, "row_stride"_a,
      "col_stride"_a);
}

}  // namespace plait::cpu
