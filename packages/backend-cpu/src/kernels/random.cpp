// random_bits_: Philox4x32-10 (Salmon et al., SC 2011), the stream of the reference kernel
// (core's torch/_refs/random.py): element i of the output is lane i % 4 of the block at
// 128-bit counter offset + i / 4 (low 64 bits wrap into a carry in word 2), key = seed.
//
// Counter-based: every block is computed on its own, so threads split the output anywhere and
// the result does not depend on the thread count. Sixteen counters go through the rounds
// together in arrays, which the compiler turns into vector 32x32->64-bit multiplies.
//
// random_uniform, random_normal and random_bernoulli are core's composite samplers
// (torch/_random_ops.py) in one call each, value for value: the same words of the stream, the
// same conversions and formulas, each step rounded to the compute dtype as the composite's
// separate primitives round it. This file is compiled without floating-point contraction
// (CMakeLists.txt), so `u * scale + low` rounds twice as the composite's mul and add do; log,
// cos and sin run through the unary kernels the composite's primitives run.
#include <algorithm>
#include <cmath>
#include <vector>

#include "dtype.h"
#include "kernels.h"
#include "parallel.h"
#include "reduce.h"
#include "reduce_nest.h"
#include "simd.h"

namespace plait::cpu {
namespace {

constexpr uint32_t kM0 = 0xD2511F53u;
constexpr uint32_t kM1 = 0xCD9E8D57u;
constexpr uint32_t kW0 = 0x9E3779B9u;
constexpr uint32_t kW1 = 0xBB67AE85u;
constexpr int kRounds = 10;
constexpr int kBatch = 16;

// words[4 * j + lane] for counters first .. first + kBatch - 1 (indices into the stream).
PLAIT_CLONES void philox_batch(uint64_t first, uint64_t offset, uint32_t k0, uint32_t k1,
                               uint32_t* __restrict words) {
  uint32_t c0[kBatch], c1[kBatch], c2[kBatch], c3[kBatch];
  for (int j = 0; j < kBatch; ++j) {
    const uint64_t index = first + static_cast<uint64_t>(j);
    const uint64_t low = offset + index;  // wraps modulo 2^64
    c0[j] = static_cast<uint32_t>(low);
    c1[j] = static_cast<uint32_t>(low >> 32);
    c2[j] = low < index ? 1u : 0u;  // the carry out of the low 64 bits
    c3[j] = 0;
  }
  for (int r = 0; r < kRounds; ++r) {
    const uint32_t rk0 = k0 + static_cast<uint32_t>(r) * kW0;  // unsigned: wraps
    const uint32_t rk1 = k1 + static_cast<uint32_t>(r) * kW1;
    for (int j = 0; j < kBatch; ++j) {
      const uint64_t p0 = static_cast<uint64_t>(kM0) * c0[j];
      const uint64_t p1 = static_cast<uint64_t>(kM1) * c2[j];
      const uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1[j] ^ rk0;
      const uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3[j] ^ rk1;
      c1[j] = static_cast<uint32_t>(p1);
      c3[j] = static_cast<uint32_t>(p0);
      c0[j] = n0;
      c2[j] = n2;
    }
  }
  for (int j = 0; j < kBatch; ++j) {
    words[4 * j + 0] = c0[j];
    words[4 * j + 1] = c1[j];
    words[4 * j + 2] = c2[j];
    words[4 * j + 3] = c3[j];
  }
}

// Words first .. first + count - 1 of the stream (word i: lane i % 4 of counter offset + i / 4).
void philox_words(uint64_t seed, uint64_t offset, int64_t first, int64_t count, uint32_t* out) {
  const uint32_t k0 = static_cast<uint32_t>(seed);
  const uint32_t k1 = static_cast<uint32_t>(seed >> 32);
  constexpr int64_t kWords = 4 * kBatch;
  uint32_t words[kWords];
  const int64_t end = first + count;
  for (int64_t i = first; i < end;) {
    const int64_t block = i / kWords;
    philox_batch(static_cast<uint64_t>(block) * kBatch, offset, k0, k1, words);
    const int64_t begin = block * kWords;
    const int64_t stop = std::min(end, begin + kWords);
    for (; i < stop; ++i) *out++ = words[i - begin];
  }
}

// The composite's compute dtype: float64 for float64, float32 for the others.
template <class T>
using Compute = std::conditional_t<std::is_same_v<T, double>, double, float>;

// Significand bits (implicit bit included) of each floating dtype.
template <class T>
constexpr int significand_bits() {
  if constexpr (std::is_same_v<T, double>) return 53;
  else if constexpr (std::is_same_v<T, float>) return 24;
  else if constexpr (std::is_same_v<T, Half>) return 11;
  else return 8;  // BFloat16
}

template <class T>
T from_compute(float x) {
  if constexpr (std::is_same_v<T, float>) return x;
  else return T::from_float(x);
}
template <class T>
T from_compute(double x) {
  return x;  // only double computes in double
}

// The `bits`-bit value (bits <= 63) starting at word `w`: the top bits of one word, or
// `w[0] * 2**(bits - 32) + (w[1] >> (64 - bits))` from two (the composite's _top_bits).
inline uint64_t top_bits(const uint32_t* w, int bits) {
  if (bits <= 32) return w[0] >> (32 - bits);
  return (static_cast<uint64_t>(w[0]) << (bits - 32)) + (w[1] >> (64 - bits));
}

inline int words_per_value(int bits) { return bits > 32 ? 2 : 1; }

// Values per chunk of the stream a thread converts at once.
constexpr int64_t kChunk = 256;

// f(index, words) for values first .. first + count - 1 of a stream of `wpv` words per value,
// in parallel over fixed chunks (the values do not depend on the thread count).
template <class F>
void for_each_value(int64_t first, int64_t count, int wpv, uint64_t seed, uint64_t offset,
                    const F& f) {
  const int64_t chunks = (count + kChunk - 1) / kChunk;
  parallel_for(chunks, std::max<int64_t>(1, kElementwiseGrain / 4 / kChunk),
               [&](int64_t c0, int64_t c1) {
                 uint32_t words[2 * kChunk];
                 for (int64_t c = c0; c < c1; ++c) {
                   const int64_t begin = c * kChunk;
                   const int64_t len = std::min(kChunk, count - begin);
                   philox_words(seed, offset, (first + begin) * wpv, len * wpv, words);
                   for (int64_t i = 0; i < len; ++i) f(begin + i, words + i * wpv);
                 }
               });
}

// `out[i] = op(a[i])` over n contiguous values of C with the unary kernels (in place allowed).
template <class C>
void unary_contiguous(UnaryOp op, int64_t n, C* out, const C* a) {
  const Dims shape{n}, strides{1};
  unary(op, dtype_code<C>(), shape, reinterpret_cast<uintptr_t>(out), strides,
        reinterpret_cast<uintptr_t>(a), strides);
}

}  // namespace

bool random_uniform(int dtype, int64_t n, uintptr_t out, uint64_t seed, uint64_t offset,
                    bool unit, double scale, double low) {
  return visit_floating(dtype, [&](auto tag) {
    using T = decltype(tag);
    using C = Compute<T>;
    T* dst = reinterpret_cast<T*>(out);
    // [0, 1) in the output dtype itself, or in the compute dtype before the scale and shift.
    const int bits = unit ? significand_bits<T>() : significand_bits<C>();
    const C step = std::ldexp(C(1), -bits);
    const C c_scale = static_cast<C>(scale), c_low = static_cast<C>(low);
    for_each_value(0, n, words_per_value(bits), seed, offset,
                   [&](int64_t i, const uint32_t* w) {
                     C u = static_cast<C>(top_bits(w, bits)) * step;
                     if (!unit) u = u * c_scale + c_low;
                     dst[i] = from_compute<T>(u);
                   });
  });
}

bool random_normal(int dtype, int64_t n, uintptr_t out, uint64_t seed, uint64_t offset,
                   double mean, double std, bool scaled, bool shifted) {
  return visit_floating(dtype, [&](auto tag) {
    using T = decltype(tag);
    using C = Compute<T>;
    if (n == 0) return;
    T* dst = reinterpret_cast<T*>(out);
    // Box-Muller on 2 * half open uniforms: u1 the first half, u2 the second.
    const int64_t half = (n + 1) / 2;
    const int q = significand_bits<C>() - 1;
    const C step = std::ldexp(C(1), -q);
    std::vector<C> u(2 * half), radius(half);
    for_each_value(0, 2 * half, words_per_value(q), seed, offset,
                   [&](int64_t i, const uint32_t* w) {
                     u[i] = (static_cast<C>(top_bits(w, q)) + C(0.5)) * step;
                   });
    C* u1 = u.data();
    C* u2 = u.data() + half;
    unary_contiguous(UnaryOp::Log, half, radius.data(), u1);
    const C two_pi = static_cast<C>(6.283185307179586476925286766559);
    for (int64_t i = 0; i < half; ++i) {
      radius[i] = std::sqrt(radius[i] * C(-2));
      u2[i] = u2[i] * two_pi;  // theta
    }
    unary_contiguous(UnaryOp::Cos, half, u1, u2);  // u1 is spent: it takes cos(theta)
    unary_contiguous(UnaryOp::Sin, half, u2, u2);
    const C c_std = static_cast<C>(std), c_mean = static_cast<C>(mean);
    const C* parts[2] = {u1, u2};
    parallel_for(n, kElementwiseGrain, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        const int64_t j = i < half ? i : i - half;
        C z = radius[j] * parts[i < half ? 0 : 1][j];
        if (scaled) z = z * c_std;
        if (shifted) z = z + c_mean;
        dst[i] = from_compute<T>(z);
      }
    });
  });
}

