// Indexing along one dimension: gather, scatter_ (with its reductions), nonzero.
//
// gather and a plain scatter move bits: they run on unsigned integers of the element's size,
// so one instantiation serves every dtype of that size. Every index is checked against its
// dimension (std::out_of_range, IndexError in Python) before anything is written.
//
// scatter_ applies its updates in the index's row-major order, as the reference does;
// float16/bfloat16 reductions accumulate in float and round once, and mean divides each
// target by its count at the end (scatter_scratch), as the reference does. Two
// updates can only collide when they differ in the scattered dimension alone, so threads split
// the other dimensions and each walks the scattered one in order: the result is the same as
// the sequential one for any thread count.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "dtype.h"
#include "parallel.h"
#include "reduce.h"
#include "reduce_nest.h"

namespace plait::cpu {
namespace {

constexpr int64_t kMinWork = int64_t{1} << 14;

template <size_t kSize>
using Bits = std::conditional_t<
    kSize == 1, uint8_t,
    std::conditional_t<kSize == 2, uint16_t, std::conditional_t<kSize == 4, uint32_t, uint64_t>>>;

[[noreturn]] void index_error(int64_t index, int dim, int64_t size) {
  throw std::out_of_range("index " + std::to_string(index) + " is out of bounds for dimension " +
                          std::to_string(dim) + " with size " + std::to_string(size));
}

// Checks every index of an int64 tensor against [0, size), in parallel.
void check_indices(const Dims& shape, uintptr_t index, const Dims& strides, int dim,
                   int64_t size) {
  // A broadcast (stride 0) dim repeats the same values: walk it once. index_add's spread index
  // is one value per row broadcast along the row, so this checks rows, not elements.
  Dims distinct(shape);
  for (size_t d = 0; d < distinct.size(); ++d) {
    if (strides[d] == 0 && distinct[d] > 0) distinct[d] = 1;
  }
  Strided<1> nest;
  if (!nest.build(distinct, {&strides}, {sizeof(int64_t)}, 0)) return;
  std::atomic<bool> bad{false};
  const int64_t limit = size;  // a local copy: the loop keeps it in a register
  parallel_for(nest_size(nest), kMinWork, [&](int64_t b, int64_t e) {
    bool local = false;
    walk_range(nest, std::array<char*, 1>{reinterpret_cast<char*>(index)}, b, e,
               [&](char* const* p, int64_t n, const int64_t* s) {
                 bool any = false;
                 for (int64_t i = 0; i < n; ++i) {
                   const int64_t v = at<const int64_t>(p[0], i * s[0]);
                   any |= v < 0 || v >= limit;
                 }
                 local |= any;
               });
    if (local) bad.store(true, std::memory_order_relaxed);
  });
  if (!bad.load()) return;
  // Report the first bad index in row-major order, as the reference does.
  const int64_t total = numel(shape);
  for (int64_t linear = 0; linear < total; ++linear) {
    int64_t rest = linear;
    int64_t off = 0;
    for (size_t d = shape.size(); d-- > 0;) {
      off += rest % shape[d] * strides[d];
      rest /= shape[d];
    }
    const int64_t v = reinterpret_cast<const int64_t*>(index)[off];
    if (v < 0 || v >= size) index_error(v, dim, size);
  }
}

template <class B>
void gather_bits(const Dims& shape, char* out, const Dims& out_strides, char* a,
                 const Dims& a_strides, int dim, char* index, const Dims& index_strides) {
  Dims a_walk(a_strides);
  a_walk[dim] = 0;  // the index supplies the position along dim
  const int64_t step = a_strides[dim] * static_cast<int64_t>(sizeof(B));
  Strided<3> nest;
  if (!nest.build(shape, {&out_strides, &index_strides, &a_walk},
                  {sizeof(B), sizeof(int64_t), sizeof(B)}, 0)) {
    return;
  }
  parallel_for(nest_size(nest), kMinWork, [&](int64_t b, int64_t e) {
    walk_range(nest, std::array<char*, 3>{out, index, a}, b, e,
               [&](char* const* p, int64_t n, const int64_t* s) {
                 for (int64_t i = 0; i < n; ++i) {
                   const int64_t k = at<const int64_t>(p[1], i * s[1]);
                   at<B>(p[0], i * s[0]) = at<const B>(p[2], i * s[2] + k * step);
                 }
               });
  });
}

// The trailing dims of `strides` after `dim` hold a row-major block of `shape` (the innermost
// stride 1, each outer one the block below it): one contiguous run of `block` elements.
bool dense_after(const Dims& shape, const Dims& strides, int dim, int64_t block) {
  int64_t expect = 1;
  for (size_t d = shape.size(); d-- > static_cast<size_t>(dim) + 1;) {
    if (shape[d] != 1 && strides[d] != expect) return false;
    expect *= shape[d];
  }
  return expect == block;
}

// index_select's shape of gather (the index varies along `dim` and the dims before it only,
// the slices after `dim` whole and contiguous in both `out` and `a`): each index copies one
// block of `block` elements. Returns false when the layout is not that one.
bool gather_blocks(const Dims& shape, char* out, const Dims& out_strides, char* a,
                   const Dims& a_shape, const Dims& a_strides, int dim, char* index,
                   const Dims& index_strides, size_t size) {
  int64_t block = 1;
  for (size_t d = static_cast<size_t>(dim) + 1; d < shape.size(); ++d) {
    if (index_strides[d] != 0 || shape[d] != a_shape[d]) return false;
    block *= shape[d];
  }
  if (block < 8 || !dense_after(shape, out_strides, dim, block) ||
      !dense_after(a_shape, a_strides, dim, block)) {
    return false;
  }
  const Dims outer(shape.begin(), shape.begin() + dim + 1);
  const Dims out_outer(out_strides.begin(), out_strides.begin() + dim + 1);
  const Dims index_outer(index_strides.begin(), index_strides.begin() + dim + 1);
  Dims a_outer(a_strides.begin(), a_strides.begin() + dim + 1);
  a_outer[dim] = 0;  // the index supplies the position along dim
  check_indices(outer, reinterpret_cast<uintptr_t>(index), index_outer, dim, a_shape[dim]);
  const int64_t step = a_strides[dim] * static_cast<int64_t>(size);
  const size_t bytes = static_cast<size_t>(block) * size;
  Strided<3> nest;
  if (!nest.build(outer, {&out_outer, &index_outer, &a_outer}, {size, sizeof(int64_t), size},
                  0)) {
    return true;
  }
  parallel_for(nest_size(nest), std::max<int64_t>(1, kMinWork / block),
               [&](int64_t b, int64_t e) {
    walk_range(nest, std::array<char*, 3>{out, index, a}, b, e,
               [&](char* const* p, int64_t n, const int64_t* s) {
                 for (int64_t i = 0; i < n; ++i) {
                   const int64_t k = at<const int64_t>(p[1], i * s[1]);
                   std::memcpy(p[0] + i * s[0], p[2] + i * s[2] + k * step, bytes);
                 }
               });
  });
  return true;
}

enum ScatterReduce { kNone = 0, kSum = 1, kProd = 2, kAmax = 3, kAmin = 4, kMean = 5 };

template <class T>
T combine(int reduce, T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return (reduce == kSum || reduce == kAmax) ? (a || b) : (a && b);
  } else if constexpr (std::is_integral_v<T>) {
    using W = WrapType<T>;
    switch (reduce) {
      case kSum:
        return static_cast<T>(static_cast<W>(a) + static_cast<W>(b));
      case kProd:
        return static_cast<T>(static_cast<W>(a) * static_cast<W>(b));
      case kAmax:
        return a > b ? a : b;
      default:
        return a < b ? a : b;
    }
  } else {
    switch (reduce) {
      case kSum:
        return a + b;
      case kProd:
        return a * b;
      case kAmax:  // NaN propagates from either side, as numpy's maximum
        return (a > b || a != a) ? a : b;
      default:
        return (a < b || a != a) ? a : b;
    }
  }
}

template <class T>
T identity(int reduce) {
  if constexpr (std::is_same_v<T, bool>) {
    return reduce == kProd || reduce == kAmin;
  } else if constexpr (std::is_floating_point_v<T>) {
    if (reduce == kAmax) return -std::numeric_limits<T>::infinity();
    if (reduce == kAmin) return std::numeric_limits<T>::infinity();
  } else {
    if (reduce == kAmax) return std::numeric_limits<T>::lowest();
    if (reduce == kAmin) return std::numeric_limits<T>::max();
  }
  return reduce == kProd ? T(1) : T(0);
}

template <class T>
void scatter_typed(char* out, const Dims& out_strides, int dim, const Dims& shape, char* index,
                   const Dims& index_strides, char* src, const Dims& src_strides, int reduce,
                   bool include_self) {
  // out's strides over index's shape, 0 at dim: the index supplies that coordinate.
  Dims out_walk(out_strides.begin(), out_strides.end());
  out_walk[dim] = 0;
  const int64_t out_step = out_strides[dim] * static_cast<int64_t>(sizeof(T));
  const int64_t n = shape[dim];
  const int64_t is = index_strides[dim] * static_cast<int64_t>(sizeof(int64_t));
  const int64_t ss = src_strides[dim] * static_cast<int64_t>(sizeof(T));
  Dims batch_shape(shape);
  batch_shape[dim] = 1;
  Strided<3> batch;
  if (!batch.build(batch_shape, {&out_walk, &index_strides, &src_strides},
                   {sizeof(T), sizeof(int64_t), sizeof(T)}, 1)) {
    return;
  }
  auto line = [&](char* o, const char* ix, const char* s) {
    if (reduce != kNone && !include_self) {
      for (int64_t i = 0; i < n; ++i) {
        at<T>(o, at<const int64_t>(const_cast<char*>(ix), i * is) * out_step) =
            identity<T>(reduce);
      }
    }
    for (int64_t i = 0; i < n; ++i) {
      T& target = at<T>(o, at<const int64_t>(const_cast<char*>(ix), i * is) * out_step);
      const T v = at<const T>(const_cast<char*>(s), i * ss);
      target = reduce == kNone ? v : combine<T>(reduce, target, v);
    }
  };
  parallel_for(nest_size(batch), std::max<int64_t>(1, kMinWork / n), [&](int64_t b, int64_t e) {
    walk_range(batch, std::array<char*, 3>{out, index, src}, b, e,
               [&](char* const* p, int64_t len, const int64_t* s) {
                 for (int64_t j = 0; j < len; ++j) line(p[0] + j * s[0], p[1] + j * s[1], p[2] + j * s[2]);
               });
  });
}

// index_add's shape of a reducing scatter_ (the index varies along `dim` and the dims before it
// only; the slices after `dim` whole and contiguous in `out` and `src`): each index combines one
// contiguous block of `block` elements into its target block, a loop the compiler vectorises
// (the element-by-element walk took 20x longer on an embedding's gradient). Threads split the
// block's columns and each walks the index in order, so every target element sees its updates
// in index order, as the sequential walk does. Returns false when the layout is not that one.
// target[j] = combine(target[j], row[j]) for j in [b, e). The two never overlap (scatter_
// declines an output that shares memory with src), which __restrict tells the compiler so that
// it vectorises the loop.
template <class T, int kReduce>
void combine_row(T* __restrict target, const T* __restrict row, int64_t b, int64_t e) {
  for (int64_t j = b; j < e; ++j) target[j] = combine<T>(kReduce, target[j], row[j]);
}

template <class T, int kReduce>
bool scatter_blocks(const Dims& out_shape, char* out, const Dims& out_strides, int dim,
                    const Dims& shape, char* index, const Dims& index_strides, char* src,
                    const Dims& src_strides) {
  int64_t block = 1;
  for (size_t d = static_cast<size_t>(dim) + 1; d < shape.size(); ++d) {
    if (index_strides[d] != 0 || shape[d] != out_shape[d]) return false;
    block *= shape[d];
  }
  if (block < 8 || !dense_after(shape, out_strides, dim, block) ||
      !dense_after(shape, src_strides, dim, block)) {
    return false;
  }
  const int64_t n = shape[dim];
  int64_t outer = 1;
  for (int d = 0; d < dim; ++d) outer *= shape[d];
  const int64_t out_step = out_strides[dim];
  const int64_t is = index_strides[dim];
  const int64_t ss = src_strides[dim];
  T* o = reinterpret_cast<T*>(out);
  const int64_t* ix = reinterpret_cast<const int64_t*>(index);
  const T* sp = reinterpret_cast<const T*>(src);
  parallel_for(block, std::max<int64_t>(8, kMinWork / std::max<int64_t>(1, outer * n)),
               [&](int64_t b, int64_t e) {
    for (int64_t p = 0; p < outer; ++p) {
      // This outer position's offsets (element units) in out, index and src.
      int64_t rest = p, o_off = 0, i_off = 0, s_off = 0;
      for (int d = dim - 1; d >= 0; --d) {
        const int64_t c = rest % shape[d];
        rest /= shape[d];
        o_off += c * out_strides[d];
        i_off += c * index_strides[d];
        s_off += c * src_strides[d];
      }
      for (int64_t i = 0; i < n; ++i) {
        combine_row<T, kReduce>(o + o_off + ix[i_off + i * is] * out_step,
                                sp + s_off + i * ss, b, e);
      }
    }
  });
  return true;
}

// The reductions that cannot update `out` one step at a time: float16/bfloat16 (the
// reference accumulates in float and rounds once at the end) and mean (a division by each
// target's count at the end). Each line of the scattered dimension accumulates into a scratch
// row of out's length along `dim` (per thread, in the compute type) with a count per target;
// only the targets the line touches are read, finished and written back. Every target sees
// its updates in index order, so the result is the reference's for any thread count.
template <class T>
void scatter_scratch(char* out, const Dims& out_strides, int64_t m, int dim, const Dims& shape,
                     char* index, const Dims& index_strides, char* src, const Dims& src_strides,
                     int reduce, bool include_self) {
  using C = ComputeType<T>;
  Dims out_walk(out_strides.begin(), out_strides.end());
  out_walk[dim] = 0;
  const int64_t out_step = out_strides[dim] * static_cast<int64_t>(sizeof(T));
  const int64_t n = shape[dim];
  const int64_t is = index_strides[dim] * static_cast<int64_t>(sizeof(int64_t));
  const int64_t ss = src_strides[dim] * static_cast<int64_t>(sizeof(T));
  const int op = reduce == kMean ? kSum : reduce;
  Dims batch_shape(shape);
  batch_shape[dim] = 1;
  Strided<3> batch;
  if (!batch.build(batch_shape, {&out_walk, &index_strides, &src_strides},
                   {sizeof(T), sizeof(int64_t), sizeof(T)}, 1)) {
    return;
  }
  auto finish = [&](C acc, int64_t updates) -> T {
    if (reduce != kMean) return store_as<T>(acc);
    const int64_t count = updates + (include_self ? 1 : 0);  // >= 1: the target was touched
    if constexpr (std::is_same_v<T, bool>) {
      return acc && count == 1;  // the reference's floor division of 0/1 by the count
    } else if constexpr (std::is_floating_point_v<C>) {
      // In double, as the reference divides (then rounds once to T's precision).
      return store_as<T>(static_cast<C>(static_cast<double>(acc) / static_cast<double>(count)));
    } else if constexpr (std::is_signed_v<T>) {
      const int64_t v = acc;
      int64_t q = v / count;
      if (v % count != 0 && v < 0) --q;  // floor, as PyTorch's integer mean
      return static_cast<T>(q);
    } else {
      return static_cast<T>(static_cast<uint64_t>(acc) / static_cast<uint64_t>(count));
    }
  };
  const bool mean = reduce == kMean;
  parallel_for(nest_size(batch), std::max<int64_t>(1, kMinWork / n), [&](int64_t b, int64_t e) {
    // Per thread, rows of the line's length: each target's accumulator and, for mean, its
    // update count. Three branch-free passes over the line's indices: start every target
    // (a repeated target restarts from the same values: nothing is written before the last
    // pass), accumulate in index order, write each target (a repeated one the same value
    // again). Nothing is zeroed, so a few updates into a long line (index_put_ with
    // accumulate into a big flat tensor) only touch the memory pages they use.
    const size_t row = static_cast<size_t>(m);
    const std::unique_ptr<C[]> acc(new C[row]);
    const std::unique_ptr<int64_t[]> updates(new int64_t[mean ? row : 1]);
    const C start = identity<C>(op);
    auto line = [&](char* o, char* ix, char* sp) {
      for (int64_t i = 0; i < n; ++i) {
        const int64_t k = at<const int64_t>(ix, i * is);
        acc[k] = include_self ? load(at<const T>(o, k * out_step)) : start;
        if (mean) updates[k] = 0;
      }
      for (int64_t i = 0; i < n; ++i) {
        const int64_t k = at<const int64_t>(ix, i * is);
        acc[k] = combine<C>(op, acc[k], load(at<const T>(sp, i * ss)));
        if (mean) ++updates[k];
      }
      for (int64_t i = 0; i < n; ++i) {
        const int64_t k = at<const int64_t>(ix, i * is);
        at<T>(o, k * out_step) = finish(acc[k], mean ? updates[k] : 0);
      }
    };
    walk_range(batch, std::array<char*, 3>{out, index, src}, b, e,
               [&](char* const* p, int64_t len, const int64_t* s) {
                 for (int64_t j = 0; j < len; ++j) {
                   line(p[0] + j * s[0], p[1] + j * s[1], p[2] + j * s[2]);
                 }
               });
  });
}

// Row-major walk of `shape` (no reordering: nonzero's order is the logical one).
Strided<1> row_major(const Dims& shape, const Dims& strides, size_t size) {
  Strided<1> nest;
  nest.ndim = static_cast<int>(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    nest.shape[d] = shape[d];
    nest.strides[0][d] = strides[d] * static_cast<int64_t>(size);
  }
  return nest;
}

constexpr int64_t kNonzeroBlock = int64_t{1} << 16;

template <class T>
inline bool is_nonzero(T x) {
  if constexpr (is_reduced_float_v<T>) {
    return (x.bits & 0x7FFFu) != 0;  // not +-0 (NaN counts)
  } else {
    return x != T(0);
  }
}

// Nonzero count of each fixed block of the row-major order.
template <class T>
std::vector<int64_t> block_counts(const Strided<1>& nest, char* a, int64_t total) {
  const int64_t blocks = fixed_block_count(total, kNonzeroBlock);
  std::vector<int64_t> counts(static_cast<size_t>(blocks), 0);
  fixed_blocks(total, kNonzeroBlock, [&](int64_t blk, int64_t b, int64_t e) {
    int64_t c = 0;
    walk_range(nest, std::array<char*, 1>{a}, b, e,
               [&](char* const* p, int64_t n, const int64_t* s) {
                 for (int64_t i = 0; i < n; ++i) c += is_nonzero(at<const T>(p[0], i * s[0]));
               });
    counts[blk] = c;
  });
  return counts;
}

}  // namespace

