// Binary elementwise primitives (`BinaryOp` in kernels.h): `out = op(a, b)` with every operand
// of one dtype, one operator struct per row, run by the loop machinery of elementwise.h.
//
// Semantics are the reference kernels': integer arithmetic wraps; bool add/mul/sub/maximum/
// minimum are or/and/xor/or/and (numpy's bool arithmetic); maximum/minimum propagate NaN,
// fmax/fmin ignore it; remainder has the divisor's sign (Python's %), fmod the dividend's;
// integer division by zero is left to the reference kernel, which raises; shifts by a negative
// amount or by the width or more give 0 (left) or the sign fill (right).
#include <cmath>
#include <limits>

#include "elementwise.h"
#include "kernels.h"
#include "sqrt_array.h"

namespace plait::cpu {
namespace {

using ew::grain_of;

template <class T>
inline constexpr bool kAny = true;
template <class T>
inline constexpr bool kFloating = is_floating_v<T>;
template <class T>
inline constexpr bool kIntegral = std::is_integral_v<T> && !std::is_same_v<T, bool>;
template <class T>
inline constexpr bool kIntOrBool = std::is_integral_v<T>;
template <class T>
inline constexpr bool kNumeric = !std::is_same_v<T, bool>;
template <class T>
inline constexpr bool kNotBool = !std::is_same_v<T, bool>;

// Wrapping integer arithmetic in an unsigned type (no signed overflow).
#define PLAIT_WRAPPING(NAME, OP, BOOL_OP)                                      \
  struct NAME {                                                                \
    template <class T>                                                         \
    static constexpr bool supports = kAny<T>;                                  \
    template <class C>                                                         \
    static C apply(C a, C b) {                                                 \
      if constexpr (std::is_same_v<C, bool>) {                                 \
        return BOOL_OP;                                                        \
      } else if constexpr (std::is_integral_v<C>) {                            \
        using W = WrapType<C>;                                                 \
        return static_cast<C>(static_cast<W>(a) OP static_cast<W>(b));         \
      } else {                                                                 \
        return a OP b;                                                         \
      }                                                                        \
    }                                                                          \
  };
PLAIT_WRAPPING(Add, +, a || b)
PLAIT_WRAPPING(Sub, -, a != b)
PLAIT_WRAPPING(Mul, *, a && b)
#undef PLAIT_WRAPPING

// `a != a` is isnan without a call, which keeps the loops vectorisable. Equal operands give
// `b`, as numpy (and x86 maxps/minps) do, which decides the sign of a zero.
struct Maximum {
  template <class T>
  static constexpr bool supports = kAny<T>;
  template <class C>
  static C apply(C a, C b) {
    return (a > b || a != a) ? a : b;
  }
};

struct Minimum {
  template <class T>
  static constexpr bool supports = kAny<T>;
  template <class C>
  static C apply(C a, C b) {
    return (a < b || a != a) ? a : b;
  }
};

// NaN operands are ignored (the other one wins).
struct Fmax {
  template <class T>
  static constexpr bool supports = kAny<T>;
  template <class C>
  static C apply(C a, C b) {
    return (a > b || b != b) ? a : b;
  }
};

struct Fmin {
  template <class T>
  static constexpr bool supports = kAny<T>;
  template <class C>
  static C apply(C a, C b) {
    return (a < b || b != b) ? a : b;
  }
};

// Float powers by a small integer exponent, vectorised (x ** 2 is everywhere in models):
// 2 and -1 are one correctly rounded operation (so equal to pow), 3 and -2 two (as PyTorch).
template <class C>
PLAIT_CLONES void pow_small_array(C* out, const C* a, int64_t n, int exponent) {
  switch (exponent) {
    case 2:
      for (int64_t i = 0; i < n; ++i) out[i] = a[i] * a[i];
      break;
    case 3:
      for (int64_t i = 0; i < n; ++i) out[i] = a[i] * a[i] * a[i];
      break;
    case -1:
      for (int64_t i = 0; i < n; ++i) out[i] = C(1) / a[i];
      break;
    case -2:
      for (int64_t i = 0; i < n; ++i) out[i] = C(1) / (a[i] * a[i]);
      break;
    default:
      for (int64_t i = 0; i < n; ++i) out[i] = a[i];
      break;
  }
}

// Integer powers by repeated squaring (wrapping); a negative exponent gives 1 / a**|b|
// truncated: 1 for a == 1, +-1 for a == -1, 0 otherwise. Floats call libm's pow/powf, but
// for a scalar exponent in {1, 2, 3, -1, -2}.
struct Pow {
  static constexpr int kCost = 16;
  template <class T>
  static constexpr bool supports = kAny<T>;
  template <class C>
  static C apply(C a, C b) {
    if constexpr (std::is_same_v<C, bool>) {
      return a || !b;
    } else if constexpr (std::is_integral_v<C>) {
      if constexpr (std::is_signed_v<C>) {
        if (b < 0) return a == 1 ? C(1) : (a == -1 ? ((b & 1) ? C(-1) : C(1)) : C(0));
      }
      using W = WrapType<C>;
      W base = static_cast<W>(a);
      W result = 1;
      for (auto e = static_cast<std::make_unsigned_t<C>>(b); e != 0; e >>= 1) {
        if (e & 1) result = static_cast<W>(result * base);
        base = static_cast<W>(base * base);
      }
      return static_cast<C>(result);
    } else {
      return std::pow(a, b);  // float: powf (glibc's is within 1 ulp and much faster)
    }
  }
  template <class C>
  static bool map_vs(C* out, const C* a, C b, int64_t n) {
    if constexpr (std::is_floating_point_v<C>) {
      const bool small = b == C(1) || b == C(2) || b == C(3) || b == C(-1) || b == C(-2);
      if (!small) return false;
      pow_small_array<C>(out, a, n, static_cast<int>(b));
      return true;
    } else {
      return false;
    }
  }
};

#define PLAIT_FLOAT_LIBM2(NAME, FN)                                              \
  struct NAME {                                                                  \
    static constexpr int kCost = 16;                                             \
    template <class T>                                                           \
    static constexpr bool supports = kFloating<T>;                               \
    static float apply(float a, float b) {                                       \
      return static_cast<float>(FN(double{a}, double{b}));                       \
    }                                                                            \
    static double apply(double a, double b) { return FN(a, b); }                 \
  };
PLAIT_FLOAT_LIBM2(Atan2, std::atan2)
#undef PLAIT_FLOAT_LIBM2

// float hypot as C's hypotf computes it: the square root of the sum of the squares in double
// (the squares are exact there, so one rounding before the root's), inf when either operand
// is infinite (even with a NaN beside it). Its own loop takes the roots of a block at once
// (|z| of complex64, the magnitude of a spectrum, runs here: glibc's hypot one element at a
// time took 30 ns each). double calls libm.
PLAIT_CLONES void hypot_float_array(float* out, const float* a, const float* b, int64_t n) {
  alignas(64) double sums[ew::kBlock];
  for (int64_t start = 0; start < n; start += ew::kBlock) {
    const int64_t m = std::min(ew::kBlock, n - start);
    const float* x = a + start;
    const float* y = b + start;
    for (int64_t i = 0; i < m; ++i) {
      sums[i] = static_cast<double>(x[i]) * x[i] + static_cast<double>(y[i]) * y[i];
    }
    sqrt_array<false, double>(sums, sums, m);
    for (int64_t i = 0; i < m; ++i) {
      const bool infinite = std::isinf(x[i]) || std::isinf(y[i]);
      out[start + i] = infinite ? std::numeric_limits<float>::infinity()
                                : static_cast<float>(sums[i]);
    }
  }
}

struct Hypot {
  static constexpr int kCost = 4;
  template <class T>
  static constexpr bool supports = kFloating<T>;
  static float apply(float a, float b) {
    if (std::isinf(a) || std::isinf(b)) return std::numeric_limits<float>::infinity();
    const double x = a, y = b;
    return static_cast<float>(std::sqrt(x * x + y * y));
  }
  static double apply(double a, double b) { return std::hypot(a, b); }
  static void map_vv(float* out, const float* a, const float* b, int64_t n) {
    hypot_float_array(out, a, b, n);
  }
};

// The backward ops of sigmoid and tanh, from the gradient g and the forward's result y:
// g (1 - y) y and g (1 - y^2) (real dtypes; complex is left to the reference kernel), the
// latter as (1 - y)(1 + y), where one factor is exact near |y| = 1 and no multiply-add can be
// contracted (an FMA would make the AVX2 clone round differently from the others). float32
// (and the 16-bit types, computed in float) go through double and round once, as the reference
// does. The loops stay vectorised (a conversion is one instruction per vector) and
// memory-bound.
struct SigmoidBackward {
  static constexpr int kCost = 2;
  template <class T>
  static constexpr bool supports = kFloating<T>;
  static double apply(double g, double y) { return g * ((1.0 - y) * y); }
  static float apply(float g, float y) {
    return static_cast<float>(apply(double{g}, double{y}));
  }
};

struct TanhBackward {
  static constexpr int kCost = 2;
  template <class T>
  static constexpr bool supports = kFloating<T>;
  static double apply(double g, double y) { return g * ((1.0 - y) * (1.0 + y)); }
  static float apply(float g, float y) {
    return static_cast<float>(apply(double{g}, double{y}));
  }
};

struct Copysign {
  template <class T>
  static constexpr bool supports = kFloating<T>;
  template <class C>
  static C apply(C a, C b) {
    return std::copysign(a, b);
  }
};

// One step from a towards b in the storage dtype's own precision (so float16 and bfloat16
// step on their 16-bit patterns, not in float32).
struct Nextafter {
  static constexpr bool kRaw = true;
  template <class T>
  static constexpr bool supports = kFloating<T>;
  template <class T>
  static T apply(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
      return std::nextafter(a, b);
    } else {
      const float fa = ew::widen(a);
      const float fb = ew::widen(b);
      constexpr uint16_t nan = std::is_same_v<T, Half> ? 0x7E00 : 0x7FC0;
      if (fa != fa || fb != fb) return T{nan};
      if (fa == fb) return b;
      if (fa == 0.0f) return T{static_cast<uint16_t>(fb < 0.0f ? 0x8001 : 0x0001)};
      const uint16_t step = static_cast<uint16_t>((fa < fb) == (fa > 0.0f) ? 1 : 0xFFFF);
      return T{static_cast<uint16_t>(a.bits + step)};
    }
  }
};

// Integer divisions: callers have checked that no divisor is zero. b == -1 is the one
// quotient that can overflow (INT_MIN / -1): it wraps, as a negation.
template <class C>
inline C int_div_trunc(C a, C b) {
  if constexpr (std::is_signed_v<C>) {
    if (b == -1) {
      using W = WrapType<C>;
      return static_cast<C>(W{0} - static_cast<W>(a));
    }
  }
  return static_cast<C>(a / b);
}

template <class C>
inline C int_fmod(C a, C b) {
  if constexpr (std::is_signed_v<C>) {
    if (b == -1) return C(0);
  }
  return static_cast<C>(a % b);
}

// Remainder with the divisor's sign (Python's %): fmod corrected by one divisor.
struct Remainder {
  static constexpr bool kIntDivision = true;
  static constexpr int kCost = 4;
  template <class T>
  static constexpr bool supports = kNotBool<T>;
  template <class C>
  static C apply(C a, C b) {
    C mod;
    if constexpr (std::is_integral_v<C>) {
      mod = int_fmod(a, b);
    } else {
      mod = std::fmod(a, b);
    }
    const bool fix = mod != C(0) && ((b < C(0)) != (mod < C(0)));
    return fix ? static_cast<C>(mod + b) : mod;
  }
};

struct Fmod {
  static constexpr bool kIntDivision = true;
  static constexpr int kCost = 4;
  template <class T>
  static constexpr bool supports = kNotBool<T>;
  template <class C>
  static C apply(C a, C b) {
    if constexpr (std::is_integral_v<C>) {
      return int_fmod(a, b);
    } else {
      return std::fmod(a, b);
    }
  }
};

// True division (floats only: integer true division is promoted to float by core).
struct Div {
  template <class T>
  static constexpr bool supports = kFloating<T>;
  template <class C>
  static C apply(C a, C b) {
    return a / b;
  }
};

struct DivTrunc {
  static constexpr bool kIntDivision = true;
  template <class T>
  static constexpr bool supports = kNotBool<T>;
  template <class C>
  static C apply(C a, C b) {
    if constexpr (std::is_integral_v<C>) {
      return int_div_trunc(a, b);
    } else {
      return std::trunc(a / b);
    }
  }
};

// Floor division. Floats: Python's algorithm, exact where floor(a / b) is not: the quotient
// of a - fmod(a, b) (exact), corrected to the divisor's sign, rounded to the nearest integer.
struct DivFloor {
  static constexpr bool kIntDivision = true;
  static constexpr int kCost = 4;
  template <class T>
  static constexpr bool supports = kNotBool<T>;
  template <class C>
  static C apply(C a, C b) {
    if constexpr (std::is_integral_v<C>) {
      const C q = int_div_trunc(a, b);
      const bool inexact = int_fmod(a, b) != 0;
      return (inexact && ((a < 0) != (b < 0))) ? static_cast<C>(q - 1) : q;
    } else {
      if (b == C(0)) return a / b;
      const C mod = std::fmod(a, b);
      C div = (a - mod) / b;
      if (mod != C(0) && ((b < C(0)) != (mod < C(0)))) div -= C(1);
      if (div == C(0)) return std::copysign(C(0), a / b);
      C floored = std::floor(div);
      if (div - floored > C(0.5)) floored += C(1);
      return floored;
    }
  }
};

#define PLAIT_BITWISE(NAME, OP)                                   \
  struct NAME {                                                   \
    template <class T>                                            \
    static constexpr bool supports = kIntOrBool<T>;               \
    template <class C>                                            \
    static C apply(C a, C b) {                                    \
      return static_cast<C>(a OP b);                              \
    }                                                             \
  };
PLAIT_BITWISE(BitwiseAnd, &)
PLAIT_BITWISE(BitwiseOr, |)
PLAIT_BITWISE(BitwiseXor, ^)
#undef PLAIT_BITWISE

struct BitwiseLeftShift {
  template <class T>
  static constexpr bool supports = kIntOrBool<T>;
  template <class C>
  static C apply(C a, C b) {
    if constexpr (std::is_same_v<C, bool>) {
      return a;  // a << {0, 1} is nonzero exactly when a is
    } else {
      constexpr int width = static_cast<int>(sizeof(C) * 8);
      using W = WrapType<C>;
      const bool bad = b < C(0) || static_cast<int64_t>(b) >= width;
      const W shifted = static_cast<W>(static_cast<W>(a) << (bad ? 0 : static_cast<int>(b)));
      return bad ? C(0) : static_cast<C>(shifted);
    }
  }
};

struct BitwiseRightShift {
  template <class T>
  static constexpr bool supports = kIntOrBool<T>;
  template <class C>
  static C apply(C a, C b) {
    if constexpr (std::is_same_v<C, bool>) {
      return a && !b;
    } else {
      // Signed values shift arithmetically; out-of-range shifts keep only the sign.
      constexpr int limit = static_cast<int>(sizeof(C) * 8) - (std::is_signed_v<C> ? 1 : 0);
      const bool bad = b < C(0) || static_cast<int64_t>(b) >= limit;
      if constexpr (std::is_signed_v<C>) {
        return static_cast<C>(a >> (bad ? limit : static_cast<int>(b)));
      } else {
        return bad ? C(0) : static_cast<C>(a >> static_cast<int>(b));
      }
    }
  }
};

template <class Op, class = void>
struct IntDivision : std::false_type {};
template <class Op>
struct IntDivision<Op, std::void_t<decltype(Op::kIntDivision)>> : std::true_type {};

// True when some element of b (integer) is zero.
template <class T>
bool any_zero(const Dims& shape, uintptr_t b, const Dims& b_strides) {
  Strided<1> nest;
  if (!nest.build(shape, {&b_strides}, {sizeof(T)}, 0)) return false;
  bool zero = false;
  for_each_run(nest, std::array<char*, 1>{reinterpret_cast<char*>(b)},
               [&](int64_t n, char* const* p, const int64_t* s) {
                 for (int64_t i = 0; i < n && !zero; ++i) {
                   zero = ew::load_at<T>(p[0] + i * s[0]) == T(0);
                 }
               });
  return zero;
}

template <class Op>
bool binary_op(int dtype, const Dims& shape, uintptr_t out, const Dims& out_strides,
               uintptr_t a, const Dims& a_strides, uintptr_t b, const Dims& b_strides) {
  bool done = false;
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (Op::template supports<T>) {
      constexpr size_t size = sizeof(T);
      if (!ew::admissible(shape, out, out_strides, size,
                          {{a, &a_strides, size}, {b, &b_strides, size}})) {
        return;
      }
      if constexpr (IntDivision<Op>::value && std::is_integral_v<T>) {
        // The reference kernel raises PyTorch's error for a zero divisor.
        if (any_zero<T>(shape, b, b_strides)) return;
      }
      ew::run_elementwise<3>(shape, {out, a, b}, {&out_strides, &a_strides, &b_strides},
                             {size, size, size}, grain_of<Op>(), &ew::binary_run<Op, T, T>);
      done = true;
    }
  });
  return done;
}

}  // namespace

bool binary(BinaryOp op, int dtype, const Dims& shape, uintptr_t out, const Dims& out_strides,
            uintptr_t a, const Dims& a_strides, uintptr_t b, const Dims& b_strides) {
  check_layout(shape, {&out_strides, &a_strides, &b_strides});
  switch (op) {
#define PLAIT_BINARY_CASE(NAME, PRIM) \
  case BinaryOp::NAME:                \
    return binary_op<NAME>(dtype, shape, out, out_strides, a, a_strides, b, b_strides);
    PLAIT_CPU_BINARY_OPS(PLAIT_BINARY_CASE)
#undef PLAIT_BINARY_CASE
  }
  return false;
}

}  // namespace plait::cpu