bool random_bernoulli(int dtype, int64_t n, uintptr_t out, uint64_t seed, uint64_t offset,
                      double p) {
  return visit_floating(dtype, [&](auto tag) {
    using T = decltype(tag);
    using C = Compute<T>;
    T* dst = reinterpret_cast<T*>(out);
    const int bits = significand_bits<C>();
    const C step = std::ldexp(C(1), -bits);
    const C c_p = static_cast<C>(p);
    const T one = from_compute<T>(C(1)), zero = from_compute<T>(C(0));
    for_each_value(0, n, words_per_value(bits), seed, offset,
                   [&](int64_t i, const uint32_t* w) {
                     dst[i] = static_cast<C>(top_bits(w, bits)) * step < c_p ? one : zero;
                   });
  });
}

bool random_bits(const Dims& shape, uintptr_t out, const Dims& out_strides, uint64_t seed,
                 uint64_t offset) {
  check_layout(shape, {&out_strides});
  const int64_t n = numel(shape);
  if (n == 0) return true;
  // Element i is the i-th in row-major order. An output with repeated elements (a stride 0)
  // has no single answer (the last write wins): the reference's.
  if (has_zero_stride(shape, out_strides) || shape.size() > static_cast<size_t>(kMaxDims)) {
    return false;
  }
  const bool contiguous = is_contiguous(shape, out_strides);
  // Other layouts walk the output in row-major order (no reordering of the dimensions).
  Strided<1> nest;
  nest.ndim = static_cast<int>(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    nest.shape[d] = shape[d];
    nest.strides[0][d] = out_strides[d] * static_cast<int64_t>(sizeof(int64_t));
  }
  int64_t* dst = reinterpret_cast<int64_t*>(out);
  const uint32_t k0 = static_cast<uint32_t>(seed);
  const uint32_t k1 = static_cast<uint32_t>(seed >> 32);
  constexpr int64_t kWords = 4 * kBatch;
  const int64_t batches = (n + kWords - 1) / kWords;
  parallel_for(batches, std::max<int64_t>(1, kElementwiseGrain / 4 / kWords),
               [&](int64_t b0, int64_t b1) {
                 uint32_t words[kWords];
                 for (int64_t b = b0; b < b1; ++b) {
                   philox_batch(static_cast<uint64_t>(b) * kBatch, offset, k0, k1, words);
                   const int64_t begin = b * kWords;
                   const int64_t len = std::min(kWords, n - begin);
                   if (contiguous) {
                     for (int64_t i = 0; i < len; ++i) dst[begin + i] = words[i];
                     continue;
                   }
                   const uint32_t* w = words;
                   walk_range(nest, std::array<char*, 1>{reinterpret_cast<char*>(out)}, begin,
                              begin + len, [&](char* const* p, int64_t run, const int64_t* s) {
                                for (int64_t i = 0; i < run; ++i) {
                                  at<int64_t>(p[0], i * s[0]) = *w++;
                                }
                              });
                 }
               });
  return true;
}

}  // namespace plait::cpu