bool gather(int dtype, const Dims& index_shape, uintptr_t out, const Dims& out_strides,
            const Dims& a_shape, uintptr_t a, const Dims& a_strides, int dim, uintptr_t index,
            const Dims& index_strides) {
  check_layout(index_shape, {&out_strides, &index_strides});
  check_layout(a_shape, {&a_strides});
  const size_t nd = index_shape.size();
  const size_t size = itemsize(dtype);
  if (size == 0 || nd == 0 || nd > static_cast<size_t>(kMaxDims) || a_shape.size() != nd ||
      dim < 0 || static_cast<size_t>(dim) >= nd) {
    return false;
  }
  for (size_t d = 0; d < nd; ++d) {
    if (static_cast<int>(d) != dim && index_shape[d] > a_shape[d]) return false;
  }
  if (numel(index_shape) == 0) return true;
  if (has_zero_stride(index_shape, out_strides) ||
      extents_overlap(out, index_shape, out_strides, size, index, index_shape, index_strides, 8)) {
    return false;
  }
  if (numel(a_shape) > 0 &&
      extents_overlap(out, index_shape, out_strides, size, a, a_shape, a_strides, size)) {
    return false;
  }
  char* o = reinterpret_cast<char*>(out);
  char* p = reinterpret_cast<char*>(a);
  char* ix = reinterpret_cast<char*>(index);
  if (gather_blocks(index_shape, o, out_strides, p, a_shape, a_strides, dim, ix, index_strides,
                    size)) {
    return true;
  }
  check_indices(index_shape, index, index_strides, dim, a_shape[dim]);
  switch (size) {
    case 1:
      gather_bits<uint8_t>(index_shape, o, out_strides, p, a_strides, dim, ix, index_strides);
      return true;
    case 2:
      gather_bits<uint16_t>(index_shape, o, out_strides, p, a_strides, dim, ix, index_strides);
      return true;
    case 4:
      gather_bits<uint32_t>(index_shape, o, out_strides, p, a_strides, dim, ix, index_strides);
      return true;
    case 8:
      gather_bits<uint64_t>(index_shape, o, out_strides, p, a_strides, dim, ix, index_strides);
      return true;
    default:
      return false;
  }
}

