// Unary elementwise primitives (`UnaryOp` in kernels.h): one operator struct per row, run by
// the loop machinery of elementwise.h.
//
// Dtypes: the floating functions run on float32/float64/float16/bfloat16 (the 16-bit types in
// float32); integer inputs of floating functions (seen only when a backend test calls the
// primitive directly) are left to the reference kernel. float32 exp, exp2, log, log2, log10,
// sin, cos, tanh, sigmoid and erf use the vectorised code of vecmath.h; the other float32
// functions call float64 libm and round once (accurate, not vectorised); float64 calls libm.
#include <cmath>
#include <limits>

#include "elementwise.h"
#include "kernels.h"
#include "sqrt_array.h"
#include "vecmath.h"

namespace plait::cpu {
namespace {

using ew::grain_of;

template <class T>
inline constexpr bool kIntegral = std::is_integral_v<T> && !std::is_same_v<T, bool>;
template <class T>
inline constexpr bool kIntOrBool = std::is_integral_v<T>;
template <class T>
inline constexpr bool kNumeric = !std::is_same_v<T, bool>;
template <class T>
inline constexpr bool kAny = true;

// -- float64 special functions numpy and libm lack ----------------------------------------

// psi(x): reflection for x < 0, recurrence up to x >= 10, then the asymptotic series (the
// reference kernel's algorithm).
double digamma(double x) {
  if (x != x) return x;
  if (x == 0) return std::signbit(x) ? std::numeric_limits<double>::infinity()
                                     : -std::numeric_limits<double>::infinity();
  if (x < 0 && x == std::floor(x)) return std::numeric_limits<double>::quiet_NaN();
  double result = 0;
  constexpr double pi = 3.14159265358979323846;
  if (x < 0) {
    result -= pi / std::tan(pi * x);
    x = 1 - x;
  }
  if (x == std::numeric_limits<double>::infinity()) return x;
  while (x < 10) {
    result -= 1 / x;
    x += 1;
  }
  static constexpr double kSeries[] = {1.0 / 12,  -1.0 / 120,       1.0 / 252, -1.0 / 240,
                                       1.0 / 132, -691.0 / 32760.0, 1.0 / 12};
  const double inv2 = 1 / (x * x);
  double series = 0;
  for (int i = 6; i >= 0; --i) series = (series + kSeries[i]) * inv2;
  return result + (std::log(x) - 0.5 / x - series);  // the reference's order
}

// erf^-1(y): Giles' single-precision approximation refined by three Newton steps on erf.
double erfinv(double y) {
  if (y != y || y < -1 || y > 1) return std::numeric_limits<double>::quiet_NaN();
  if (y == 1) return std::numeric_limits<double>::infinity();
  if (y == -1) return -std::numeric_limits<double>::infinity();
  const double w = -std::log((1 - y) * (1 + y));
  double p;
  if (w < 5) {
    const double t = w - 2.5;
    p = 2.81022636e-08;
    for (double c : {3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                     -0.00125372503, -0.00417768164, 0.246640727, 1.50140941}) {
      p = p * t + c;
    }
  } else {
    const double t = std::sqrt(w) - 3;
    p = -0.000200214257;
    for (double c : {0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
                     -0.0076224613, 0.00943887047, 1.00167406, 2.83297682}) {
      p = p * t + c;
    }
  }
  double x = p * y;
  constexpr double two_over_sqrt_pi = 1.12837916709551257390;
  for (int i = 0; i < 3; ++i) {
    const double step = (std::erf(x) - y) / (two_over_sqrt_pi * std::exp(-x * x));
    if (std::isfinite(step)) x -= step;
  }
  return x;
}

// log|Gamma(x)|; +inf at the poles 0, -1, -2, ... lgamma_r is the thread-safe form (lgamma
// writes the global signgam) where the C library has it.
double lgamma(double x) {
#if defined(__GLIBC__)
  int sign;
  return ::lgamma_r(x, &sign);
#else
  return std::lgamma(x);
#endif
}

// 1 / (1 + e^-x), written as vecmath::sigmoid is (e = e^-|x|, so nothing overflows).
double sigmoid64(double x) {
  const double e = std::exp(-std::fabs(x));
  return (x < 0 ? e : 1.0) / (1.0 + e);
}

// -- rounding (branch-free, so the loops vectorise) ---------------------------------------

// Round half to even: adding and removing 2^(mantissa bits) rounds in the FPU's mode.
template <class C>
inline C round_even(C x) {
  constexpr C big = std::is_same_v<C, float> ? C(0x1p23) : C(0x1p52);
  const C ax = std::fabs(x);
  const C r = std::copysign((ax + big) - big, x);
  return ax < big ? r : x;  // larger values (and inf, NaN) are integers already
}

template <class C>
inline C floor_of(C x) {
  const C r = round_even(x);
  return r > x ? r - C(1) : r;
}

template <class C>
inline C ceil_of(C x) {
  const C r = round_even(x);
  return r < x ? r + C(1) : r;
}

template <class C>
inline C trunc_of(C x) {
  return std::copysign(floor_of(std::fabs(x)), x);
}

// -- operators ----------------------------------------------------------------------------

struct Neg {
  template <class T>
  static constexpr bool supports = kNumeric<T>;
  template <class C>
  static C apply(C x) {
    if constexpr (std::is_integral_v<C>) {
      using W = WrapType<C>;
      return static_cast<C>(W{0} - static_cast<W>(x));  // -INT_MIN wraps to INT_MIN
    } else {
      return -x;
    }
  }
};

struct Abs {
  template <class T>
  static constexpr bool supports = kNumeric<T>;
  template <class C>
  static C apply(C x) {
    if constexpr (std::is_floating_point_v<C>) {
      return std::fabs(x);  // clears the sign of -0.0 and of NaN
    } else if constexpr (std::is_signed_v<C>) {
      return x < 0 ? Neg::apply(x) : x;
    } else {
      return x;
    }
  }
};

// (0 < x) - (x < 0): sign(NaN) and sign(-0.0) are 0; bool is its own sign.
struct Sign {
  template <class T>
  static constexpr bool supports = kAny<T>;
  template <class C>
  static C apply(C x) {
    if constexpr (std::is_same_v<C, bool>) {
      return x;
    } else {
      return static_cast<C>(static_cast<C>(x > C(0)) - static_cast<C>(x < C(0)));
    }
  }
};

// Rounding is the identity on integers (and bool).
#define PLAIT_ROUNDING(NAME, FN)                  \
  struct NAME {                                   \
    template <class T>                            \
    static constexpr bool supports = kAny<T>;     \
    template <class C>                            \
    static C apply(C x) {                         \
      if constexpr (std::is_integral_v<C>) {      \
        return x;                                 \
      } else {                                    \
        return FN(x);                             \
      }                                           \
    }                                             \
  };
PLAIT_ROUNDING(Floor, floor_of)
PLAIT_ROUNDING(Ceil, ceil_of)
PLAIT_ROUNDING(Round, round_even)
PLAIT_ROUNDING(Trunc, trunc_of)
#undef PLAIT_ROUNDING

struct BitwiseNot {
  template <class T>
  static constexpr bool supports = kIntOrBool<T>;
  template <class C>
  static C apply(C x) {
    if constexpr (std::is_same_v<C, bool>) {
      return !x;
    } else {
      return static_cast<C>(~x);
    }
  }
};

// Write bool whatever the input dtype.
struct LogicalNot {
  static constexpr bool kBoolOut = true;
  template <class T>
  static constexpr bool supports = kAny<T>;
  template <class C>
  static bool apply(C x) {
    return x == C(0);
  }
};

struct IsNan {
  static constexpr bool kBoolOut = true;
  template <class T>
  static constexpr bool supports = kAny<T>;
  template <class C>
  static bool apply(C x) {
    if constexpr (std::is_floating_point_v<C>) {
      return x != x;
    } else {
      return false;
    }
  }
};

template <class T>
inline constexpr bool kFloating = is_floating_v<T>;

// A floating function: `Vec` for float (vectorised), libm in double otherwise. float32
// without a vectorised form computes in double and rounds once.
#define PLAIT_FLOAT_FN(NAME, VEC, LIBM, COST)                  \
  struct NAME {                                                \
    static constexpr int kCost = COST;                         \
    template <class T>                                         \
    static constexpr bool supports = kFloating<T>;             \
    static float apply(float x) { return VEC(x); }             \
    static double apply(double x) { return LIBM(x); }          \
  };

// float32 through float64 libm.
#define PLAIT_LIBM_FN(NAME, LIBM, COST)                                              \
  struct NAME {                                                                      \
    static constexpr int kCost = COST;                                               \
    template <class T>                                                               \
    static constexpr bool supports = kFloating<T>;                                   \
    static float apply(float x) { return static_cast<float>(LIBM(double{x})); }      \
    static double apply(double x) { return LIBM(x); }                                \
  };

PLAIT_FLOAT_FN(Exp, vecmath::exp, std::exp, 4)
PLAIT_FLOAT_FN(Exp2, vecmath::exp2, std::exp2, 4)
PLAIT_FLOAT_FN(Log, vecmath::log, std::log, 4)
PLAIT_FLOAT_FN(Log2, vecmath::log2, std::log2, 4)
PLAIT_FLOAT_FN(Log10, vecmath::log10, std::log10, 4)
PLAIT_FLOAT_FN(Tanh, vecmath::tanh, std::tanh, 8)
PLAIT_FLOAT_FN(Erf, vecmath::erf, std::erf, 8)
PLAIT_FLOAT_FN(Sigmoid, vecmath::sigmoid, sigmoid64, 5)
PLAIT_LIBM_FN(Expm1, std::expm1, 16)
PLAIT_LIBM_FN(Log1p, std::log1p, 16)
PLAIT_LIBM_FN(Tan, std::tan, 16)
PLAIT_LIBM_FN(Asin, std::asin, 16)
PLAIT_LIBM_FN(Acos, std::acos, 16)
PLAIT_LIBM_FN(Atan, std::atan, 16)
PLAIT_LIBM_FN(Sinh, std::sinh, 16)
PLAIT_LIBM_FN(Cosh, std::cosh, 16)
PLAIT_LIBM_FN(Asinh, std::asinh, 16)
PLAIT_LIBM_FN(Acosh, std::acosh, 16)
PLAIT_LIBM_FN(Atanh, std::atanh, 16)
PLAIT_LIBM_FN(Erfc, std::erfc, 16)
PLAIT_LIBM_FN(Erfinv, erfinv, 32)
PLAIT_LIBM_FN(Lgamma, lgamma, 32)
PLAIT_LIBM_FN(Digamma, digamma, 32)
#undef PLAIT_FLOAT_FN
#undef PLAIT_LIBM_FN

// sin and cos: vectorised for |x| <= kSinCosLimit, float64 libm for the rare larger (and
// non-finite) arguments, which the run patches after the vector loop.
#define PLAIT_SIN_COS(NAME, FN)                                                          \
  struct NAME {                                                                          \
    static constexpr int kCost = 4;                                                      \
    template <class T>                                                                   \
    static constexpr bool supports = kFloating<T>;                                       \
    static float apply(float x) { return vecmath::FN(x); }                               \
    static double apply(double x) { return std::FN(x); }                                 \
    template <class C>                                                                   \
    static bool slow(C x) {                                                              \
      return std::is_same_v<C, float> && !(std::fabs(x) <= C(vecmath::kSinCosLimit));    \
    }                                                                                    \
    template <class C>                                                                   \
    static C apply_slow(C x) {                                                           \
      return static_cast<C>(std::FN(static_cast<double>(x)));                            \
    }                                                                                    \
  };
PLAIT_SIN_COS(Sin, sin)
PLAIT_SIN_COS(Cos, cos)
#undef PLAIT_SIN_COS

// Square root, 1 / sqrt and 1 / x: one IEEE operation each (1 / sqrt two).
struct Sqrt {
  static constexpr int kCost = 2;
  template <class T>
  static constexpr bool supports = kFloating<T>;
  template <class C>
  static C apply(C x) {
    return std::sqrt(x);
  }
  template <class C>
  static void map(C* out, const C* a, int64_t n) {
    sqrt_array<false, C>(out, a, n);
  }
};

struct Rsqrt {
  static constexpr int kCost = 2;
  template <class T>
  static constexpr bool supports = kFloating<T>;
  template <class C>
  static C apply(C x) {
    return C(1) / std::sqrt(x);
  }
  template <class C>
  static void map(C* out, const C* a, int64_t n) {
    sqrt_array<true, C>(out, a, n);
  }
};

struct Reciprocal {
  template <class T>
  static constexpr bool supports = kFloating<T>;
  template <class C>
  static C apply(C x) {
    return C(1) / x;
  }
};

template <class Op, class = void>
struct BoolOut : std::false_type {};
template <class Op>
struct BoolOut<Op, std::void_t<decltype(Op::kBoolOut)>> : std::bool_constant<Op::kBoolOut> {};

template <class Op>
bool unary_op(int out_dtype, int a_dtype, const Dims& shape, uintptr_t out,
              const Dims& out_strides, uintptr_t a, const Dims& a_strides) {
  bool done = false;
  visit_dtype(a_dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (Op::template supports<T>) {
      using O = std::conditional_t<BoolOut<Op>::value, bool, T>;
      if (out_dtype != dtype_code<O>()) return;
      if (!ew::admissible(shape, out, out_strides, sizeof(O), {{a, &a_strides, sizeof(T)}})) {
        return;
      }
      ew::run_elementwise<2>(shape, {out, a}, {&out_strides, &a_strides}, {sizeof(O), sizeof(T)},
                             grain_of<Op>(), &ew::unary_run<Op, O, T>);
      done = true;
    }
  });
  return done;
}

}  // namespace

bool unary(UnaryOp op, int out_dtype, int a_dtype, const Dims& shape, uintptr_t out,
           const Dims& out_strides, uintptr_t a, const Dims& a_strides) {
  check_layout(shape, {&out_strides, &a_strides});
  switch (op) {
#define PLAIT_UNARY_CASE(NAME, PRIM) \
  case UnaryOp::NAME:                \
    return unary_op<NAME>(out_dtype, a_dtype, shape, out, out_strides, a, a_strides);
    PLAIT_CPU_UNARY_OPS(PLAIT_UNARY_CASE)
#undef PLAIT_UNARY_CASE
  }
  return false;
}

}  // namespace plait::cpu
