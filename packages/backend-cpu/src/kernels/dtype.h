// The dtypes the native CPU kernels know, and the casts between them.
//
// The numeric codes are part of the Python <-> C++ contract: `_C.DTYPES` lists the names in
// code order and the Python wrappers map torch dtypes to codes through it. A dtype missing
// here (float16, bfloat16, complex) is handled by the core's reference kernel instead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace plait::cpu {

// One row per dtype: code, C++ type, name. Adding a dtype is adding a row.
#define PLAIT_CPU_DTYPES(X) \
  X(0, bool, "bool")        \
  X(1, uint8_t, "uint8")    \
  X(2, int8_t, "int8")      \
  X(3, int16_t, "int16")    \
  X(4, int32_t, "int32")    \
  X(5, int64_t, "int64")    \
  X(6, float, "float32")    \
  X(7, double, "float64")

inline constexpr int kNumDTypes = 8;

// Calls `f(T{})` with the C++ type of dtype `code`; returns false for an unknown code.
template <class F>
bool visit_dtype(int code, F&& f) {
  switch (code) {
#define PLAIT_VISIT_CASE(CODE, TYPE, NAME) \
  case CODE:                               \
    f(TYPE{});                             \
    return true;
    PLAIT_CPU_DTYPES(PLAIT_VISIT_CASE)
#undef PLAIT_VISIT_CASE
    default:
      return false;
  }
}

// Bytes per element of dtype `code`, 0 for an unknown code.
inline size_t itemsize(int code) {
  size_t size = 0;
  visit_dtype(code, [&](auto tag) { size = sizeof(tag); });
  return size;
}

// The code of C++ type T, or -1.
template <class T>
constexpr int dtype_code() {
#define PLAIT_CODE_OF(CODE, TYPE, NAME) \
  if constexpr (std::is_same_v<T, TYPE>) return CODE; \
  else
  PLAIT_CPU_DTYPES(PLAIT_CODE_OF)
#undef PLAIT_CODE_OF
  return -1;
}

// Integer arithmetic wraps around (as in PyTorch) instead of overflowing, which C++ leaves
// undefined for signed types: compute in an unsigned type at least as wide as `unsigned int`
// (narrower types would be promoted to signed int and could still overflow in a product).
template <class T>
using WrapType = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned,
                                    std::make_unsigned_t<T>>;

// Converts one value the way `Tensor.to(dtype)` does: to bool is `!= 0`; float to integer
// truncates toward zero. Float values outside int64's range (and NaN), where C++ leaves the
// conversion undefined, become int64's minimum, as x86 hardware and numpy give; every float to
// integer conversion goes through int64 and then wraps to the narrower type.
template <class D, class S>
inline D cast(S v) {
  if constexpr (std::is_same_v<D, S>) {
    return v;
  } else if constexpr (std::is_same_v<D, bool>) {
    return v != S(0);
  } else if constexpr (std::is_floating_point_v<S> && std::is_integral_v<D>) {
    constexpr S lo = S(-9223372036854775808.0);  // -2^63, exact in float and double
    constexpr S hi = S(9223372036854775808.0);   // 2^63
    const int64_t i = (v >= lo && v < hi) ? static_cast<int64_t>(v) : INT64_MIN;
    return static_cast<D>(i);
  } else {
    return static_cast<D>(v);
  }
}

}  // namespace plait::cpu
