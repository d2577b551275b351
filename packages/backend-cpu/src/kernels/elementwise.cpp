// Elementwise primitives: the binary and unary arithmetic of kernels.h, fill_, copy_ (with
// dtype cast).
//
// Each kernel has a contiguous fast path (one unit-stride loop the compiler vectorises), a
// path for a 0-d scalar operand broadcast with stride 0 (`x + 2.0`), and the general strided
// loop nest of strided.h.
//
// Results match the core's reference kernels bit for bit: integer arithmetic wraps, maximum
// and minimum propagate NaN (numpy's rule: the first NaN operand), and float32
// transcendental functions compute in double and round once on store.
#include <cmath>
#include <cstring>

#include "dtype.h"
#include "kernels.h"

namespace plait::cpu {
namespace {

// Every arithmetic dtype but bool (bool arithmetic means logical or/and in PyTorch; the
// reference kernel does it).
template <class T>
inline constexpr bool kArithmetic = !std::is_same_v<T, bool>;

struct Add {
  template <class T>
  static constexpr bool supports = kArithmetic<T>;
  template <class T>
  static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      using W = WrapType<T>;
      return static_cast<T>(static_cast<W>(a) + static_cast<W>(b));
    } else {
      return a + b;
    }
  }
};

struct Sub {
  template <class T>
  static constexpr bool supports = kArithmetic<T>;
  template <class T>
  static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      using W = WrapType<T>;
      return static_cast<T>(static_cast<W>(a) - static_cast<W>(b));
    } else {
      return a - b;
    }
  }
};

struct Mul {
  template <class T>
  static constexpr bool supports = kArithmetic<T>;
  template <class T>
  static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      using W = WrapType<T>;
      return static_cast<T>(static_cast<W>(a) * static_cast<W>(b));
    } else {
      return a * b;
    }
  }
};

// True division of floats; integer division (and its zero-divisor error) is the reference's.
struct Div {
  template <class T>
  static constexpr bool supports = std::is_floating_point_v<T>;
  template <class T>
  static T apply(T a, T b) {
    return a / b;
  }
};

// `a != a` is isnan without a call, which keeps the loops vectorisable. Equal operands give
// `b`, as numpy (and x86 maxps/minps) do, which decides the sign of a zero.
struct Maximum {
  template <class T>
  static constexpr bool supports = kArithmetic<T>;
  template <class T>
  static T apply(T a, T b) {
    return (a > b || a != a) ? a : b;
  }
};

struct Minimum {
  template <class T>
  static constexpr bool supports = kArithmetic<T>;
  template <class T>
  static T apply(T a, T b) {
    return (a < b || a != a) ? a : b;
  }
};

struct Neg {
  template <class T>
  static constexpr bool supports = kArithmetic<T>;
  template <class T>
  static T apply(T x) {
    if constexpr (std::is_integral_v<T>) {
      using W = WrapType<T>;
      return static_cast<T>(W{0} - static_cast<W>(x));  // -INT_MIN wraps to INT_MIN
    } else {
      return -x;
    }
  }
};

struct Abs {
  template <class T>
  static constexpr bool supports = kArithmetic<T>;
  template <class T>
  static T apply(T x) {
    if constexpr (std::is_floating_point_v<T>) {
      return std::fabs(x);  // clears the sign of -0.0 and of NaN, as numpy does
    } else if constexpr (std::is_signed_v<T>) {
      return x < 0 ? Neg::apply(x) : x;
    } else {
      return x;
    }
  }
};

// Floating functions of <cmath>. float computes in double and rounds once on store, as the
// reference kernels do (the correctly rounded result in practice). `SUPPORTS` is the set of
// types run natively: the reference computes double exp, log and tanh with numpy's own SIMD
// code on CPUs that have it (AVX-512), whose results differ from libm's in the last bit, so
// those are left to it and stay bit-identical.
template <class T>
inline constexpr bool kFloatOnly = std::is_same_v<T, float>;
template <class T>
inline constexpr bool kFloatAndDouble = std::is_floating_point_v<T>;

