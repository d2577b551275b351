// An 8 x 8 float32 transpose in AVX registers (transpose16.h's counterpart), shared by the
// AVX2 sgemm (a transposed B packed 8 columns at a time) and the FFT on CPUs without AVX-512
// (contiguous signals moved in and out of its lane buffers). Only data moves, so values keep
// their bits.
#pragma once

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define PLAIT_HAS_TRANSPOSE8 1

namespace plait::cpu::simd256 {

// r[i][j] becomes r[j][i]. Three steps: rows interleaved in pairs of 32-bit elements, then
// 64-bit pairs (columns j and j + 4 of four rows in the two 128-bit lanes), then the lanes of
// the two row halves exchanged.
__attribute__((target("avx"))) inline void transpose8(__m256 (&r)[8]) {
  __m256 t[8], u[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  // u[4h + q]: columns q (low lane) and q + 4 (high lane) of rows 4h .. 4h + 3
  for (int h = 0; h < 8; h += 4) {
    u[h] = _mm256_shuffle_ps(t[h], t[h + 2], 0x44);
    u[h + 1] = _mm256_shuffle_ps(t[h], t[h + 2], 0xEE);
    u[h + 2] = _mm256_shuffle_ps(t[h + 1], t[h + 3], 0x44);
    u[h + 3] = _mm256_shuffle_ps(t[h + 1], t[h + 3], 0xEE);
  }
  for (int q = 0; q < 4; ++q) {
    r[q] = _mm256_permute2f128_ps(u[q], u[4 + q], 0x20);
    r[4 + q] = _mm256_permute2f128_ps(u[q], u[4 + q], 0x31);
  }
}

}  // namespace plait::cpu::simd256

#endif