bool scatter(int dtype, const Dims& out_shape, uintptr_t out, const Dims& out_strides, int dim,
             const Dims& index_shape, uintptr_t index, const Dims& index_strides, uintptr_t src,
             const Dims& src_strides, int reduce, bool include_self) {
  check_layout(out_shape, {&out_strides});
  check_layout(index_shape, {&index_strides, &src_strides});
  const size_t nd = out_shape.size();
  const size_t size = itemsize(dtype);
  if (size == 0 || nd == 0 || nd > static_cast<size_t>(kMaxDims) || index_shape.size() != nd ||
      dim < 0 || static_cast<size_t>(dim) >= nd || reduce < kNone || reduce > kMean) {
    return false;
  }
  for (size_t d = 0; d < nd; ++d) {
    if (static_cast<int>(d) != dim && index_shape[d] > out_shape[d]) return false;
  }
  if (numel(index_shape) == 0) return true;
  if (numel(out_shape) == 0) {  // every index is out of bounds
    index_error(at<const int64_t>(reinterpret_cast<char*>(index), 0), dim, 0);
  }
  if (has_zero_stride(out_shape, out_strides) ||
      extents_overlap(out, out_shape, out_strides, size, index, index_shape, index_strides, 8) ||
      extents_overlap(out, out_shape, out_strides, size, src, index_shape, src_strides, size)) {
    return false;
  }
  check_indices(index_shape, index, index_strides, dim, out_shape[dim]);
  char* o = reinterpret_cast<char*>(out);
  char* ix = reinterpret_cast<char*>(index);
  char* s = reinterpret_cast<char*>(src);
  if (reduce == kNone) {  // plain assignment moves bits
    switch (size) {
      case 1:
        scatter_typed<uint8_t>(o, out_strides, dim, index_shape, ix, index_strides, s,
                               src_strides, kNone, true);
        return true;
      case 2:
        scatter_typed<uint16_t>(o, out_strides, dim, index_shape, ix, index_strides, s,
                                src_strides, kNone, true);
        return true;
      case 4:
        scatter_typed<uint32_t>(o, out_strides, dim, index_shape, ix, index_strides, s,
                                src_strides, kNone, true);
        return true;
      case 8:
        scatter_typed<uint64_t>(o, out_strides, dim, index_shape, ix, index_strides, s,
                                src_strides, kNone, true);
        return true;
      default:
        return false;
    }
  }
  return visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_reduced_float_v<T>) {
      scatter_scratch<T>(o, out_strides, out_shape[dim], dim, index_shape, ix, index_strides, s,
                         src_strides, reduce, include_self);
    } else if (reduce == kMean) {
      scatter_scratch<T>(o, out_strides, out_shape[dim], dim, index_shape, ix, index_strides, s,
                         src_strides, reduce, include_self);
    } else {
      if (include_self) {
        // combine's switch is resolved at compile time in each instantiation, so the block
        // loop vectorises.
        const bool blocked =
            reduce == kSum
                ? scatter_blocks<T, kSum>(out_shape, o, out_strides, dim, index_shape, ix,
                                          index_strides, s, src_strides)
            : reduce == kProd
                ? scatter_blocks<T, kProd>(out_shape, o, out_strides, dim, index_shape, ix,
                                           index_strides, s, src_strides)
            : reduce == kAmax
                ? scatter_blocks<T, kAmax>(out_shape, o, out_strides, dim, index_shape, ix,
                                           index_strides, s, src_strides)
                : scatter_blocks<T, kAmin>(out_shape, o, out_strides, dim, index_shape, ix,
                                           index_strides, s, src_strides);
        if (blocked) return;
      }
      scatter_typed<T>(o, out_strides, dim, index_shape, ix, index_strides, s, src_strides,
                       reduce, include_self);
    }
  });
}