#define PLAIT_DOUBLE_MATH(NAME, FN, SUPPORTS)                  \
  struct NAME {                                                \
    template <class T>                                         \
    static constexpr bool supports = SUPPORTS<T>;              \
    template <class T>                                         \
    static T apply(T x) {                                      \
      return static_cast<T>(std::FN(static_cast<double>(x)));  \
    }                                                          \
  };
PLAIT_DOUBLE_MATH(Exp, exp, kFloatOnly)
PLAIT_DOUBLE_MATH(Log, log, kFloatOnly)
PLAIT_DOUBLE_MATH(Sqrt, sqrt, kFloatAndDouble)
PLAIT_DOUBLE_MATH(Tanh, tanh, kFloatOnly)
PLAIT_DOUBLE_MATH(Sin, sin, kFloatAndDouble)
PLAIT_DOUBLE_MATH(Cos, cos, kFloatAndDouble)
#undef PLAIT_DOUBLE_MATH

// One run of `out = op(a, b)`; strides in bytes.
template <class T, class Op>
void binary_run(int64_t n, char* const* p, const int64_t* s) {
  constexpr int64_t size = sizeof(T);
  T* out = reinterpret_cast<T*>(p[0]);
  const T* a = reinterpret_cast<const T*>(p[1]);
  const T* b = reinterpret_cast<const T*>(p[2]);
  if (s[0] == size && s[1] == size && s[2] == size) {
    for (int64_t i = 0; i < n; ++i) out[i] = Op::apply(a[i], b[i]);
  } else if (s[0] == size && s[1] == size && s[2] == 0) {
    const T bv = *b;
    for (int64_t i = 0; i < n; ++i) out[i] = Op::apply(a[i], bv);
  } else if (s[0] == size && s[1] == 0 && s[2] == size) {
    const T av = *a;
    for (int64_t i = 0; i < n; ++i) out[i] = Op::apply(av, b[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) {
      at<T>(p[0], i * s[0]) = Op::apply(at<T>(p[1], i * s[1]), at<T>(p[2], i * s[2]));
    }
  }
}

template <class T, class Op>
void binary_typed(const Dims& shape, uintptr_t out, const Dims& out_strides, uintptr_t a,
                  const Dims& a_strides, uintptr_t b, const Dims& b_strides) {
  std::array<char*, 3> base{reinterpret_cast<char*>(out), reinterpret_cast<char*>(a),
                            reinterpret_cast<char*>(b)};
  if (is_contiguous(shape, out_strides) && is_contiguous(shape, a_strides) &&
      is_contiguous(shape, b_strides)) {
    const std::array<int64_t, 3> unit{sizeof(T), sizeof(T), sizeof(T)};
    binary_run<T, Op>(numel(shape), base.data(), unit.data());
    return;
  }
  Strided<3> nest;
  if (!nest.build(shape, {&out_strides, &a_strides, &b_strides}, {sizeof(T), sizeof(T), sizeof(T)},
                  0)) {
    return;
  }
  for_each_run(nest, base, binary_run<T, Op>);
}

// One run of `out = op(a)`; strides in bytes.
template <class T, class Op>
void unary_run(int64_t n, char* const* p, const int64_t* s) {
  constexpr int64_t size = sizeof(T);
  T* out = reinterpret_cast<T*>(p[0]);
  const T* a = reinterpret_cast<const T*>(p[1]);
  if (s[0] == size && s[1] == size) {
    for (int64_t i = 0; i < n; ++i) out[i] = Op::apply(a[i]);
  } else if (s[0] == size && s[1] == 0) {
    const T v = Op::apply(*a);
    for (int64_t i = 0; i < n; ++i) out[i] = v;
  } else {
    for (int64_t i = 0; i < n; ++i) at<T>(p[0], i * s[0]) = Op::apply(at<const T>(p[1], i * s[1]));
  }
}

template <class T, class Op>
void unary_typed(const Dims& shape, uintptr_t out, const Dims& out_strides, uintptr_t a,
                 const Dims& a_strides) {
  std::array<char*, 2> base{reinterpret_cast<char*>(out), reinterpret_cast<char*>(a)};
  if (is_contiguous(shape, out_strides) && is_contiguous(shape, a_strides)) {
    const std::array<int64_t, 2> unit{sizeof(T), sizeof(T)};
    unary_run<T, Op>(numel(shape), base.data(), unit.data());
    return;
  }
  Strided<2> nest;
  if (!nest.build(shape, {&out_strides, &a_strides}, {sizeof(T), sizeof(T)}, 0)) return;
  for_each_run(nest, base, unary_run<T, Op>);
}

template <class T>
void fill_typed(const Dims& shape, uintptr_t out, const Dims& out_strides, T value) {
  Strided<1> nest;
  if (!nest.build(shape, {&out_strides}, {sizeof(T)}, 0)) return;
  for_each_run(nest, std::array<char*, 1>{reinterpret_cast<char*>(out)},
           [value](int64_t n, char* const* p, const int64_t* s) {
             if (s[0] == static_cast<int64_t>(sizeof(T))) {
               T* o = reinterpret_cast<T*>(p[0]);
               for (int64_t i = 0; i < n; ++i) o[i] = value;
             } else {
               for (int64_t i = 0; i < n; ++i) at<T>(p[0], i * s[0]) = value;
             }
           });
}

template <class D, class S>
void copy_run(int64_t n, char* const* p, const int64_t* s) {
  constexpr int64_t out_size = sizeof(D);
  constexpr int64_t src_size = sizeof(S);
  D* out = reinterpret_cast<D*>(p[0]);
  const S* src = reinterpret_cast<const S*>(p[1]);
  if (s[0] == out_size && s[1] == src_size) {
    if constexpr (std::is_same_v<D, S>) {
      std::memcpy(out, src, static_cast<size_t>(n) * sizeof(D));
    } else {
      for (int64_t i = 0; i < n; ++i) out[i] = cast<D>(src[i]);
    }
  } else if (s[0] == out_size && s[1] == 0) {
    const D v = cast<D>(*src);
    for (int64_t i = 0; i < n; ++i) out[i] = v;
  } else {
    for (int64_t i = 0; i < n; ++i) at<D>(p[0], i * s[0]) = cast<D>(at<const S>(p[1], i * s[1]));
  }
}

template <class D, class S>
void copy_typed(const Dims& shape, uintptr_t out, const Dims& out_strides, uintptr_t src,
                const Dims& src_strides) {
  std::array<char*, 2> base{reinterpret_cast<char*>(out), reinterpret_cast<char*>(src)};
  Strided<2> nest;
  if (!nest.build(shape, {&out_strides, &src_strides}, {sizeof(D), sizeof(S)}, 0)) return;
  for_each_run(nest, base, copy_run<D, S>);
}

template <class Op>
bool binary_op(int dtype, const Dims& shape, uintptr_t out, const Dims& out_strides,
               uintptr_t a, const Dims& a_strides, uintptr_t b, const Dims& b_strides) {
  bool done = false;
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (Op::template supports<T>) {
      binary_typed<T, Op>(shape, out, out_strides, a, a_strides, b, b_strides);
      done = true;
    }
  });
  return done;
}

