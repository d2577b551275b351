// float32 transcendental functions written to vectorise: straight-line code (selects instead
// of branches, no libm call), so that a loop `out[i] = vexp(a[i])` inside a PLAIT_CLONES
// function becomes SIMD code for the running CPU.
//
// Accuracy (tested in tests/test_backend_cpu_elementwise.py against float64 results): within
// 2 ulp for exp, exp2, log, log2, log10, tanh, sigmoid, erf, and for sin and cos on |x| <= 8192
// (larger arguments are sent to float64 libm by the caller: see `kSinCosLimit`). Special
// values follow C99 Annex F: exp(-inf) = 0, exp(inf) = inf, log(0) = -inf, log(x < 0) = NaN, NaN in gives NaN out.
// Subnormal inputs and results are handled (the default floating-point environment is
// assumed: round to nearest even, no flush-to-zero).
//
// The polynomial coefficients are the classic minimax fits of the Cephes single-precision
// library (S. L. Moshier), but erf's (least-squares fits made for this file), evaluated in
// Horner form. GCC contracts a * b + c into FMA in the AVX2/AVX-512 clones, so results may
// differ in the last bit between CPUs (never between thread counts); the bounds hold for
// both. The exactness tricks (k * C1 in the reductions, round_magic) hold with or without
// contraction.
#pragma once

#include <cstdint>

#include "dtype.h"

