// The dtypes the native CPU kernels know, and the casts between them.
//
// The numeric codes are part of the Python <-> C++ contract: `_C.DTYPES` lists the names in
// code order and the Python wrappers map torch dtypes to codes through it. A dtype missing
// here (complex) is handled by the core's reference kernel instead.
//
// float16 and bfloat16 are 16-bit storage types (`Half`, `BFloat16`): kernels load them into
// float, compute in float and round to nearest even on store (the primitives' contract).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace plait::cpu {

// The array of T at `address`, a tensor's data pointer as the bindings pass it (an integer).
template <class T>
T* ptr(uintptr_t address) {
  return reinterpret_cast<T*>(address);
}

// Bit casts between same-sized types (std::bit_cast is C++20); memcpy is the defined way and
// compiles to a register move.
template <class To, class From>
inline To bit_cast(const From& from) {
  static_assert(sizeof(To) == sizeof(From), "bit_cast between types of different sizes");
  To to;
  std::memcpy(&to, &from, sizeof(To));
  return to;
}

// IEEE binary16 <-> float. Branch-free (a select per element) so that loops over them
// vectorise; both directions assume the default floating-point environment (round to
// nearest even, no flush-to-zero).
inline float half_bits_to_float(uint16_t h) {
  const uint32_t w = static_cast<uint32_t>(h) << 16;
  const uint32_t sign = w & 0x80000000u;
  const uint32_t two_w = w + w;  // exponent and mantissa, sign shifted out
  // Normal numbers, inf and NaN: move exponent and mantissa into float position and add 224
  // to the exponent (half's all-ones exponent 31 becomes float's 255: inf and NaN stay inf
  // and NaN); the exact product with 2^-112 then turns the remaining bias into half's 15.
  const float normalized = bit_cast<float>((two_w >> 4) + (uint32_t{0xE0} << 23)) * 0x1p-112f;
  // Subnormals: place the mantissa in the low bits of a float in [0.5, 1) and subtract 0.5,
  // which is exact and gives mantissa * 2^-24.
  const float denormalized = bit_cast<float>((two_w >> 17) | (uint32_t{126} << 23)) - 0.5f;
  const uint32_t bits = two_w < (uint32_t{1} << 27) ? bit_cast<uint32_t>(denormalized)
                                                     : bit_cast<uint32_t>(normalized);
  return bit_cast<float>(sign | bits);
}

inline uint16_t float_to_half_bits(float f) {
  // Scaling |f| up by 2^112 and back down by 2^-110 overflows exactly the values that round
  // to infinity and leaves the others scaled by 4; adding a power of two chosen from f's
  // exponent then makes the float adder round the mantissa to 10 bits (or to the subnormal
  // grid), to nearest even.
  const float abs_f = bit_cast<float>(bit_cast<uint32_t>(f) & 0x7FFFFFFFu);
  float base = (abs_f * 0x1p112f) * 0x1p-110f;
  const uint32_t w = bit_cast<uint32_t>(f);
  const uint32_t shl1_w = w + w;
  const uint32_t sign = w & 0x80000000u;
  uint32_t bias = shl1_w & 0xFF000000u;
  if (bias < 0x71000000u) bias = 0x71000000u;
  base = bit_cast<float>((bias >> 1) + 0x07800000u) + base;
  const uint32_t bits = bit_cast<uint32_t>(base);
  const uint32_t exp_bits = (bits >> 13) & 0x00007C00u;
  const uint32_t mantissa_bits = bits & 0x00000FFFu;
  const uint32_t nonsign = exp_bits + mantissa_bits;
  // NaN stays NaN (the quiet NaN 0x7E00 with f's sign).
  return static_cast<uint16_t>((sign >> 16) | (shl1_w > 0xFF000000u ? 0x7E00u : nonsign));
}

// bfloat16 is the top half of a float: widening is a shift; narrowing rounds the dropped
// 16 bits to nearest even, and gives every NaN as the quiet NaN 0x7FC0 (as PyTorch does;
// rounding could otherwise carry a NaN into inf).
inline float bfloat16_bits_to_float(uint16_t h) {
  return bit_cast<float>(static_cast<uint32_t>(h) << 16);
}

