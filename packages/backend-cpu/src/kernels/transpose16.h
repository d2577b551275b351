// A 16 x 16 float32 transpose in AVX-512 registers, shared by the packed sgemm (a transposed
// B, a linear layer's weight, packed 16 columns at a time) and the FFT (contiguous signals
// moved in and out of the lane buffers): 16 whole-row loads and stores instead of one move
// per element. Only data moves, so values keep their bits.
#pragma once

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define PLAIT_HAS_TRANSPOSE16 1

namespace plait::cpu::simd512 {

// 128-bit lanes imm[1:0], imm[3:2] of a, then imm[5:4], imm[7:6] of b (the masked form with
// every lane selected: GCC 12's unmasked one merges into an uninitialised vector and warns).
template <int kImm>
__attribute__((target("avx512f"))) inline __m512 shuffle_lanes(__m512 a, __m512 b) {
  return _mm512_mask_shuffle_f32x4(a, 0xFFFF, a, b, kImm);
}

// r[i][j] becomes r[j][i]. Four steps, each interleaving pairs of registers at twice the
// width of the step before: 32-bit elements, 64-bit pairs, 128-bit lanes between row groups,
// then lanes again.
__attribute__((target("avx512f"))) inline void transpose16(__m512 (&r)[16]) {
  constexpr __mmask16 kAll = 0xFFFF;  // the unpacks' masked forms, as in shuffle_lanes
  __m512 t[16], u[16], v[16];
  // t[2i], t[2i+1]: rows 2i and 2i+1 interleaved, within each 128-bit lane.
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_mask_unpacklo_ps(r[i], kAll, r[i], r[i + 1]);
    t[i + 1] = _mm512_mask_unpackhi_ps(r[i], kAll, r[i], r[i + 1]);
  }
  // u[4g + q], lane l: column 4l + q of rows 4g .. 4g + 3.
  for (int g = 0; g < 16; g += 4) {
    u[g] = _mm512_shuffle_ps(t[g], t[g + 2], 0x44);
    u[g + 1] = _mm512_shuffle_ps(t[g], t[g + 2], 0xEE);
    u[g + 2] = _mm512_shuffle_ps(t[g + 1], t[g + 3], 0x44);
    u[g + 3] = _mm512_shuffle_ps(t[g + 1], t[g + 3], 0xEE);
  }
  // v[q] (groups 0, 1) and v[8 + q] (groups 2, 3): lanes 0 and 2 of each group; v[4 + q] and
  // v[12 + q]: lanes 1 and 3.
  for (int q = 0; q < 4; ++q) {
    v[q] = shuffle_lanes<0x88>(u[q], u[4 + q]);
    v[4 + q] = shuffle_lanes<0xDD>(u[q], u[4 + q]);
    v[8 + q] = shuffle_lanes<0x88>(u[8 + q], u[12 + q]);
    v[12 + q] = shuffle_lanes<0xDD>(u[8 + q], u[12 + q]);
  }
  // Column 4l + q of all 16 rows: lane l of every group, in group order.
  for (int q = 0; q < 4; ++q) {
    r[q] = shuffle_lanes<0x88>(v[q], v[8 + q]);
    r[8 + q] = shuffle_lanes<0xDD>(v[q], v[8 + q]);
    r[4 + q] = shuffle_lanes<0x88>(v[4 + q], v[12 + q]);
    r[12 + q] = shuffle_lanes<0xDD>(v[4 + q], v[12 + q]);
  }
}

}  // namespace plait::cpu::simd512

#endif
