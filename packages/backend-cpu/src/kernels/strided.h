// Loop nests over strided operands, shared by every kernel.
//
// A kernel is written as an "inner" function over one run of `n` elements with one byte
// stride per operand; `for_each_run` calls it for every run of the loop nest. Before that,
// `Strided::build` simplifies the nest: it drops size-1 dimensions, orders dimensions by one
// operand's strides (so memory is walked in that operand's order) and merges dimensions that
// are contiguous with each other for every operand. A contiguous tensor of any shape becomes
// a single run, which is what lets the inner functions' unit-stride loops vectorise.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <vector>

namespace plait::cpu {

using Dims = std::vector<int64_t>;

// More dimensions than this are left to the reference kernel.
inline constexpr int kMaxDims = 64;

inline int64_t numel(const Dims& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

// Throws std::invalid_argument (ValueError in Python) unless every operand's strides have the
// shape's length and no size is negative.
inline void check_layout(const Dims& shape, std::initializer_list<const Dims*> strides) {
  for (const Dims* s : strides) {
    if (s->size() != shape.size()) {
      throw std::invalid_argument("plait_backend_cpu: strides and shape differ in length");
    }
  }
  for (int64_t s : shape) {
    if (s < 0) throw std::invalid_argument("plait_backend_cpu: negative size in shape");
  }
}

// [first, last) byte range that an operand touches; `shape` must have no zero size.
struct Extent {
  uintptr_t first;
  uintptr_t last;
};

inline Extent extent(uintptr_t ptr, const Dims& shape, const Dims& strides, size_t itemsize) {
  int64_t lo = 0;
  int64_t hi = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    const int64_t reach = strides[d] * (shape[d] - 1) * static_cast<int64_t>(itemsize);
    if (reach < 0) lo += reach;
    else hi += reach;
  }
  return {ptr + lo, ptr + hi + itemsize};
}

// True when writing `out` elementwise while reading `in` could read an element that was
// already overwritten: the operands share bytes but are not the exact same layout. Exact
// aliasing (`a.add_(b)` writes into `a`) is safe for elementwise kernels.
inline bool unsafe_overlap(uintptr_t out, const Dims& out_strides, size_t out_itemsize,
                           uintptr_t in, const Dims& in_strides, size_t in_itemsize,
                           const Dims& shape) {
  const Extent o = extent(out, shape, out_strides, out_itemsize);
  const Extent i = extent(in, shape, in_strides, in_itemsize);
  if (o.last <= i.first || i.last <= o.first) return false;
  if (out != in || out_itemsize != in_itemsize) return true;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] > 1 && out_strides[d] != in_strides[d]) return true;
  }
  return false;
}

// True when a tensor of this layout is row-major contiguous (size-1 dims may have any stride).
inline bool is_contiguous(const Dims& shape, const Dims& strides) {
  int64_t expected = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] != 1 && strides[d] != expected) return false;
    expected *= shape[d];
  }
  return true;
}

// True when `strides` write one element twice (a stride 0 on a dimension of size > 1, as in
// an expanded tensor); such an output is left to the reference kernel.
inline bool has_zero_stride(const Dims& shape, const Dims& strides) {
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] > 1 && strides[d] == 0) return true;
  }
  return false;
}

// The simplified loop nest of N operands; strides in bytes.
template <size_t N>
struct Strided {
  // Only the first `ndim` entries are meaningful; the arrays are left uninitialised because
  // zeroing them would cost more than a small kernel does.
  int ndim = 0;
  std::array<int64_t, kMaxDims> shape;
  std::array<std::array<int64_t, kMaxDims>, N> strides;

  // Builds the nest from element strides and item sizes, walking memory in the order of
  // operand `order_by`. Returns false when the shape holds no element.
  bool build(const Dims& full_shape, const std::array<const Dims*, N>& elem_strides,
             const std::array<size_t, N>& itemsize, int order_by) {
    std::array<int, kMaxDims> dims;
    int nd = 0;
    for (size_t d = 0; d < full_shape.size(); ++d) {
      if (full_shape[d] == 0) return false;
      if (full_shape[d] != 1) dims[nd++] = static_cast<int>(d);
    }
    // Largest stride first, so the innermost loop walks the smallest stride.
    const Dims& key = *elem_strides[order_by];
    std::stable_sort(dims.begin(), dims.begin() + nd, [&](int x, int y) {
      return std::llabs(key[x]) > std::llabs(key[y]);
    });
    ndim = 0;
    for (int i = 0; i < nd; ++i) {
      const int d = dims[i];
      const int64_t size = full_shape[d];
      // Merge into the previous (outer) dimension when that one steps exactly over this
      // one for every operand.
      bool merge = ndim > 0;
      for (size_t k = 0; k < N && merge; ++k) {
        const int64_t st = (*elem_strides[k])[d] * static_cast<int64_t>(itemsize[k]);
        merge = strides[k][ndim - 1] == st * size;
      }
      if (merge) {
        shape[ndim - 1] *= size;
        for (size_t k = 0; k < N; ++k) {
          strides[k][ndim - 1] = (*elem_strides[k])[d] * static_cast<int64_t>(itemsize[k]);
        }
      } else {
        shape[ndim] = size;
        for (size_t k = 0; k < N; ++k) {
          strides[k][ndim] = (*elem_strides[k])[d] * static_cast<int64_t>(itemsize[k]);
        }
        ++ndim;
      }
    }
    return true;
  }
};

// Calls `inner(n, ptrs, byte_strides)` once per innermost run of the nest, starting at
// `base`. A 0-d nest (one element) is one run of length 1.
template <size_t N, class Inner>
void for_each_run(const Strided<N>& nest, std::array<char*, N> base, Inner&& inner) {
  std::array<int64_t, N> run_strides{};
  if (nest.ndim == 0) {
    inner(int64_t{1}, base.data(), run_strides.data());
    return;
  }
  const int last = nest.ndim - 1;
  for (size_t k = 0; k < N; ++k) run_strides[k] = nest.strides[k][last];
  std::array<int64_t, kMaxDims> index;
  std::fill(index.begin(), index.begin() + last, int64_t{0});
  std::array<char*, N> ptr = base;
  while (true) {
    inner(nest.shape[last], ptr.data(), run_strides.data());
    int d = last - 1;
    for (; d >= 0; --d) {
      if (++index[d] < nest.shape[d]) {
        for (size_t k = 0; k < N; ++k) ptr[k] += nest.strides[k][d];
        break;
      }
      for (size_t k = 0; k < N; ++k) ptr[k] -= nest.strides[k][d] * (nest.shape[d] - 1);
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

template <class T>
inline T& at(char* p, int64_t byte_offset) {
  return *reinterpret_cast<T*>(p + byte_offset);
}

}  // namespace plait::cpu
