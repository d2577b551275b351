// Bindings of the elementwise kernels (kernels/unary.cpp, binary.cpp, compare.cpp,
// elementwise.cpp): one function per row of the op tables, plus where, fill_, copy_, arange_.
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "kernels/kernels.h"

using namespace nanobind::literals;

namespace plait::cpu {
namespace {

template <BinaryOp Op>
bool binary_entry(int dtype, const Dims& shape, uintptr_t out, const Dims& out_strides,
                  uintptr_t a, const Dims& a_strides, uintptr_t b, const Dims& b_strides) {
  MaybeReleaseGil nogil(shape);
  return binary(Op, dtype, shape, out, out_strides, a, a_strides, b, b_strides);
}

template <CompareOp Op>
bool compare_entry(int dtype, const Dims& shape, uintptr_t out, const Dims& out_strides,
                   uintptr_t a, const Dims& a_strides, uintptr_t b, const Dims& b_strides) {
  MaybeReleaseGil nogil(shape);
  return compare(Op, dtype, shape, out, out_strides, a, a_strides, b, b_strides);
}

template <UnaryOp Op>
bool unary_entry(int out_dtype, int a_dtype, const Dims& shape, uintptr_t out,
                 const Dims& out_strides, uintptr_t a, const Dims& a_strides) {
  MaybeReleaseGil nogil(shape);
  return unary(Op, out_dtype, a_dtype, shape, out, out_strides, a, a_strides);
}

}  // namespace

void bind_elementwise(nb::module_& m) {
  // Kernels: each returns False when it leaves the case to the reference kernel.
  // BINARY_OPS, UNARY_OPS and COMPARE_OPS name the elementwise kernels, one function each.
  nb::list binary_names;
  nb::list unary_names;
  nb::list compare_names;
#define PLAIT_DEF_BINARY(NAME, PRIM)                                                         \
  m.def(PRIM, &binary_entry<BinaryOp::NAME>, "dtype"_a, "shape"_a, "out"_a, "out_strides"_a, \
        "a"_a, "a_strides"_a, "b"_a, "b_strides"_a);                                       \
  binary_names.append(PRIM);
  PLAIT_CPU_BINARY_OPS(PLAIT_DEF_BINARY)
#undef PLAIT_DEF_BINARY
#define PLAIT_DEF_COMPARE(NAME, PRIM)                                                          \
  m.def(PRIM, &compare_entry<CompareOp::NAME>, "dtype"_a, "shape"_a, "out"_a, "out_strides"_a, \
        "a"_a, "a_strides"_a, "b"_a, "b_strides"_a);                                         \
  compare_names.append(PRIM);
  PLAIT_CPU_COMPARE_OPS(PLAIT_DEF_COMPARE)
#undef PLAIT_DEF_COMPARE
#define PLAIT_DEF_UNARY(NAME, PRIM)                                                     \
  m.def(PRIM, &unary_entry<UnaryOp::NAME>, "out_dtype"_a, "a_dtype"_a, "shape"_a, "out"_a, \
        "out_strides"_a, "a"_a, "a_strides"_a);                                         \
  unary_names.append(PRIM);
  PLAIT_CPU_UNARY_OPS(PLAIT_DEF_UNARY)
#undef PLAIT_DEF_UNARY
  m.attr("BINARY_OPS") = nb::tuple(binary_names);
  m.attr("UNARY_OPS") = nb::tuple(unary_names);
  m.attr("COMPARE_OPS") = nb::tuple(compare_names);
  m.def(
      "where",
      [](int dtype, const Dims& shape, uintptr_t out, const Dims& out_strides, uintptr_t cond,
         const Dims& cond_strides, uintptr_t a, const Dims& a_strides, uintptr_t b,
         const Dims& b_strides) {
        MaybeReleaseGil nogil(shape);
        return where(dtype, shape, out, out_strides, cond, cond_strides, a, a_strides, b,
                     b_strides);
      },
      "dtype"_a, "shape"_a, "out"_a, "out_strides"_a, "cond"_a, "cond_strides"_a, "a"_a,
      "a_strides"_a, "b"_a, "b_strides"_a);
  m.def(
      "fill_int",
      [](int dtype, const Dims& shape, uintptr_t out, const Dims& out_strides, int64_t value) {
        MaybeReleaseGil nogil(shape);
        return fill_int(dtype, shape, out, out_strides, value);
      },
      "dtype"_a, "shape"_a, "out"_a, "out_strides"_a, "value"_a);
  m.def(
      "fill_float",
      [](int dtype, const Dims& shape, uintptr_t out, const Dims& out_strides, double value) {
        MaybeReleaseGil nogil(shape);
        return fill_float(dtype, shape, out, out_strides, value);
      },
      "dtype"_a, "shape"_a, "out"_a, "out_strides"_a, "value"_a);
  m.def(
      "copy",
      [](int out_dtype, int src_dtype, const Dims& shape, uintptr_t out,
         const Dims& out_strides, uintptr_t src, const Dims& src_strides) {
        MaybeReleaseGil nogil(shape);
        return copy(out_dtype, src_dtype, shape, out, out_strides, src, src_strides);
      },
      "out_dtype"_a, "src_dtype"_a, "shape"_a, "out"_a, "out_strides"_a, "src"_a,
      "src_strides"_a);
  m.def(
      "arange_int",
      [](int dtype, int64_t n, uintptr_t out, int64_t stride, int64_t start, int64_t step) {
        MaybeReleaseGil nogil(Dims{n});
        return arange_int(dtype, n, out, stride, start, step);
      },
      "dtype"_a, "n"_a, "out"_a, "stride"_a, "start"_a, "step"_a);
  m.def(
      "arange_float",
      [](int dtype, int64_t n, uintptr_t out, int64_t stride, double start, double step) {
        MaybeReleaseGil nogil(Dims{n});
        return arange_float(dtype, n, out, stride, start, step);
      },
      "dtype"_a, "n"_a, "out"_a, "stride"_a, "start"_a, "step"_a);
}

}  // namespace plait::cpu
