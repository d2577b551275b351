// Batched one-dimensional FFTs (fft.h): Stockham's self-sorting algorithm, one signal per
// vector lane.
//
// A group of kLanes signals is gathered into two planar buffers (real parts, imaginary parts)
// where element e of lane l sits at [e * kLanes + l]; every butterfly is then a loop over the
// lanes, which the compiler turns into vector arithmetic (the loops are PLAIT_CLONES functions,
// so AVX-512 where the CPU has it). A stage of radix p over the remaining length n' and the
// stride s of the finished stages reads element q + s * (j + r * m) (m = n' / p, r < p) and writes
// q + s * (p * j + k) the k-th output of the p-point DFT times the twiddle e^{-+2 pi i jk / n'}:
// after the last stage the buffer holds the spectrum in natural order, with no bit reversal.
#include "fft.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <type_traits>
#include <utility>

#include "parallel.h"
#include "simd.h"
#include "transpose16.h"
#include "transpose8.h"

namespace plait::cpu {
namespace {

// Signals per group: one 64-byte vector of each precision (two or four narrower vectors on
// CPUs without AVX-512, which the compiler splits into).
template <class T>
inline constexpr int kLanes = 64 / static_cast<int>(sizeof(T));

// Where element e of a group lives in a buffer, in units of T: e's lane vector, rotated within
// its block of 64 by 9 per block. A stage reads and writes p streams n' / p elements apart;
// at power-of-two distances unrotated streams fall into the same few L1 sets and evict each
// other (the kernel ran 10x slower). The rotation moves streams 64 * 2^k elements apart
// (k < 5) onto different sets; it is a bijection, so buffers keep n vectors.
template <class T>
__attribute__((always_inline)) inline int64_t slot(int64_t e) {
  const int64_t block = e & ~int64_t{63};
  return (block | ((e + (e >> 6) * 9) & 63)) * kLanes<T>;
}

constexpr double kTwoPi = 6.283185307179586476925286766559;

// Radices in the order the stages take them: 4 first (fewest stages), the odd ones last.
constexpr int kRadices[] = {4, 2, 3, 5};

std::vector<int> factorize(int64_t n) {
  std::vector<int> radices;
  for (int p : kRadices) {
    while (n % p == 0) {
      radices.push_back(p);
      n /= p;
    }
  }
  if (n != 1) radices.clear();
  return radices;
}

// Unit complex numbers e^{i angle}, computed in double and kept in both precisions.
struct Roots {
  std::vector<double> re, im;
  std::vector<float> re_f, im_f;

  void push(double angle) {
    re.push_back(std::cos(angle));
    im.push_back(std::sin(angle));
    re_f.push_back(static_cast<float>(re.back()));
    im_f.push_back(static_cast<float>(im.back()));
  }

  template <class T>
  const T* real() const {
    if constexpr (std::is_same_v<T, float>) {
      return re_f.data();
    } else {
      return re.data();
    }
  }

