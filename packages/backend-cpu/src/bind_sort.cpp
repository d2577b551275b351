// Bindings of the sort kernels (kernels/sort.cpp): sort, topk, searchsorted.
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "kernels/reduce.h"

using namespace nanobind::literals;

namespace plait::cpu {

void bind_sort(nb::module_& m) {
  m.def(
      "sort",
      [](int dtype, const Dims& shape, uintptr_t values, const Dims& values_strides,
         uintptr_t indices, const Dims& indices_strides, uintptr_t a, const Dims& a_strides,
         int dim, bool descending) {
        MaybeReleaseGil nogil(shape);
        return sort(dtype, shape, values, values_strides, indices, indices_strides, a,
                    a_strides, dim, descending);
      },
      "dtype"_a, "shape"_a, "values"_a, "values_strides"_a, "indices"_a, "indices_strides"_a,
      "a"_a, "a_strides"_a, "dim"_a, "descending"_a);
  m.def(
      "topk",
      [](int dtype, const Dims& shape, uintptr_t values, const Dims& values_strides,
         uintptr_t indices, const Dims& indices_strides, uintptr_t a, const Dims& a_strides,
         int64_t k, int dim, bool largest) {
        MaybeReleaseGil nogil(shape);
        return topk(dtype, shape, values, values_strides, indices, indices_strides, a,
                    a_strides, k, dim, largest);
      },
      "dtype"_a, "shape"_a, "values"_a, "values_strides"_a, "indices"_a, "indices_strides"_a,
      "a"_a, "a_strides"_a, "k"_a, "dim"_a, "largest"_a);
  m.def(
      "searchsorted",
      [](int dtype, const Dims& seq_shape, uintptr_t seq, const Dims& seq_strides,
         const Dims& values_shape, uintptr_t values, const Dims& values_strides, uintptr_t out,
         const Dims& out_strides, bool right) {
        MaybeReleaseGil nogil(values_shape);
        return searchsorted(dtype, seq_shape, seq, seq_strides, values_shape, values,
                            values_strides, out, out_strides, right);
      },
      "dtype"_a, "seq_shape"_a, "seq"_a, "seq_strides"_a, "values_shape"_a, "values"_a,
      "values_strides"_a, "out"_a, "out_strides"_a, "right"_a);
}

}  // namespace plait::cpu
