// Fused ternary pointwise kernels: `aten::addcmul`, `aten::addcdiv` and `aten::lerp.Tensor` (with
// a tensor or a number weight) in one pass over memory, where core's composites run three to six
// elementwise ops in float64. They override the composites under the CPU key; the composites
// stay the reference and every other case (docs: the backend-cpu README, "Ternary kernels").
//
// Numerics are those of PyTorch's CPU kernels, in the dtype's compute type (float for float32,
// float16 and bfloat16, which load into float and round once on store; double for float64),
// the scalar `value` / `weight` rounded to that type first:
//   addcmul: fma(value * t1, t2, self)
//   addcdiv: self + value * t1 / t2
//   lerp:    |w| < 0.5 ? fma(w, end - self, self) : fma(w - 1, end - self, end)
// (the fused multiply-adds are PyTorch's too: its vectorised loops contract them).
//
// Each operand is `n` contiguous elements of dtype `dtype` (a step of 1) or one element read for
// every output (a step of 0, a broadcast 1-element tensor); the output is `n` contiguous
// elements. lerp's weight address 0 means the number `weight_value`. Another dtype returns
// false and the wrapper runs the composite. Elements are split over the worker threads; each is
// computed the same way whatever the split.
//
// The `_strided` forms take any layout: element strides per operand over the output's shape
// (0 where an operand broadcasts), the output laid out by the caller; they compute the same
// values. They return false (the composite runs) for another dtype, an output that repeats
// elements or partly overlaps an input, or more dimensions than strided.h handles.
#pragma once

#include <cstdint>

#include "strided.h"

namespace plait::cpu {

// One input of a ternary kernel: its address and its step (1: n elements, 0: one element).
struct TernaryOperand {
  uintptr_t address;
  int64_t step;
};

// out = fma(value * t1, t2, self)
bool addcmul(int dtype, int64_t n, uintptr_t out, TernaryOperand self, TernaryOperand t1,
             TernaryOperand t2, double value);

// out = self + value * t1 / t2
bool addcdiv(int dtype, int64_t n, uintptr_t out, TernaryOperand self, TernaryOperand t1,
             TernaryOperand t2, double value);

// out = lerp(self, end, weight), weight the number `weight_value` when weight.address is 0.
bool lerp(int dtype, int64_t n, uintptr_t out, TernaryOperand self, TernaryOperand end,
          TernaryOperand weight, double weight_value);

// Which formula a `ternary_strided` call computes.
enum class TernaryOp { kAddcmul, kAddcdiv, kLerp };

// The strided form of addcmul / addcdiv / lerp (operands a, b, c: self, t1, t2 or self, end,
// weight; for lerp, c = 0 takes the number `value` as the weight).
bool ternary_strided(TernaryOp op, int dtype, const Dims& shape, uintptr_t out,
                     const Dims& out_strides, uintptr_t a, const Dims& a_strides, uintptr_t b,
                     const Dims& b_strides, uintptr_t c, const Dims& c_strides, double value);

}  // namespace plait::cpu