  template <class T>
  const T* imag() const {
    if constexpr (std::is_same_v<T, float>) {
      return im_f.data();
    } else {
      return im.data();
    }
  }
};

// One stage: its radix, the lengths that index it and its twiddles w^(jk), w = e^{sign 2 pi i
// / n'}, for j < m and 1 <= k < p at [j * (p - 1) + k - 1].
struct Stage {
  int radix;
  int64_t m;  // n' / p
  int64_t s;  // the product of the earlier stages' radices
  Roots twiddles;
};

struct Plan {
  int64_t n;
  std::vector<Stage> stages;
  // the p-point DFT's roots e^{sign 2 pi i r / p} for the generic (radix-5) butterfly
  double root_re[5][5], root_im[5][5];
  // e^{-2 pi i k / 2n} for k <= n: a real signal of length 2n is transformed as n complex
  // values (even samples real, odd imaginary) and unpacked with these
  Roots unpack;
};

std::shared_ptr<const Plan> make_plan(int64_t n, bool forward, const std::vector<int>& radices) {
  auto plan = std::make_shared<Plan>();
  plan->n = n;
  const double sign = forward ? -1.0 : 1.0;
  int64_t remaining = n;
  int64_t stride = 1;
  for (int p : radices) {
    Stage st;
    st.radix = p;
    st.m = remaining / p;
    st.s = stride;
    for (int64_t j = 0; j < st.m; ++j) {
      for (int k = 1; k < p; ++k) {
        // (j * k) mod n' keeps the angle small and exact for large lengths
        const double angle = sign * kTwoPi * static_cast<double>((j * k) % remaining) /
                             static_cast<double>(remaining);
        st.twiddles.push(angle);  // at j * (p - 1) + k - 1
      }
    }
    plan->stages.push_back(std::move(st));
    remaining /= p;
    stride *= p;
  }
  for (int64_t k = 0; k <= n; ++k) {
    plan->unpack.push(-kTwoPi * static_cast<double>(k) / static_cast<double>(2 * n));
  }
  for (int r = 0; r < 5; ++r) {
    for (int k = 0; k < 5; ++k) {
      const double angle = sign * kTwoPi * static_cast<double>((r * k) % 5) / 5.0;
      plan->root_re[r][k] = std::cos(angle);
      plan->root_im[r][k] = std::sin(angle);
    }
  }
  return plan;
}

// Plans are kept per (length, direction): building one computes n trigonometric values.
std::shared_ptr<const Plan> plan_for(int64_t n, bool forward) {
  static std::mutex mutex;
  static std::map<std::pair<int64_t, bool>, std::shared_ptr<const Plan>> plans;
  std::lock_guard<std::mutex> lock(mutex);
  auto& cached = plans[{n, forward}];
  if (!cached) cached = make_plan(n, forward, factorize(n));
  return cached;
}

// One lane vector: a group's element, kLanes signals wide. GCC splits it into the clone's
// registers (one on AVX-512, two or four narrower ones elsewhere); every operation on it is
// plain arithmetic, never a compare-select (simd.h).
template <class T>
struct LaneVector {
  typedef T type __attribute__((vector_size(64)));
};
template <class T>
using Vec = typename LaneVector<T>::type;

// Unaligned loads and stores; by reference, since a 64-byte vector passed or returned by
// value has a different ABI in each clone.
template <class T>
__attribute__((always_inline)) inline void load(Vec<T>& v, const T* p) {
  std::memcpy(&v, p, sizeof(v));
}

template <class T>
__attribute__((always_inline)) inline void store(T* p, const Vec<T>& v) {
  std::memcpy(p, &v, sizeof(v));
}

// (yr, yi) = (br, bi) * (wr + i wi) at element `at` of the output buffers.
template <class T>
__attribute__((always_inline)) inline void store_twiddled(T* yr, T* yi, int64_t at,
                                                          const Vec<T>& br, const Vec<T>& bi,
                                                          T wr, T wi) {
  store(yr + at, br * wr - bi * wi);
  store(yi + at, br * wi + bi * wr);
}

// The P inputs of a butterfly: elements a0 + r * step of the group, r < P.
template <int P, class T>
__attribute__((always_inline)) inline void load_inputs(Vec<T> (&re)[P], Vec<T> (&im)[P],
                                                       const T* xr, const T* xi, int64_t a0,
                                                       int64_t step) {
  for (int r = 0; r < P; ++r) {
    load(re[r], xr + slot<T>(a0 + r * step));
    load(im[r], xi + slot<T>(a0 + r * step));
  }
}

template <class T>
PLAIT_CLONES void radix2(const T* xr, const T* xi, T* yr, T* yi, int64_t m, int64_t s,
                         const T* twr, const T* twi) {
  for (int64_t j = 0; j < m; ++j) {
    const T wr = twr[j], wi = twi[j];
    for (int64_t q = 0; q < s; ++q) {
      const int64_t a0 = slot<T>(q + s * j), a1 = slot<T>(q + s * (j + m));
      const int64_t y0 = slot<T>(q + s * 2 * j), y1 = slot<T>(q + s * (2 * j + 1));
      Vec<T> x0r, x0i;
      load(x0r, xr + a0);
      load(x0i, xi + a0);
      Vec<T> x1r, x1i;
      load(x1r, xr + a1);
      load(x1i, xi + a1);
      store(yr + y0, x0r + x1r);
      store(yi + y0, x0i + x1i);
      store_twiddled(yr, yi, y1, x0r - x1r, x0i - x1i, wr, wi);
    }
  }
}

template <class T>
PLAIT_CLONES void radix4(const T* xr, const T* xi, T* yr, T* yi, int64_t m, int64_t s,
                         const T* twr, const T* twi, bool forward) {
  // b1 = t1 - i t3 (forward) or t1 + i t3 (inverse): -i (x + i y) = y - i x
  const T sign = forward ? T(1) : T(-1);
  for (int64_t j = 0; j < m; ++j) {
    const T w1r = twr[3 * j], w1i = twi[3 * j];
    const T w2r = twr[3 * j + 1], w2i = twi[3 * j + 1];
    const T w3r = twr[3 * j + 2], w3i = twi[3 * j + 2];
    for (int64_t q = 0; q < s; ++q) {
      Vec<T> ar[4], ai[4];
      load_inputs<4>(ar, ai, xr, xi, q + s * j, s * m);
      const Vec<T> t0r = ar[0] + ar[2], t0i = ai[0] + ai[2];
      const Vec<T> t1r = ar[0] - ar[2], t1i = ai[0] - ai[2];
      const Vec<T> t2r = ar[1] + ar[3], t2i = ai[1] + ai[3];
      const Vec<T> t3r = (ar[1] - ar[3]) * sign, t3i = (ai[1] - ai[3]) * sign;
      const int64_t y0 = q + s * 4 * j, step_out = s;
      store(yr + slot<T>(y0), t0r + t2r);
      store(yi + slot<T>(y0), t0i + t2i);
      store_twiddled(yr, yi, slot<T>(y0 + step_out), t1r + t3i, t1i - t3r, w1r, w1i);
      store_twiddled(yr, yi, slot<T>(y0 + 2 * step_out), t0r - t2r, t0i - t2i, w2r, w2i);
      store_twiddled(yr, yi, slot<T>(y0 + 3 * step_out), t1r - t3i, t1i + t3r, w3r, w3i);
    }
  }
}

template <class T>
PLAIT_CLONES void radix3(const T* xr, const T* xi, T* yr, T* yi, int64_t m, int64_t s,
                         const T* twr, const T* twi, bool forward) {
  const T half = T(-0.5);
  // the imaginary part of e^{sign 2 pi i / 3}
  const T root = static_cast<T>((forward ? -1.0 : 1.0) * 0.86602540378443864676372317075294);
  for (int64_t j = 0; j < m; ++j) {
    const T w1r = twr[2 * j], w1i = twi[2 * j];
    const T w2r = twr[2 * j + 1], w2i = twi[2 * j + 1];
    for (int64_t q = 0; q < s; ++q) {
      Vec<T> ar[3], ai[3];
      load_inputs<3>(ar, ai, xr, xi, q + s * j, s * m);
      const Vec<T> tr = ar[1] + ar[2], ti = ai[1] + ai[2];
      const Vec<T> dr = (ar[1] - ar[2]) * root, di = (ai[1] - ai[2]) * root;
      const Vec<T> cr = ar[0] + tr * half, ci = ai[0] + ti * half;
      const int64_t y0 = q + s * 3 * j, step_out = s;
      store(yr + slot<T>(y0), ar[0] + tr);
      store(yi + slot<T>(y0), ai[0] + ti);
      // b1 = c + i root d, b2 = c - i root d
      store_twiddled(yr, yi, slot<T>(y0 + step_out), cr - di, ci + dr, w1r, w1i);
      store_twiddled(yr, yi, slot<T>(y0 + 2 * step_out), cr + di, ci - dr, w2r, w2i);
    }
  }
}

// The radix-5 stage: the 5-point DFT written out as sums over the roots.
template <class T>
PLAIT_CLONES void radix5(const T* xr, const T* xi, T* yr, T* yi, int64_t m, int64_t s,
                         const T* twr, const T* twi, const double (*root_re)[5],
                         const double (*root_im)[5]) {
  T cr[5][5], ci[5][5];
  for (int r = 0; r < 5; ++r) {
    for (int k = 0; k < 5; ++k) {
      cr[r][k] = static_cast<T>(root_re[r][k]);
      ci[r][k] = static_cast<T>(root_im[r][k]);
    }
  }
  for (int64_t j = 0; j < m; ++j) {
    for (int64_t q = 0; q < s; ++q) {
      Vec<T> ar[5], ai[5];
      load_inputs<5>(ar, ai, xr, xi, q + s * j, s * m);
      const int64_t y0 = q + s * 5 * j, step_out = s;
      for (int k = 0; k < 5; ++k) {
        Vec<T> br = ar[0], bi = ai[0];
        for (int r = 1; r < 5; ++r) {
          br += ar[r] * cr[r][k] - ai[r] * ci[r][k];
          bi += ar[r] * ci[r][k] + ai[r] * cr[r][k];
        }
        if (k == 0) {
          store(yr + slot<T>(y0), br);
          store(yi + slot<T>(y0), bi);
        } else {
          store_twiddled(yr, yi, slot<T>(y0 + k * step_out), br, bi, twr[4 * j + k - 1],
                         twi[4 * j + k - 1]);
        }
      }
    }
  }
}

// Gathers and scatters between the signals' strided memory and a group's buffers: element t
// of every lane at once, so the lane loop becomes one vector gather or scatter.
template <class T>
PLAIT_CLONES void gather_real(T* re, const T* in, const int64_t* offsets, int64_t n,
                              int64_t stride) {
  constexpr int L = kLanes<T>;
  for (int64_t t = 0; t < n; ++t) {
    T* dst = re + slot<T>(t);
    const T* src = in + t * stride;
    for (int l = 0; l < L; ++l) dst[l] = src[offsets[l]];
  }
}

template <class T>
PLAIT_CLONES void gather_complex(T* re, T* im, const T* in, const int64_t* offsets,
                                 int64_t n, int64_t stride, int64_t first = 0) {
  constexpr int L = kLanes<T>;
  for (int64_t t = first; t < n; ++t) {
    T* dst_re = re + slot<T>(t);
    T* dst_im = im + slot<T>(t);
    const T* src = in + 2 * t * stride;
    for (int l = 0; l < L; ++l) {
      dst_re[l] = src[2 * offsets[l]];
      dst_im[l] = src[2 * offsets[l] + 1];
    }
  }
}

// The full spectrum from its onesided half: X[n - t] = conj(X[t]) for t >= half.
template <class T>
PLAIT_CLONES void mirror_hermitian(T* re, T* im, int64_t half, int64_t n) {
  constexpr int L = kLanes<T>;
  for (int64_t t = half; t < n; ++t) {
    T* dst_re = re + slot<T>(t);
    T* dst_im = im + slot<T>(t);
    const T* src_re = re + slot<T>(n - t);
    const T* src_im = im + slot<T>(n - t);
    for (int l = 0; l < L; ++l) {
      dst_re[l] = src_re[l];
      dst_im[l] = -src_im[l];
    }
  }
}

template <class T>
PLAIT_CLONES void scatter_real(T* out, const int64_t* offsets, int count, const T* re,
                               int64_t length, int64_t stride, T scale, int64_t first = 0) {
  constexpr int L = kLanes<T>;
  for (int64_t k = first; k < length; ++k) {
    T* dst = out + k * stride;
    const T* src = re + slot<T>(k);
    if (count == L) {
      for (int l = 0; l < L; ++l) dst[offsets[l]] = src[l] * scale;
    } else {
      for (int l = 0; l < count; ++l) dst[offsets[l]] = src[l] * scale;
    }
  }
}

template <class T>
PLAIT_CLONES void scatter_complex(T* out, const int64_t* offsets, int count, const T* re,
                                  const T* im, int64_t length, int64_t stride, T scale,
                                  int64_t first = 0) {
  constexpr int L = kLanes<T>;
  for (int64_t k = first; k < length; ++k) {
    T* dst = out + 2 * k * stride;
    const T* src_re = re + slot<T>(k);
    const T* src_im = im + slot<T>(k);
    if (count == L) {
      for (int l = 0; l < L; ++l) {
        dst[2 * offsets[l]] = src_re[l] * scale;
        dst[2 * offsets[l] + 1] = src_im[l] * scale;
      }
    } else {
      for (int l = 0; l < count; ++l) {
        dst[2 * offsets[l]] = src_re[l] * scale;
        dst[2 * offsets[l] + 1] = src_im[l] * scale;
      }
    }
  }
}

#if defined(PLAIT_HAS_TRANSPOSE16)
#define PLAIT_FFT_TRANSPOSES 1
// float32 groups of signals that lie contiguously (unit stride along the transform) move
// between memory and the lane buffers by 16 x 16 transposes in registers: 16 loads or stores
// of whole 64-byte rows instead of one scalar move (or a vector gather/scatter) per element
// and lane. In a stft's rfft the element-wise gather and scatter took 63% of the time, the
// butterflies 26%. Only data moves (and the same one multiply by the scale per output), so
// values keep their bits.

using simd512::transpose16;

// The first values of 16 float32 signals of pairs (x_2t, x_2t+1) with unit stride, signal l
// starting at in + offset_scale * offsets[l] (offset_scale 1: a real signal packed as
// gather_packed packs it; 2: complex values counted once, as gather_complex reads them):
// 8 pairs of every signal per transpose; returns how many pairs it gathered (a multiple of
// 8), the caller's loop does the rest.
__attribute__((target("avx512f"))) int64_t gather_pairs_rows(float* re, float* im,
                                                             const float* in,
                                                             const int64_t* offsets,
                                                             int64_t offset_scale, int64_t h) {
  const int64_t whole = h / 8 * 8;
  __m512 r[16];
  for (int64_t t0 = 0; t0 < whole; t0 += 8) {
    for (int l = 0; l < 16; ++l) r[l] = _mm512_loadu_ps(in + offset_scale * offsets[l] + 2 * t0);
    transpose16(r);  // r[2i]: x_{2(t0 + i)} of every signal, r[2i + 1]: x_{2(t0 + i) + 1}
    for (int i = 0; i < 8; ++i) {
      _mm512_storeu_ps(re + slot<float>(t0 + i), r[2 * i]);
      _mm512_storeu_ps(im + slot<float>(t0 + i), r[2 * i + 1]);
    }
  }
  return whole;
}

// scatter_complex for 16 float32 signals written at out + 2 * offsets[l] with unit stride:
// 8 complex values of every signal per transpose, each signal's 16 floats one store; returns
// how many values it wrote (a multiple of 8).
__attribute__((target("avx512f"))) int64_t scatter_complex_rows(float* out,
                                                                const int64_t* offsets,
                                                                const float* re,
                                                                const float* im,
                                                                int64_t length, float scale) {
  const int64_t whole = length / 8 * 8;
  const __m512 factor = _mm512_set1_ps(scale);
  __m512 r[16];
  for (int64_t k0 = 0; k0 < whole; k0 += 8) {
    for (int i = 0; i < 8; ++i) {
      r[2 * i] = _mm512_mul_ps(_mm512_loadu_ps(re + slot<float>(k0 + i)), factor);
      r[2 * i + 1] = _mm512_mul_ps(_mm512_loadu_ps(im + slot<float>(k0 + i)), factor);
    }
    transpose16(r);  // r[l]: re, im of values k0 .. k0 + 7 of signal l, interleaved
    for (int l = 0; l < 16; ++l) _mm512_storeu_ps(out + 2 * (offsets[l] + k0), r[l]);
  }
  return whole;
}

// scatter_real for 16 float32 signals written at out + offsets[l] with unit stride: 16
// values of every signal per transpose; returns how many it wrote (a multiple of 16).
__attribute__((target("avx512f"))) int64_t scatter_real_rows(float* out, const int64_t* offsets,
                                                             const float* re, int64_t length,
                                                             float scale) {
  const int64_t whole = length / 16 * 16;
  const __m512 factor = _mm512_set1_ps(scale);
  __m512 r[16];
  for (int64_t k0 = 0; k0 < whole; k0 += 16) {
    for (int i = 0; i < 16; ++i) {
      r[i] = _mm512_mul_ps(_mm512_loadu_ps(re + slot<float>(k0 + i)), factor);
    }
    transpose16(r);  // r[l]: values k0 .. k0 + 15 of signal l
    for (int l = 0; l < 16; ++l) _mm512_storeu_ps(out + offsets[l] + k0, r[l]);
  }
  return whole;
}
#endif

#if defined(PLAIT_HAS_TRANSPOSE8)
#define PLAIT_FFT_TRANSPOSES8 1
// The same moves on CPUs with AVX2 but not AVX-512: a group's 16 signals as two halves of 8,
// each moved by 8 x 8 transposes into or out of its half of the lane vectors (on an AVX2 stft
// the element-wise gather and scatter took as long as the butterflies).
using simd256::transpose8;

// gather_pairs_rows for AVX2: 4 pairs of 8 signals per transpose.
__attribute__((target("avx2"))) int64_t gather_pairs_rows8(float* re, float* im,
                                                           const float* in,
                                                           const int64_t* offsets,
                                                           int64_t offset_scale, int64_t h) {
  const int64_t whole = h / 4 * 4;
  __m256 r[8];
  for (int64_t t0 = 0; t0 < whole; t0 += 4) {
    for (int half = 0; half < 16; half += 8) {
      for (int l = 0; l < 8; ++l) {
        r[l] = _mm256_loadu_ps(in + offset_scale * offsets[half + l] + 2 * t0);
      }
      transpose8(r);  // r[2i]: x_{2(t0 + i)} of the 8 signals, r[2i + 1]: x_{2(t0 + i) + 1}
      for (int i = 0; i < 4; ++i) {
        _mm256_storeu_ps(re + slot<float>(t0 + i) + half, r[2 * i]);
        _mm256_storeu_ps(im + slot<float>(t0 + i) + half, r[2 * i + 1]);
      }
    }
  }
  return whole;
}

// scatter_complex_rows for AVX2: 4 complex values of 8 signals per transpose.
__attribute__((target("avx2"))) int64_t scatter_complex_rows8(float* out,
                                                              const int64_t* offsets,
                                                              const float* re, const float* im,
                                                              int64_t length, float scale) {
  const int64_t whole = length / 4 * 4;
  const __m256 factor = _mm256_set1_ps(scale);
  __m256 r[8];
  for (int64_t k0 = 0; k0 < whole; k0 += 4) {
    for (int half = 0; half < 16; half += 8) {
      for (int i = 0; i < 4; ++i) {
        r[2 * i] = _mm256_mul_ps(_mm256_loadu_ps(re + slot<float>(k0 + i) + half), factor);
        r[2 * i + 1] = _mm256_mul_ps(_mm256_loadu_ps(im + slot<float>(k0 + i) + half), factor);
      }
      transpose8(r);  // r[l]: re, im of values k0 .. k0 + 3 of signal half + l, interleaved
      for (int l = 0; l < 8; ++l) _mm256_storeu_ps(out + 2 * (offsets[half + l] + k0), r[l]);
    }
  }
  return whole;
}

// scatter_real_rows for AVX2: 8 values of 8 signals per transpose.
__attribute__((target("avx2"))) int64_t scatter_real_rows8(float* out, const int64_t* offsets,
                                                           const float* re, int64_t length,
                                                           float scale) {
  const int64_t whole = length / 8 * 8;
  const __m256 factor = _mm256_set1_ps(scale);
  __m256 r[8];
  for (int64_t k0 = 0; k0 < whole; k0 += 8) {
    for (int half = 0; half < 16; half += 8) {
      for (int i = 0; i < 8; ++i) {
        r[i] = _mm256_mul_ps(_mm256_loadu_ps(re + slot<float>(k0 + i) + half), factor);
      }
      transpose8(r);  // r[l]: values k0 .. k0 + 7 of signal half + l
      for (int l = 0; l < 8; ++l) _mm256_storeu_ps(out + offsets[half + l] + k0, r[l]);
    }
  }
  return whole;
}
#endif

// A real signal of even length 2h as h complex values z_t = x_2t + i x_2t+1.
template <class T>
PLAIT_CLONES void gather_packed(T* re, T* im, const T* in, const int64_t* offsets, int64_t h,
                                int64_t stride, int64_t first = 0) {
  constexpr int L = kLanes<T>;
  for (int64_t t = first; t < h; ++t) {
    T* dst_re = re + slot<T>(t);
    T* dst_im = im + slot<T>(t);
    const T* even = in + 2 * t * stride;
    const T* odd = even + stride;
    for (int l = 0; l < L; ++l) {
      dst_re[l] = even[offsets[l]];
      dst_im[l] = odd[offsets[l]];
    }
  }
}

// The spectrum X_0..X_h of the real signal from Z = the h-point transform of its packing:
// with E = (Z_k + conj Z_{h-k}) / 2 (the even samples' transform) and O = (Z_k - conj
// Z_{h-k}) / 2i (the odd samples'), X_k = E + e^{-2 pi i k / 2h} O; Z_h is Z_0.
template <class T>
PLAIT_CLONES void unpack_real(const T* zr, const T* zi, T* xr, T* xi, int64_t h,
                              const T* wr, const T* wi) {
  const T half = T(0.5);
  for (int64_t k = 0; k <= h; ++k) {
    const int64_t a = k == h ? 0 : k;
    const int64_t b = k == 0 ? 0 : h - k;
    Vec<T> ar, ai, br, bi;
    load(ar, zr + slot<T>(a));
    load(ai, zi + slot<T>(a));
    load(br, zr + slot<T>(b));
    load(bi, zi + slot<T>(b));
    // E = (a + conj b) / 2, D = (a - conj b) / 2, O = -i D
    const Vec<T> er = (ar + br) * half, ei = (ai - bi) * half;
    const Vec<T> orr = (ai + bi) * half, oi = (br - ar) * half;
    store(xr + slot<T>(k), er + orr * wr[k] - oi * wi[k]);
    store(xi + slot<T>(k), ei + orr * wi[k] + oi * wr[k]);
  }
}

// The transform of one group held in (re, im), using (re2, im2) as the other buffer; returns
// the buffer pair that holds the result.
template <class T>
std::pair<T*, T*> transform_group(const Plan& plan, bool forward, T* re, T* im, T* re2,
                                  T* im2) {
  for (const Stage& st : plan.stages) {
    const T* twr = st.twiddles.real<T>();
    const T* twi = st.twiddles.imag<T>();
    switch (st.radix) {
      case 4: radix4<T>(re, im, re2, im2, st.m, st.s, twr, twi, forward); break;
      case 2: radix2<T>(re, im, re2, im2, st.m, st.s, twr, twi); break;
      case 3: radix3<T>(re, im, re2, im2, st.m, st.s, twr, twi, forward); break;
      default: radix5<T>(re, im, re2, im2, st.m, st.s, twr, twi, plan.root_re, plan.root_im);
    }
    std::swap(re, re2);
    std::swap(im, im2);
  }
  return {re, im};
}

// Element offsets of signal `index` in the input and the output (batch dimensions walked by
// division, once per signal: nothing next to its transform).
inline std::pair<int64_t, int64_t> signal_offsets(const FftCall& call, int64_t index) {
  int64_t in_offset = 0, out_offset = 0;
  for (size_t d = call.batch_shape.size(); d-- > 0;) {
    const int64_t size = call.batch_shape[d];
    const int64_t i = index % size;
    index /= size;
    in_offset += i * call.in_batch_strides[d];
    out_offset += i * call.out_batch_strides[d];
  }
  return {in_offset, out_offset};
}

// True when the group's signals start in increasing order at least `length` elements apart:
// whole-row stores then write what the element-wise scatter would, in any order.
template <int L>
bool apart(const int64_t (&offsets)[L], int64_t length) {
  for (int l = 1; l < L; ++l) {
    if (offsets[l] - offsets[l - 1] < length) return false;
  }
  return true;
}

template <class T>
void run_typed(const FftCall& call, const Plan& plan, int64_t batch) {
  constexpr int L = kLanes<T>;
  const int64_t n = call.length;
  const int64_t groups = (batch + L - 1) / L;
  // a group costs about n log n lane operations: enough groups per thread to beat a wake-up
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / (n * L * 4));
  const T* in = reinterpret_cast<const T*>(call.in);
  T* out = reinterpret_cast<T*>(call.out);
  const T scale = static_cast<T>(call.scale);
  // an even-length real signal is transformed as half as many complex values
  const bool packed = call.kind == FftKind::kR2C && n % 2 == 0;
  const T* unpack_re = plan.unpack.real<T>();
  const T* unpack_im = plan.unpack.imag<T>();
#if defined(PLAIT_FFT_TRANSPOSES)
  // float32 signals of unit stride move by register transposes where the CPU has AVX-512
  // (and PLAIT_CPU_VECTOR_BYTES does not ask for less; a forced 64 on a CPU without AVX-512
  // keeps the element moves, which give the same bits, instead of an illegal instruction)
  const bool rows = std::is_same_v<T, float> && native_vector_bytes() == 64 && cpu_has_avx512();
  const bool gather_rows = rows && call.in_stride == 1;
  const bool scatter_rows = rows && call.out_stride == 1;
#endif
#if defined(PLAIT_FFT_TRANSPOSES8)
  // and by AVX2's where the vectors are 32 bytes wide
  const bool rows8 = std::is_same_v<T, float> && native_vector_bytes() == 32 && cpu_has_avx2();
  const bool gather_rows8 = rows8 && call.in_stride == 1;
  const bool scatter_rows8 = rows8 && call.out_stride == 1;
#endif
  parallel_for(groups, grain, [&](int64_t begin, int64_t end) {
    // the four buffers start 17 vectors past a multiple of n apart: their equal offsets
    // never share an L1 set
    const int64_t size = (((n + 63) & ~int64_t{63}) + 17) * L;
    std::vector<T> buffers(static_cast<size_t>(4 * size));
    T* re = buffers.data();
    T* im = re + size;
    T* re2 = im + size;
    T* im2 = re2 + size;
    int64_t in_off[L], out_off[L];
    for (int64_t g = begin; g < end; ++g) {
      const int64_t first = g * L;
      const int count = static_cast<int>(std::min<int64_t>(L, batch - first));
      for (int l = 0; l < count; ++l) {
        std::tie(in_off[l], out_off[l]) = signal_offsets(call, first + l);
      }
      // lanes past `count` (the last group) repeat the first signal: they read valid memory
      // and their results are never stored
      for (int l = count; l < L; ++l) in_off[l] = in_off[0];
      switch (call.kind) {
        case FftKind::kR2C:
          if (packed) {
            int64_t gathered = 0;
#if defined(PLAIT_FFT_TRANSPOSES)
            if constexpr (std::is_same_v<T, float>) {
              if (gather_rows) gathered = gather_pairs_rows(re, im, in, in_off, 1, n / 2);
            }
#endif
#if defined(PLAIT_FFT_TRANSPOSES8)
            if constexpr (std::is_same_v<T, float>) {
              if (gather_rows8) gathered = gather_pairs_rows8(re, im, in, in_off, 1, n / 2);
            }
#endif
            gather_packed<T>(re, im, in, in_off, n / 2, call.in_stride, gathered);
          } else {
            std::fill(im, im + size, T(0));
            gather_real<T>(re, in, in_off, n, call.in_stride);
          }
          break;
        case FftKind::kC2C:
        case FftKind::kC2R: {
          int64_t gathered = 0;
#if defined(PLAIT_FFT_TRANSPOSES)
          if constexpr (std::is_same_v<T, float>) {
            if (gather_rows) gathered = gather_pairs_rows(re, im, in, in_off, 2, call.in_length);
          }
#endif
#if defined(PLAIT_FFT_TRANSPOSES8)
          if constexpr (std::is_same_v<T, float>) {
            if (gather_rows8) {
              gathered = gather_pairs_rows8(re, im, in, in_off, 2, call.in_length);
            }
          }
#endif
          gather_complex<T>(re, im, in, in_off, call.in_length, call.in_stride, gathered);
          if (call.kind == FftKind::kC2R) mirror_hermitian<T>(re, im, call.in_length, n);
          break;
        }
      }
      auto [yr, yi] = transform_group<T>(plan, call.forward, re, im, re2, im2);
      if (packed) {
        // unpack into the other buffer pair, and mirror for a two-sided spectrum
        T* xr = yr == re ? re2 : re;
        T* xi = yr == re ? im2 : im;
        const int64_t h = n / 2;
        unpack_real<T>(yr, yi, xr, xi, h, unpack_re, unpack_im);
        if (call.out_length > h + 1) mirror_hermitian<T>(xr, xi, h + 1, n);
        yr = xr;
        yi = xi;
      }
      int64_t written = 0;
#if defined(PLAIT_FFT_TRANSPOSES)
      if constexpr (std::is_same_v<T, float>) {
        if (scatter_rows && count == L && apart(out_off, call.out_length)) {
          written = call.kind == FftKind::kC2R
                        ? scatter_real_rows(out, out_off, yr, call.out_length, scale)
                        : scatter_complex_rows(out, out_off, yr, yi, call.out_length, scale);
        }
      }
#endif
#if defined(PLAIT_FFT_TRANSPOSES8)
      if constexpr (std::is_same_v<T, float>) {
        if (scatter_rows8 && count == L && apart(out_off, call.out_length)) {
          written = call.kind == FftKind::kC2R
                        ? scatter_real_rows8(out, out_off, yr, call.out_length, scale)
                        : scatter_complex_rows8(out, out_off, yr, yi, call.out_length, scale);
        }
      }
#endif
      if (call.kind == FftKind::kC2R) {
        scatter_real<T>(out, out_off, count, yr, call.out_length, call.out_stride, scale,
                        written);
      } else {
        scatter_complex<T>(out, out_off, count, yr, yi, call.out_length, call.out_stride, scale,
                           written);
      }
    }
  });
}

// The lowest and one past the highest byte a strided operand spans.
std::pair<uintptr_t, uintptr_t> byte_extent(uintptr_t base, int64_t element_bytes,
                                            int64_t length, int64_t stride,
                                            const std::vector<int64_t>& shape,
                                            const std::vector<int64_t>& strides) {
  int64_t low = 0, high = 0;
  auto extend = [&](int64_t size, int64_t step) {
    if (size <= 0) return;
    const int64_t reach = (size - 1) * step;
    if (reach < 0) {
      low += reach;
    } else {
      high += reach;
    }
  };
  extend(length, stride);
  for (size_t d = 0; d < shape.size(); ++d) extend(shape[d], strides[d]);
  return {base + low * element_bytes, base + (high + 1) * element_bytes};
}

}  // namespace

