// Row helpers shared by the fused softmax (fused_norm.cpp) and the fused cross-entropy
// (loss.cpp): exponentials in the compute type, with a cheaper form for arguments known to be
// in range, and the extremes of a contiguous row. T is the storage type, C<T> =
// ComputeType<T> the arithmetic type (float for float16 / bfloat16).
//
// Everything here has internal linkage (an unnamed namespace): each including file gets its
// own PLAIT_CLONES copies, as when they were written out in both.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "dtype.h"
#include "simd.h"
#include "vecmath.h"

namespace plait::cpu {
namespace {  // NOLINT(google-build-namespaces): internal linkage is the point

inline double exp_c(double x) { return std::exp(x); }
inline float exp_c(float x) { return vecmath::exp(x); }  // vectorisable, within 2 ulp

// Bounds of the arguments for which exp_in_range gives vecmath::exp's result.
constexpr float kExpLow = -104.0f;
constexpr float kExpHigh = 89.0f;

// vecmath::exp(x) for x in [kExpLow, kExpHigh] (and NaN, as a NaN): the same steps without its
// clamps to that range and its NaN select, which change nothing there, so the results are
// bitwise the same. A softmax row whose shifted values all lie in the range (every row whose
// spread is under 104) takes this: a fifth fewer instructions per element.
inline float exp_in_range(float x) {
  int32_t n;
  const float k = vecmath::round_magic(x * 1.44269504088896341f, &n);
  float r = x - k * 0.693359375f;
  r = r - k * -2.12194440e-4f;
  return vecmath::exp_scale(r, n);
}

// exp_c, or exp_in_range when the caller knows the argument is in range (float only).
template <bool kInRange, class Cv>
inline Cv exp_t(Cv x) {
  if constexpr (kInRange && std::is_same_v<Cv, float>) {
    return exp_in_range(x);
  } else {
    return exp_c(x);
  }
}

template <class T>
using C = ComputeType<T>;

// The largest and smallest value of a row (NaN ignored; -inf and +inf for an empty row).
template <class Cv>
struct Range {
  Cv max;
  Cv min;
};

// The extremes take 32 lanes each (two AVX-512 vectors of float): with one vector, each max
// waits for the previous one, and that latency chain cost as much as the exponentials' pass.
// The result does not depend on the lane count (a maximum is exact).
constexpr int kRangeLanes = 32;

template <class T>
PLAIT_CLONES Range<C<T>> row_range(const T* __restrict x, int64_t n) {
  using Cv = C<T>;
  constexpr Cv kInf = std::numeric_limits<Cv>::infinity();
  Range<Cv> r{-kInf, kInf};
  if (n < kRangeLanes) {  // a short row (a small model's softmax): no lanes to fill and fold
    for (int64_t i = 0; i < n; ++i) {
      const Cv v = load(x[i]);
      r.max = v > r.max ? v : r.max;
      r.min = v < r.min ? v : r.min;
    }
    return r;
  }
  Cv hi[kRangeLanes];
  Cv lo[kRangeLanes];
  for (int j = 0; j < kRangeLanes; ++j) {
    hi[j] = -kInf;
    lo[j] = kInf;
  }
  int64_t i = 0;
  for (; i + kRangeLanes <= n; i += kRangeLanes) {
    for (int j = 0; j < kRangeLanes; ++j) {
      const Cv v = load(x[i + j]);
      hi[j] = v > hi[j] ? v : hi[j];
      lo[j] = v < lo[j] ? v : lo[j];
    }
  }
  for (; i < n; ++i) {
    const Cv v = load(x[i]);
    r.max = v > r.max ? v : r.max;
    r.min = v < r.min ? v : r.min;
  }
  for (int j = 0; j < kRangeLanes; ++j) {
    r.max = hi[j] > r.max ? hi[j] : r.max;
    r.min = lo[j] < r.min ? lo[j] : r.min;
  }
  return r;
}

}  // namespace
}  // namespace plait::cpu
