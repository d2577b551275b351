// Walking part of a loop nest, shared by the reduction, scan, indexing and sort kernels.
//
// strided.h's `for_each_run` walks a whole nest; the kernels here split a nest's index space
// [0, numel) into chunks (over threads, or in fixed blocks for thread-count independent
// results) and walk one chunk at a time.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

#include "strided.h"

namespace plait::cpu {

// Number of index positions of a nest (1 for a 0-d nest).
template <size_t N>
int64_t nest_size(const Strided<N>& nest) {
  int64_t n = 1;
  for (int d = 0; d < nest.ndim; ++d) n *= nest.shape[d];
  return n;
}

// The byte offsets of operand k at row-major position `linear` of the first `ndim` dims.
template <size_t N>
std::array<int64_t, N> nest_offsets(const Strided<N>& nest, int ndim, int64_t linear) {
  std::array<int64_t, N> off{};
  for (int d = ndim; d-- > 0;) {
    const int64_t i = linear % nest.shape[d];
    linear /= nest.shape[d];
    for (size_t k = 0; k < N; ++k) off[k] += i * nest.strides[k][d];
  }
  return off;
}

// Calls `run(ptrs, n, byte_strides)` for the runs of the innermost dimension that cover the
// row-major positions [begin, end) of the nest, in order; the first and last run may be
// partial rows. A 0-d nest has the one position 0.
template <size_t N, class Run>
void walk_range(const Strided<N>& nest, std::array<char*, N> base, int64_t begin, int64_t end,
                Run&& run) {
  if (begin >= end) return;
  std::array<int64_t, N> run_strides{};
  if (nest.ndim == 0) {
    run(base.data(), int64_t{1}, run_strides.data());
    return;
  }
  const int last = nest.ndim - 1;
  for (size_t k = 0; k < N; ++k) run_strides[k] = nest.strides[k][last];
  std::array<int64_t, kMaxDims> index;
  int64_t rest = begin;
  std::array<char*, N> ptr = base;
  for (int d = last; d >= 0; --d) {
    index[d] = rest % nest.shape[d];
    rest /= nest.shape[d];
    for (size_t k = 0; k < N; ++k) ptr[k] += index[d] * nest.strides[k][d];
  }
  int64_t pos = begin;
  while (true) {
    const int64_t len = std::min(nest.shape[last] - index[last], end - pos);
    run(ptr.data(), len, run_strides.data());
    pos += len;
    if (pos >= end) return;
    // Back to the start of the row, then step the outer dimensions like an odometer.
    for (size_t k = 0; k < N; ++k) ptr[k] -= index[last] * nest.strides[k][last];
    index[last] = 0;
    for (int d = last - 1; d >= 0; --d) {
      if (++index[d] < nest.shape[d]) {
        for (size_t k = 0; k < N; ++k) ptr[k] += nest.strides[k][d];
        break;
      }
      for (size_t k = 0; k < N; ++k) ptr[k] -= nest.strides[k][d] * (nest.shape[d] - 1);
      index[d] = 0;
    }
  }
}

// `shape` with the dimensions of `mask` (bit d = dimension d) set to `size`.
inline Dims with_dims_set(const Dims& shape, uint64_t mask, int64_t size) {
  Dims out(shape);
  for (size_t d = 0; d < shape.size(); ++d) {
    if ((mask >> d) & 1) out[d] = size;
  }
  return out;
}

// True when the bytes an operand touches intersect another's (neither may be empty).
inline bool extents_overlap(uintptr_t p, const Dims& p_shape, const Dims& p_strides,
                            size_t p_size, uintptr_t q, const Dims& q_shape,
                            const Dims& q_strides, size_t q_size) {
  const Extent a = extent(p, p_shape, p_strides, p_size);
  const Extent b = extent(q, q_shape, q_strides, q_size);
  return !(a.last <= b.first || b.last <= a.first);
}

}  // namespace plait::cpu