int64_t count_nonzero(int dtype, const Dims& shape, uintptr_t a, const Dims& a_strides) {
  check_layout(shape, {&a_strides});
  if (shape.size() > static_cast<size_t>(kMaxDims)) return -1;
  const int64_t total = numel(shape);
  if (total == 0) return 0;
  int64_t count = -1;
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    const Strided<1> nest = row_major(shape, a_strides, sizeof(T));
    count = 0;
    for (int64_t c : block_counts<T>(nest, reinterpret_cast<char*>(a), total)) count += c;
  });
  return count;
}

bool nonzero(int dtype, const Dims& shape, uintptr_t a, const Dims& a_strides, int64_t count,
             uintptr_t out, int64_t row_stride, int64_t col_stride) {
  check_layout(shape, {&a_strides});
  if (shape.size() > static_cast<size_t>(kMaxDims)) return false;
  const int64_t total = numel(shape);
  if (total == 0 || count == 0) return count == 0;
  const int nd = static_cast<int>(shape.size());
  int64_t* dst = reinterpret_cast<int64_t*>(out);
  bool done = false;
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    const Strided<1> nest = row_major(shape, a_strides, sizeof(T));
    char* base = reinterpret_cast<char*>(a);
    const std::vector<int64_t> counts = block_counts<T>(nest, base, total);
    std::vector<int64_t> starts(counts.size() + 1, 0);
    for (size_t b = 0; b < counts.size(); ++b) starts[b + 1] = starts[b] + counts[b];
    if (starts.back() != count) return;
    fixed_blocks(total, kNonzeroBlock, [&](int64_t blk, int64_t b, int64_t e) {
      int64_t row = starts[blk];
      int64_t pos = b;  // row-major position of the current run's first element
      walk_range(nest, std::array<char*, 1>{base}, b, e,
                 [&](char* const* p, int64_t n, const int64_t* s) {
                   std::array<int64_t, kMaxDims> coord;
                   int64_t rest = pos;
                   for (int d = nd - 1; d >= 0; --d) {
                     coord[d] = rest % shape[d];
                     rest /= shape[d];
                   }
                   for (int64_t i = 0; i < n; ++i) {
                     if (!is_nonzero(at<const T>(p[0], i * s[0]))) continue;
                     int64_t* r = dst + row * row_stride;
                     for (int d = 0; d < nd - 1; ++d) r[d * col_stride] = coord[d];
                     if (nd > 0) r[(nd - 1) * col_stride] = coord[nd - 1] + i;
                     ++row;
                   }
                   pos += n;
                 });
    });
    done = true;
  });
  return done;
}

}  // namespace plait::cpu