template <class Op>
bool unary_op(int dtype, const Dims& shape, uintptr_t out, const Dims& out_strides,
              uintptr_t a, const Dims& a_strides) {
  bool done = false;
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (Op::template supports<T>) {
      unary_typed<T, Op>(shape, out, out_strides, a, a_strides);
      done = true;
    }
  });
  return done;
}

// Shared admission checks: known dtypes, supported rank, an output that does not write one
// element twice, and no partial overlap between the output and an input.
bool admissible(const Dims& shape, int out_dtype, uintptr_t out, const Dims& out_strides,
                std::initializer_list<std::pair<uintptr_t, const Dims*>> inputs,
                int in_dtype) {
  const size_t out_size = itemsize(out_dtype);
  const size_t in_size = itemsize(in_dtype);
  if (out_size == 0 || in_size == 0 || shape.size() > static_cast<size_t>(kMaxDims)) {
    return false;
  }
  if (numel(shape) == 0) return true;
  if (has_zero_stride(shape, out_strides)) return false;
  for (const auto& [ptr, strides] : inputs) {
    if (unsafe_overlap(out, out_strides, out_size, ptr, *strides, in_size, shape)) return false;
  }
  return true;
}

}  // namespace

bool binary(BinaryOp op, int dtype, const Dims& shape, uintptr_t out, const Dims& out_strides,
            uintptr_t a, const Dims& a_strides, uintptr_t b, const Dims& b_strides) {
  check_layout(shape, {&out_strides, &a_strides, &b_strides});
  if (!admissible(shape, dtype, out, out_strides, {{a, &a_strides}, {b, &b_strides}}, dtype)) {
    return false;
  }
  if (numel(shape) == 0) return true;
  switch (op) {
#define PLAIT_BINARY_CASE(NAME, PRIM) \
  case BinaryOp::NAME:                \
    return binary_op<NAME>(dtype, shape, out, out_strides, a, a_strides, b, b_strides);
    PLAIT_CPU_BINARY_OPS(PLAIT_BINARY_CASE)
#undef PLAIT_BINARY_CASE
  }
  return false;
}

