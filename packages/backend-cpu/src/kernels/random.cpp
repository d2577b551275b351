// random_bits_: Philox4x32-10 (Salmon et al., SC 2011), the stream of the reference kernel
// (core's torch/_refs/random.py): element i of the output is lane i % 4 of the block at
// 128-bit counter offset + i / 4 (low 64 bits wrap into a carry in word 2), key = seed.
//
// Counter-based: every block is computed on its own, so threads split the output anywhere and
// the result does not depend on the thread count. Sixteen counters go through the rounds
// together in arrays, which the compiler turns into vector 32x32->64-bit multiplies.
#include <algorithm>

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

}  // namespace

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
