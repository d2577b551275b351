// Square roots over arrays, vectorised whatever the math flags (shared by the unary sqrt and
// rsqrt kernels and binary.cpp's hypot).
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "simd.h"

namespace plait::cpu {

// sqrt over arrays with the SSE2 instructions (every x86-64 has them; the ISA clones encode
// them with VEX): std::sqrt may set errno for a negative argument, which keeps the compiler
// from vectorising a loop of it. `Reciprocal` divides 1 by the root.
template <bool Reciprocal, class C>
PLAIT_CLONES void sqrt_array(C* out, const C* a, int64_t n) {
  int64_t i = 0;
#if defined(__SSE2__)
  if constexpr (std::is_same_v<C, float>) {
    for (; i + 4 <= n; i += 4) {
      __m128 r = _mm_sqrt_ps(_mm_loadu_ps(a + i));
      if constexpr (Reciprocal) r = _mm_div_ps(_mm_set1_ps(1.0f), r);
      _mm_storeu_ps(out + i, r);
    }
  } else {
    for (; i + 2 <= n; i += 2) {
      __m128d r = _mm_sqrt_pd(_mm_loadu_pd(a + i));
      if constexpr (Reciprocal) r = _mm_div_pd(_mm_set1_pd(1.0), r);
      _mm_storeu_pd(out + i, r);
    }
  }
#endif
  for (; i < n; ++i) out[i] = Reciprocal ? C(1) / std::sqrt(a[i]) : std::sqrt(a[i]);
}

}  // namespace plait::cpu
