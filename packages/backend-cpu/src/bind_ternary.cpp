// Bindings of the fused ternary kernels (kernels/ternary.cpp). Each input is an address and a
// step (1: n contiguous elements, 0: one broadcast element); plait_backend_cpu/kernels/ternary.py
// checks the operands and allocates the output.
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "kernels/ternary.h"

using namespace nanobind::literals;

namespace plait::cpu {
namespace {

// Releases the GIL for kernels over more than kReleaseGilAbove elements.
class ReleaseGilAbove {
 public:
  explicit ReleaseGilAbove(int64_t elements) {
    if (elements > kReleaseGilAbove) release_.emplace();
  }

 private:
  std::optional<nb::gil_scoped_release> release_;
};

using Kernel = bool (*)(int, int64_t, uintptr_t, TernaryOperand, TernaryOperand, TernaryOperand,
                        double);

// One binding per kernel: the operands as (address, step) pairs, then the scalar.
void bind_one(nb::module_& m, const char* name, Kernel kernel, const char* scalar,
              const char* doc) {
  m.def(
      name,
      [kernel](int dtype, int64_t n, uintptr_t out, uintptr_t a, int64_t a_step, uintptr_t b,
               int64_t b_step, uintptr_t c, int64_t c_step, double value) {
        ReleaseGilAbove nogil(n);
        return kernel(dtype, n, out, {a, a_step}, {b, b_step}, {c, c_step}, value);
      },
      "dtype"_a, "n"_a, "out"_a, "a"_a, "a_step"_a, "b"_a, "b_step"_a, "c"_a, "c_step"_a,
      nb::arg(scalar), doc);
}

// The strided form of one kernel: shape, then (address, element strides) per operand.
void bind_strided(nb::module_& m, const char* name, TernaryOp op, const char* scalar) {
  m.def(
      name,
      [op](int dtype, const Dims& shape, uintptr_t out, const Dims& out_strides, uintptr_t a,
           const Dims& a_strides, uintptr_t b, const Dims& b_strides, uintptr_t c,
           const Dims& c_strides, double value) {
        MaybeReleaseGil nogil(shape);
        return ternary_strided(op, dtype, shape, out, out_strides, a, a_strides, b, b_strides, c,
                               c_strides, value);
      },
      "dtype"_a, "shape"_a, "out"_a, "out_strides"_a, "a"_a, "a_strides"_a, "b"_a,
      "b_strides"_a, "c"_a, "c_strides"_a, nb::arg(scalar),
      "The strided form: any layout, element strides over the output's shape (0 where an "
      "operand broadcasts).");
}

}  // namespace

void bind_ternary(nb::module_& m) {
  bind_one(m, "addcmul", addcmul, "value",
           "out = fma(value * t1, t2, self) over n elements (operands a, b, c: self, t1, t2).");
  bind_one(m, "addcdiv", addcdiv, "value",
           "out = self + value * t1 / t2 over n elements (operands a, b, c: self, t1, t2).");
  bind_one(m, "lerp", lerp, "weight",
           "out = lerp(self, end, weight) over n elements (operands a, b, c: self, end, "
           "weight; c = 0 for the number `weight`).");
  bind_strided(m, "addcmul_strided", TernaryOp::kAddcmul, "value");
  bind_strided(m, "addcdiv_strided", TernaryOp::kAddcdiv, "value");
  bind_strided(m, "lerp_strided", TernaryOp::kLerp, "weight");
}

}  // namespace plait::cpu
