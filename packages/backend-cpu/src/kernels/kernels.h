// Native CPU kernels for the primitives of torch._prims (docs/backend-guide.md).
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
// here and an operator struct in unary.cpp / binary.cpp / compare.cpp (whose `supports<T>`
// says which dtypes it runs natively; the others return false). `div` is true division;
// `div_trunc` and `div_floor` are its rounding modes (not primitives of their own).
#define PLAIT_CPU_BINARY_OPS(X)                  \
  X(Add, "add")                                  \
  X(Mul, "mul")                                  \
  X(Sub, "sub")                                  \
  X(Maximum, "maximum")                          \
  X(Minimum, "minimum")                          \
  X(Div, "div")                                  \
  X(Pow, "pow")                                  \
  X(Fmax, "fmax")                                \
  X(Fmin, "fmin")                                \
  X(Atan2, "atan2")                              \
  X(Hypot, "hypot")                              \
  X(Copysign, "copysign")                        \
  X(Nextafter, "nextafter")                      \
  X(Remainder, "remainder")                      \
  X(Fmod, "fmod")                                \
  X(BitwiseAnd, "bitwise_and")                   \
  X(BitwiseOr, "bitwise_or")                     \
  X(BitwiseXor, "bitwise_xor")                   \
  X(BitwiseLeftShift, "bitwise_left_shift")      \
  X(BitwiseRightShift, "bitwise_right_shift")    \
  X(SigmoidBackward, "sigmoid_backward")         \
  X(TanhBackward, "tanh_backward")               \
  X(DivTrunc, "div_trunc")                       \
  X(DivFloor, "div_floor")

#define PLAIT_CPU_UNARY_OPS(X)     \
  X(Neg, "neg")                    \
  X(Abs, "abs")                    \
  X(Exp, "exp")                    \
  X(Log, "log")                    \
  X(Sqrt, "sqrt")                  \
  X(Tanh, "tanh")                  \
  X(Sigmoid, "sigmoid")            \
  X(Sin, "sin")                    \
  X(Cos, "cos")                    \
  X(Sign, "sign")                  \
  X(Exp2, "exp2")                  \
  X(Expm1, "expm1")                \
  X(Log2, "log2")                  \
  X(Log10, "log10")                \
  X(Log1p, "log1p")                \
  X(Rsqrt, "rsqrt")                \
  X(Reciprocal, "reciprocal")      \
  X(Tan, "tan")                    \
  X(Asin, "asin")                  \
  X(Acos, "acos")                  \
  X(Atan, "atan")                  \
  X(Sinh, "sinh")                  \
  X(Cosh, "cosh")                  \
  X(Asinh, "asinh")                \
  X(Acosh, "acosh")                \
  X(Atanh, "atanh")                \
  X(Erf, "erf")                    \
  X(Erfc, "erfc")                  \
  X(Erfinv, "erfinv")              \
  X(Lgamma, "lgamma")              \
  X(Digamma, "digamma")            \
  X(Floor, "floor")                \
  X(Ceil, "ceil")                  \
  X(Round, "round")                \
  X(Trunc, "trunc")                \
  X(LogicalNot, "logical_not")     \
  X(BitwiseNot, "bitwise_not")     \
  X(IsNan, "isnan")

// Two inputs of one dtype, a bool output.
#define PLAIT_CPU_COMPARE_OPS(X)     \
  X(Eq, "eq")                        \
  X(Ne, "ne")                        \
  X(Lt, "lt")                        \
  X(Le, "le")                        \
  X(Gt, "gt")                        \
  X(Ge, "ge")                        \
  X(LogicalAnd, "logical_and")       \
  X(LogicalOr, "logical_or")         \
  X(LogicalXor, "logical_xor")

#define PLAIT_CPU_ENUM_ROW(NAME, PRIM) NAME,
enum class BinaryOp { PLAIT_CPU_BINARY_OPS(PLAIT_CPU_ENUM_ROW) };
enum class UnaryOp { PLAIT_CPU_UNARY_OPS(PLAIT_CPU_ENUM_ROW) };
enum class CompareOp { PLAIT_CPU_COMPARE_OPS(PLAIT_CPU_ENUM_ROW) };
#undef PLAIT_CPU_ENUM_ROW

// `out = op(a, b)`, every operand of dtype `dtype`.
bool binary(BinaryOp op, int dtype, const Dims& shape, uintptr_t out, const Dims& out_strides,
            uintptr_t a, const Dims& a_strides, uintptr_t b, const Dims& b_strides);

// `out = op(a)`: `out` of dtype `out_dtype` (bool for logical_not and isnan, `a_dtype` for
// the others; any other combination returns false).
bool unary(UnaryOp op, int out_dtype, int a_dtype, const Dims& shape, uintptr_t out,
           const Dims& out_strides, uintptr_t a, const Dims& a_strides);

// `out = op(a)`, both of dtype `dtype`.
inline bool unary(UnaryOp op, int dtype, const Dims& shape, uintptr_t out,
                  const Dims& out_strides, uintptr_t a, const Dims& a_strides) {
  return unary(op, dtype, dtype, shape, out, out_strides, a, a_strides);
}

// `out = op(a, b)`: `a` and `b` of dtype `dtype`, `out` bool.
bool compare(CompareOp op, int dtype, const Dims& shape, uintptr_t out, const Dims& out_strides,
             uintptr_t a, const Dims& a_strides, uintptr_t b, const Dims& b_strides);

// `out = cond ? a : b`: `cond` bool, the others of dtype `dtype` (selected as raw storage).
bool where(int dtype, const Dims& shape, uintptr_t out, const Dims& out_strides, uintptr_t cond,
           const Dims& cond_strides, uintptr_t a, const Dims& a_strides, uintptr_t b,
           const Dims& b_strides);

// `fill_` with an integer value (integer and bool dtypes) or a float value (float dtypes; an
// integer dtype truncates it).
bool fill_int(int dtype, const Dims& shape, uintptr_t out, const Dims& out_strides,
              int64_t value);
bool fill_float(int dtype, const Dims& shape, uintptr_t out, const Dims& out_strides,
                double value);

// `arange_` of a 1-d `out` of `n` elements with element stride `stride`: out[i] = start +
// i * step, in wrapping int64 (then cast) or in double (then rounded to the dtype).
bool arange_int(int dtype, int64_t n, uintptr_t out, int64_t stride, int64_t start,
                int64_t step);
bool arange_float(int dtype, int64_t n, uintptr_t out, int64_t stride, double start,
                  double step);

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