bool fft_length_supported(int64_t n) { return n == 1 || (n > 1 && !factorize(n).empty()); }

int fft_run(const FftCall& call) {
  const int64_t n = call.length;
  if (!fft_length_supported(n)) return kFftUnsupported;
  if (call.batch_shape.size() != call.in_batch_strides.size() ||
      call.batch_shape.size() != call.out_batch_strides.size()) {
    return kFftUnsupported;
  }
  switch (call.kind) {
    case FftKind::kC2C:
      if (call.in_length != n || call.out_length != n) return kFftUnsupported;
      break;
    case FftKind::kR2C:
      if (call.in_length != n || call.out_length < 1 || call.out_length > n) {
        return kFftUnsupported;
      }
      break;
    case FftKind::kC2R:
      if (call.in_length != n / 2 + 1 || call.out_length != n) return kFftUnsupported;
      break;
  }
  int64_t batch = 1;
  for (int64_t size : call.batch_shape) {
    if (size < 0) return kFftUnsupported;
    batch *= size;
  }
  if (batch == 0) return kFftOk;
  if (call.in == 0 || call.out == 0) return kFftUnsupported;
  // input and output must not share memory: a later group would read what an earlier one
  // wrote
  const int64_t real_bytes = call.double_precision ? 8 : 4;
  const int64_t in_bytes = call.kind == FftKind::kR2C ? real_bytes : 2 * real_bytes;
  const int64_t out_bytes = call.kind == FftKind::kC2R ? real_bytes : 2 * real_bytes;
  const auto in_span = byte_extent(call.in, in_bytes, call.in_length, call.in_stride,
                                   call.batch_shape, call.in_batch_strides);
  const auto out_span = byte_extent(call.out, out_bytes, call.out_length, call.out_stride,
                                    call.batch_shape, call.out_batch_strides);
  if (in_span.first < out_span.second && out_span.first < in_span.second) {
    return kFftUnsupported;
  }
  // run_typed transforms an even-length real signal as n / 2 complex values
  const bool packed = call.kind == FftKind::kR2C && n % 2 == 0;
  const std::shared_ptr<const Plan> plan = plan_for(packed ? n / 2 : n, call.forward);
  if (call.double_precision) {
    run_typed<double>(call, *plan, batch);
  } else {
    run_typed<float>(call, *plan, batch);
  }
  return kFftOk;
}

}  // namespace plait::cpu
