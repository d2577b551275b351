// Native CPU kernels for the primitives of torch._prims (DESIGN.md §7).
//
// Every kernel writes into a preallocated output. Pointers are addresses of the first element
// (storage offset included), strides are in elements, and every operand has `shape`.
// A kernel returns false when it leaves the case to the core's reference kernel: a dtype it
// does not know, more than kMaxDims dimensions, or operands that overlap in memory other than
// exactly (an output read while it is written). It throws std::invalid_argument on malformed
// layouts.
#pragma once

#include <cstdint>

#include "strided.h"

namespace plait::cpu {

// One row per elementwise primitive: enum name, primitive name. Adding one is adding a row
// here and an operator struct in elementwise.cpp (whose `supports<T>` says which dtypes it
// runs natively; the others return false). `div` is true division only: the Python wrapper
// leaves its rounding modes to the reference kernel.
#define PLAIT_CPU_BINARY_OPS(X) \
  X(Add, "add")                 \
  X(Mul, "mul")                 \
  X(Sub, "sub")                 \
  X(Maximum, "maximum")         \
  X(Minimum, "minimum")         \
  X(Div, "div")

#define PLAIT_CPU_UNARY_OPS(X) \
  X(Neg, "neg")                \
  X(Abs, "abs")                \
  X(Exp, "exp")                \
  X(Log, "log")                \
  X(Sqrt, "sqrt")              \
  X(Tanh, "tanh")              \
  X(Sin, "sin")                \
  X(Cos, "cos")

#define PLAIT_CPU_ENUM_ROW(NAME, PRIM) NAME,
enum class BinaryOp { PLAIT_CPU_BINARY_OPS(PLAIT_CPU_ENUM_ROW) };
enum class UnaryOp { PLAIT_CPU_UNARY_OPS(PLAIT_CPU_ENUM_ROW) };
#undef PLAIT_CPU_ENUM_ROW

// `out = op(a, b)`, every operand of dtype `dtype`.
bool binary(BinaryOp op, int dtype, const Dims& shape, uintptr_t out, const Dims& out_strides,
            uintptr_t a, const Dims& a_strides, uintptr_t b, const Dims& b_strides);

// `out = op(a)`, both of dtype `dtype`.
bool unary(UnaryOp op, int dtype, const Dims& shape, uintptr_t out, const Dims& out_strides,
           uintptr_t a, const Dims& a_strides);

// `fill_` with an integer value (integer and bool dtypes) or a float value (float dtypes; an
// integer dtype truncates it).
bool fill_int(int dtype, const Dims& shape, uintptr_t out, const Dims& out_strides,
              int64_t value);
bool fill_float(int dtype, const Dims& shape, uintptr_t out, const Dims& out_strides,
                double value);

// `copy_`: strided copy with a dtype cast (dtype.h `cast`).
bool copy(int out_dtype, int src_dtype, const Dims& shape, uintptr_t out,
          const Dims& out_strides, uintptr_t src, const Dims& src_strides);

// `sum`: `out` has `a`'s shape with the dimensions in `reduce_mask` (bit d set = dimension d
// is reduced) set to 1; `shape` is `a`'s shape and `out_strides` has its length (the value
// at a reduced dimension is ignored). Floating inputs accumulate in double with pairwise
// summation, integer and bool inputs in wrapping 64-bit integers.
bool sum(int out_dtype, int a_dtype, const Dims& shape, uintptr_t out, const Dims& out_strides,
         uintptr_t a, const Dims& a_strides, uint64_t reduce_mask);

}  // namespace plait::cpu