namespace plait::cpu::vecmath {

// Rounds to the nearest integer (ties to even) for |x| < 2^22 by adding and removing 1.5 *
// 2^23; also returns the integer in the low bits of the intermediate's pattern.
inline float round_magic(float x, int32_t* n) {
  const float magic = 0x1.8p23f;
  const float t = x + magic;
  *n = static_cast<int32_t>(bit_cast<uint32_t>(t) - bit_cast<uint32_t>(magic));
  return t - magic;
}

// `cond ? a : b` on the bit patterns, which the compiler does not turn into a branch. (GCC
// moves float operations feeding a `?:` into its branches, then refuses to if-convert them
// because they could trap, and the loop does not vectorise.)
inline float select(bool cond, float a, float b) {
  const uint32_t mask = 0u - static_cast<uint32_t>(cond);
  return bit_cast<float>((bit_cast<uint32_t>(a) & mask) | (bit_cast<uint32_t>(b) & ~mask));
}

// 2^n for n in [-126, 127], built from its bits.
inline float pow2i(int32_t n) {
  return bit_cast<float>(static_cast<uint32_t>(n + 127) << 23);
}

// p(r) * 2^n for |r| <= ln2 / 2 and n in [-151, 129], p(r) ~ e^r.
inline float exp_scale(float r, int32_t n) {
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  // Two steps of about 2^(n/2), so that subnormal results round once and n = 128 does not
  // overflow the exponent field.
  const int32_t n1 = n >> 1;  // arithmetic shift: floor(n / 2) for negative n too
  return p * pow2i(n1) * pow2i(n - n1);
}

// e^x.
inline float exp(float x) {
  // Clamp so that n stays in range (the scaling then gives 0 or inf); NaN passes the
  // comparisons unchanged and is restored at the end.
  float xc = x > 89.0f ? 89.0f : x;
  xc = xc < -104.0f ? -104.0f : xc;
  int32_t n;
  const float k = round_magic(xc * 1.44269504088896341f, &n);
  // x - k ln2 in two parts (the first has few bits, so k * C1 is exact).
  float r = xc - k * 0.693359375f;
  r = r - k * -2.12194440e-4f;
  const float result = exp_scale(r, n);
  return select(x != x, x, result);
}

// 2^x.
inline float exp2(float x) {
  float xc = x > 129.0f ? 129.0f : x;
  xc = xc < -151.0f ? -151.0f : xc;
  int32_t n;
  const float k = round_magic(xc, &n);
  const float result = exp_scale((xc - k) * 0.693147180559945309f, n);  // xc - k is exact
  return select(x != x, x, result);
}

// log(x) = ln(m) + e ln2 with m in [sqrt(0.5), sqrt(2)): returns f = m - 1 and y with
// ln(m) = f + y, and e. Special inputs (<= 0, inf, NaN) are the callers'.
inline void log_reduce(float x, float* f_out, float* y_out, float* e_out) {
  // Subnormal inputs: scale into the normal range first.
  const bool tiny = x < 0x1p-126f;
  const float xs = select(tiny, x * 0x1p23f, x);
  const uint32_t bits = bit_cast<uint32_t>(xs);
  float e = static_cast<float>(static_cast<int32_t>((bits >> 23) & 0xFFu) - 126) -
            (tiny ? 23.0f : 0.0f);
  // Mantissa in [0.5, 1), then folded into [sqrt(0.5), sqrt(2)) - 1.
  const float m = bit_cast<float>((bits & 0x007FFFFFu) | 0x3F000000u);
  const bool low = m < 0.707106781186547524f;
  e = select(low, e - 1.0f, e);
  const float f = select(low, m + m - 1.0f, m - 1.0f);  // both exact
  const float z = f * f;
  float y = 7.0376836292e-2f;
  y = y * f - 1.1514610310e-1f;
  y = y * f + 1.1676998740e-1f;
  y = y * f - 1.2420140846e-1f;
  y = y * f + 1.4249322787e-1f;
  y = y * f - 1.6668057665e-1f;
  y = y * f + 2.0000714765e-1f;
  y = y * f - 2.4999993993e-1f;
  y = y * f + 3.3333331174e-1f;
  y = y * f * z;
  *f_out = f;
  *y_out = y - 0.5f * z;
  *e_out = e;
}

// The special cases of every logarithm: log(inf) = inf, log(+-0) = -inf, log(x < 0) = NaN.
inline float log_special(float x, float result) {
  const float inf = __builtin_inff();
  result = select(x == inf, inf, result);
  result = select(x == 0.0f, -inf, result);
  result = select(x < 0.0f, __builtin_nanf(""), result);
  return select(x != x, x, result);
}

// Natural logarithm.
inline float log(float x) {
  float f, y, e;
  log_reduce(x, &f, &y, &e);
  // e ln2 in two parts, the small one added first (Cephes' order).
  const float result = (f + (y + -2.12194440e-4f * e)) + 0.693359375f * e;
  return log_special(x, result);
}

// log2(x) = e + ln(m) log2(e): exact for powers of two.
inline float log2(float x) {
  float f, y, e;
  log_reduce(x, &f, &y, &e);
  const float result = (f + y) * 1.44269504088896341f + e;
  return log_special(x, result);
}

// log10(x) = ln(m) log10(e) + e log10(2), log10(2) in two parts.
inline float log10(float x) {
  float f, y, e;
  log_reduce(x, &f, &y, &e);
  const float result =
      ((f + y) * 0.434294481903251828f + e * 4.605039066518657e-6f) + e * 0.301025390625f;
  return log_special(x, result);
}

// Arguments beyond this go to float64 libm: the three-part reduction by pi/2 below is exact
// only while k * C1 fits in a float's mantissa.
inline constexpr float kSinCosLimit = 8192.0f;

// sin(r), cos(r) for |r| <= pi/4.
inline float sin_poly(float r) {
  const float z = r * r;
  const float s = ((-1.9515295891e-4f * z + 8.3321608736e-3f) * z - 1.6666654611e-1f) * z * r + r;
  return select(r == 0.0f, r, s);  // sin(+-0) = +-0 (the sum would give +0)
}
inline float cos_poly(float r) {
  const float z = r * r;
  return ((2.443315711809948e-5f * z - 1.388731625493765e-3f) * z + 4.166664568298827e-2f) *
             z * z -
         0.5f * z + 1.0f;
}

// sin(x) (quadrant_shift 0) or cos(x) = sin(x + pi/2) (quadrant_shift 1), for |x| <=
// kSinCosLimit.
inline float sin_cos(float x, uint32_t quadrant_shift) {
  int32_t n;
  const float k = round_magic(x * 0.636619772367581343f, &n);
  // x - k pi/2 in double with pi/2 in two parts (k * the first, 33 bits, is exact): the
  // result keeps its relative accuracy even next to a multiple of pi/2, where float
  // arithmetic would cancel.
  const double kd = k;
  const float r = static_cast<float>((static_cast<double>(x) - kd * 1.5707963267341256) -
                                     kd * 6.0771005065061922e-11);
  const uint32_t q = static_cast<uint32_t>(n) + quadrant_shift;
  const float s = sin_poly(r);
  const float c = cos_poly(r);
  float result = select((q & 1u) != 0, c, s);
  result = select((q & 2u) != 0, -result, result);
  return select(x - x != 0.0f, __builtin_nanf(""), result);  // inf and NaN give NaN
}

inline float sin(float x) { return sin_cos(x, 0); }
inline float cos(float x) { return sin_cos(x, 1); }

// tanh: an odd polynomial near 0, 1 - 2 / (e^2|x| + 1) elsewhere (which saturates to 1 once
// e^2|x| overflows).
inline float tanh(float x) {
  const float ax = x < 0.0f ? -x : x;
  const float z = x * x;
  const float small =
      ((((-5.70498872745e-3f * z + 2.06390887954e-2f) * z - 5.37397155531e-2f) * z +
        1.33314422036e-1f) *
           z -
       3.33332819422e-1f) *
          z * x +
      x;
  const float e = exp(ax + ax);
  float large = 1.0f - 2.0f / (e + 1.0f);
  large = select(x < 0.0f, -large, large);
  float result = select(ax < 0.625f, small, select(x != x, x, large));
  return select(x == 0.0f, x, result);  // tanh(+-0) = +-0
}

// sigmoid: 1 / (1 + e^-x) for x >= 0 and e^x / (1 + e^x) below, both from e = e^-|x| (one
// division): no overflow of e^-x for very negative x, whose results keep their subnormal
// digits instead of flushing to 0. Within 2 ulp (e's error is halved or less by the sum).
inline float sigmoid(float x) {
  const float ax = x < 0.0f ? -x : x;
  const float e = exp(-ax);  // NaN stays NaN
  return select(x < 0.0f, e, 1.0f) / (1.0f + e);
}

// erf: x (2/sqrt(pi) + z R(z)) with z = x^2 for |x| < 0.875; beyond, 1 - e^-z Q(|x|) with
// Q(x) = erfc(x) e^(x^2) a polynomial in x - mid on [0.875, 2) and [2, 3.9] (least-squares
// fits made for this file; |x| > 3.9 rounds to +-1 anyway). Within 2 ulp.
inline float erf(float x) {
  const float ax = x < 0.0f ? -x : x;
  const float z = x * x;
  float r = 9.140156180e-05f;
  r = r * z - 8.313467260e-04f;
  r = r * z + 5.215097684e-03f;
  r = r * z - 2.686466463e-02f;
  r = r * z + 1.128378287e-01f;
  r = r * z - 3.761263788e-01f;
  // 2/sqrt(pi) in two parts: the float constant alone is 0.9 ulp off.
  const float small = x * 1.128379226e+00f + (x * -5.863538277e-08f + x * (z * r));
  const bool low = ax < 2.0f;
  const float t = (ax < 3.9f ? ax : 3.9f) - (low ? 1.4375f : 2.95f);
  float q = low ? 2.839362132e-04f : 6.315052815e-06f;
  q = q * t + (low ? -8.502022247e-04f : -2.618471990e-05f);
  q = q * t + (low ? 2.200171119e-03f : 9.102410695e-05f);
  q = q * t + (low ? -5.895063747e-03f : -3.482536704e-04f);
  q = q * t + (low ? 1.510163117e-02f : 1.307285856e-03f);
  q = q * t + (low ? -3.648720309e-02f : -4.732875619e-03f);
  q = q * t + (low ? 8.265215904e-02f : 1.657506078e-02f);
  q = q * t + (low ? -1.735411435e-01f : -5.599487945e-02f);
  q = q * t + (low ? 3.321175575e-01f : 1.817600429e-01f);
  float large = 1.0f - exp(-z) * q;
  large = select(x < 0.0f, -large, large);
  float result = select(ax < 0.875f, small, large);
  result = select(x == 0.0f, x, result);  // erf(+-0) = +-0
  return select(x != x, x, result);
}

// erf within 6 ulp (3.2e-7 absolute) and no exponential: x P(z) / Q(z), z = x^2, on
// |x| <= 3.92 (a rational least-squares fit made for this file), then +-1. GELU's float32
// path uses it, where PyTorch's own GELU kernel reads an erf of 1.5e-7 absolute error; it
// runs in about a third of erf()'s time.
inline float erf_rational(float x) {
  const float xc = x > 3.92f ? 3.92f : (x < -3.92f ? -3.92f : x);
  const float z = xc * xc;
  float p = 2.049900331e-06f;
  p = p * z + 2.848127042e-04f;
  p = p * z + 3.763988847e-03f;
  p = p * z + 5.274351686e-02f;
  p = p * z + 1.903731823e-01f;
  p = p * z + 1.128379107e+00f;
  float q = 3.808611291e-05f;
  q = q * z + 1.162079629e-03f;
  q = q * z + 1.496595796e-02f;
  q = q * z + 1.140946299e-01f;
  q = q * z + 5.020465851e-01f;
  q = q * z + 1.0f;
  const float r = xc * (p / q);
  const float clamped = r > 1.0f ? 1.0f : (r < -1.0f ? -1.0f : r);
  return select(x != x, x, clamped);
}

}  // namespace plait::cpu::vecmath