bool unary(UnaryOp op, int dtype, const Dims& shape, uintptr_t out, const Dims& out_strides,
           uintptr_t a, const Dims& a_strides) {
  check_layout(shape, {&out_strides, &a_strides});
  if (!admissible(shape, dtype, out, out_strides, {{a, &a_strides}}, dtype)) return false;
  if (numel(shape) == 0) return true;
  switch (op) {
#define PLAIT_UNARY_CASE(NAME, PRIM) \
  case UnaryOp::NAME:                \
    return unary_op<NAME>(dtype, shape, out, out_strides, a, a_strides);
    PLAIT_CPU_UNARY_OPS(PLAIT_UNARY_CASE)
#undef PLAIT_UNARY_CASE
  }
  return false;
}

bool fill_int(int dtype, const Dims& shape, uintptr_t out, const Dims& out_strides,
              int64_t value) {
  check_layout(shape, {&out_strides});
  if (!admissible(shape, dtype, out, out_strides, {}, dtype)) return false;
  return visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    fill_typed<T>(shape, out, out_strides, cast<T>(value));
  });
}

bool fill_float(int dtype, const Dims& shape, uintptr_t out, const Dims& out_strides,
                double value) {
  check_layout(shape, {&out_strides});
  if (!admissible(shape, dtype, out, out_strides, {}, dtype)) return false;
  return visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    fill_typed<T>(shape, out, out_strides, cast<T>(value));
  });
}

bool copy(int out_dtype, int src_dtype, const Dims& shape, uintptr_t out,
          const Dims& out_strides, uintptr_t src, const Dims& src_strides) {
  check_layout(shape, {&out_strides, &src_strides});
  if (!admissible(shape, out_dtype, out, out_strides, {{src, &src_strides}}, src_dtype)) {
    return false;
  }
  if (numel(shape) == 0) return true;
  if (out == src && out_dtype == src_dtype) return true;  // exact alias: nothing to move
  bool done = false;
  visit_dtype(out_dtype, [&](auto out_tag) {
    visit_dtype(src_dtype, [&](auto src_tag) {
      copy_typed<decltype(out_tag), decltype(src_tag)>(shape, out, out_strides, src,
                                                       src_strides);
      done = true;
    });
  });
  return done;
}

}  // namespace plait::cpu