inline uint16_t float_to_bfloat16_bits(float f) {
  const uint32_t w = bit_cast<uint32_t>(f);
  const uint32_t rounded = (w + 0x7FFFu + ((w >> 16) & 1u)) >> 16;
  return static_cast<uint16_t>((w & 0x7FFFFFFFu) > 0x7F800000u ? 0x7FC0u : rounded);
}

// 16-bit storage types. Aggregates of their bits (so arrays of them are plain memory);
// `float(x)` widens, `from_float` rounds to nearest even. No arithmetic on purpose: kernels
// compute in float.
// `static_cast<T>(x)` to any arithmetic T is `cast<T>(float(x))` (defined below).
struct Half {
  uint16_t bits;
  template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  explicit operator T() const;
  static Half from_float(float f) { return Half{float_to_half_bits(f)}; }
};

struct BFloat16 {
  uint16_t bits;
  template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  explicit operator T() const;
  static BFloat16 from_float(float f) { return BFloat16{float_to_bfloat16_bits(f)}; }
};

// True for Half and BFloat16 (stored in 16 bits, computed in float).
template <class T>
inline constexpr bool is_reduced_float_v =
    std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// True for every floating dtype: float, double, Half, BFloat16.
template <class T>
inline constexpr bool is_floating_v = std::is_floating_point_v<T> || is_reduced_float_v<T>;

// The type arithmetic on T computes in: float for the 16-bit floats, T otherwise.
template <class T>
using ComputeType = std::conditional_t<is_reduced_float_v<T>, float, T>;

// A value of T in its compute type (exact), and a compute-type value stored back as T (the
// 16-bit floats round to nearest even; other types are unchanged).
template <class T>
inline ComputeType<T> load(T x) {
  if constexpr (is_reduced_float_v<T>) {
    return static_cast<float>(x);
  } else {
    return x;
  }
}

template <class T>
inline T store_as(ComputeType<T> v) {
  if constexpr (is_reduced_float_v<T>) {
    return T::from_float(v);
  } else {
    return v;
  }
}

// One row per dtype: code, C++ type, name. Adding a dtype is adding a row.
#define PLAIT_CPU_DTYPES(X) \
  X(0, bool, "bool")        \
  X(1, uint8_t, "uint8")    \
  X(2, int8_t, "int8")      \
  X(3, int16_t, "int16")    \
  X(4, int32_t, "int32")    \
  X(5, int64_t, "int64")    \
  X(6, float, "float32")    \
  X(7, double, "float64")    \
  X(8, Half, "float16")      \
  X(9, BFloat16, "bfloat16")

inline constexpr int kNumDTypes = 10;

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

// Calls `f(T{})` for the floating dtypes (float, double, Half, BFloat16); false for the
// others (the fused kernels, which leave those to core's composites).
template <class F>
bool visit_floating(int code, F&& f) {
  bool ok = false;
  visit_dtype(code, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_floating_v<T>) {
      f(tag);
      ok = true;
    }
  });
  return ok;
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
// integer conversion goes through int64 and then wraps to the narrower type. float16 and
// bfloat16 convert through float (as PyTorch does), rounding to nearest even.
template <class D, class S>
inline D cast(S v) {
  if constexpr (std::is_same_v<D, S>) {
    return v;
  } else if constexpr (std::is_same_v<S, Half>) {
    return cast<D>(half_bits_to_float(v.bits));
  } else if constexpr (std::is_same_v<S, BFloat16>) {
    return cast<D>(bfloat16_bits_to_float(v.bits));
  } else if constexpr (is_reduced_float_v<D>) {
    return D::from_float(cast<float>(v));
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

template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int>>
Half::operator T() const {
  return cast<T>(*this);
}

template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int>>
BFloat16::operator T() const {
  return cast<T>(*this);
}

}  // namespace plait::cpu
