// Bindings of the elementwise kernels (kernels/elementwise.cpp): binary and unary arithmetic,
// fill_ and copy_.
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

template <UnaryOp Op>
bool unary_entry(int dtype, const Dims& shape, uintptr_t out, const Dims& out_strides,
                 uintptr_t a, const Dims& a_strides) {
  MaybeReleaseGil nogil(shape);
  return unary(Op, dtype, shape, out, out_strides, a, a_strides);
}

}  // namespace

void bind_elementwise(nb::module_& m) {
  // Kernels: each returns False when it leaves the case to the reference kernel.
  // BINARY_OPS and UNARY_OPS name the elementwise kernels, one function each.
  nb::list binary_names;
  nb::list unary_names;
#define PLAIT_DEF_BINARY(NAME, PRIM)                                                      \
  m.def(PRIM, &binary_entry<BinaryOp::NAME>, "dtype"_a, "shape"_a, "out"_a, "out_strides"_a, \
        "a"_a, "a_strides"_a, "b"_a, "b_strides"_a);                                       \
  binary_names.append(PRIM);
  PLAIT_CPU_BINARY_OPS(PLAIT_DEF_BINARY)
#undef PLAIT_DEF_BINARY
#define PLAIT_DEF_UNARY(NAME, PRIM)                                                     \
  m.def(PRIM, &unary_entry<UnaryOp::NAME>, "dtype"_a, "shape"_a, "out"_a, "out_strides"_a, \
        "a"_a, "a_strides"_a);                                                           \
  unary_names.append(PRIM);
  PLAIT_CPU_UNARY_OPS(PLAIT_DEF_UNARY)
#undef PLAIT_DEF_UNARY
  m.attr("BINARY_OPS") = nb::tuple(binary_names);
  m.attr("UNARY_OPS") = nb::tuple(unary_names);
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
}

}  // namespace plait::cpu
