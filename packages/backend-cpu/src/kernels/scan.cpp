// Scans along one dimension: cumsum, cumprod, cummax, cummin.
//
// Every other dimension forms a batch nest (strided.h's simplification). When the scanned
// dimension is the innermost one in memory, each batch position is scanned as one row;
// otherwise neighbouring batch positions (up to 256) are scanned together, one step of the
// scanned dimension at a time, which vectorises across them. Threads split the batch, so the
// results do not depend on the thread count; sums and products accumulate sequentially in the
// dtype (float for float16/bfloat16), exactly as the reference does.
#include <algorithm>
#include <cstdlib>

#include "dtype.h"
#include "parallel.h"
#include "reduce.h"
#include "reduce_nest.h"
#include "simd.h"

namespace plait::cpu {
namespace {

constexpr int64_t kMinWork = int64_t{1} << 15;
constexpr int64_t kColumns = 256;

// Integers accumulate in a wrapping unsigned type; floats in their compute type.
template <class T, bool = is_floating_v<T>>
struct ScanAccOf {
  using type = ComputeType<T>;
};
template <class T>
struct ScanAccOf<T, false> {
  using type = WrapType<T>;
};
// bool scans in bool: a sum is a running "or", a product a running "and" (numpy's bool add
// and multiply, which the reference uses).
template <>
struct ScanAccOf<bool, false> {
  using type = bool;
};
template <class T>
using ScanAcc = typename ScanAccOf<T>::type;

template <class T, bool kProd>
inline ScanAcc<T> scan_step(ScanAcc<T> acc, T x) {
  const ScanAcc<T> v = static_cast<ScanAcc<T>>(load(x));
  if constexpr (std::is_same_v<T, bool>) {
    return kProd ? (acc && v) : (acc || v);
  } else if constexpr (kProd) {
    return acc * v;
  } else {
    return acc + v;
  }
}

template <class T, bool kProd>
void scan_row(char* out, int64_t out_stride, const char* a, int64_t a_stride, int64_t n) {
  ScanAcc<T> acc = kProd ? 1 : 0;
  for (int64_t i = 0; i < n; ++i) {
    acc = scan_step<T, kProd>(acc, at<const T>(const_cast<char*>(a), i * a_stride));
    at<T>(out, i * out_stride) = store_as<T>(static_cast<ComputeType<T>>(acc));
  }
}

template <class T, bool kProd>
PLAIT_CLONES void scan_columns(ScanAcc<T>* __restrict acc, T* __restrict out,
                               const T* __restrict a, int64_t w) {
  for (int64_t j = 0; j < w; ++j) {
    acc[j] = scan_step<T, kProd>(acc[j], a[j]);
    out[j] = store_as<T>(static_cast<ComputeType<T>>(acc[j]));
  }
}

// cummax/cummin: `v` replaces the running extreme when it ties or beats it (the later index
// wins) or is a NaN; a NaN extreme is never replaced by a number.
template <class T, bool kMax>
inline bool takes(ComputeType<T> v, ComputeType<T> best) {
  if constexpr (kMax) {
    return v >= best || v != v;
  } else {
    return v <= best || v != v;
  }
}

template <class T, bool kMax>
void extreme_row(char* values, int64_t v_stride, char* indices, int64_t i_stride,
                 const char* a, int64_t a_stride, int64_t n) {
  using C = ComputeType<T>;
  C best = load(at<const T>(const_cast<char*>(a), 0));
  int64_t index = 0;
  for (int64_t i = 0; i < n; ++i) {
    const C v = load(at<const T>(const_cast<char*>(a), i * a_stride));
    if (takes<T, kMax>(v, best)) {
      best = v;
      index = i;
    }
    at<T>(values, i * v_stride) = store_as<T>(best);
    at<int64_t>(indices, i * i_stride) = index;
  }
}

template <class T, bool kMax>
PLAIT_CLONES void extreme_columns(ComputeType<T>* __restrict best, int64_t* __restrict index,
                                  T* __restrict values, int64_t* __restrict indices,
                                  const T* __restrict a, int64_t w, int64_t i) {
  for (int64_t j = 0; j < w; ++j) {
    const ComputeType<T> v = load(a[j]);
    const bool take = takes<T, kMax>(v, best[j]);
    best[j] = take ? v : best[j];
    index[j] = take ? i : index[j];
    values[j] = store_as<T>(best[j]);
    indices[j] = index[j];
  }
}

// Runs `rows(ptrs, run_strides, len)` over the batch (every dimension but `dim`) of N operands,
// split over threads; `len` neighbouring batch positions at a time.
template <size_t N, class Rows>
void for_batches(const Dims& shape, const std::array<const Dims*, N>& strides,
                 const std::array<size_t, N>& sizes, std::array<char*, N> base, int dim,
                 int order_by, const Rows& rows) {
  Dims batch_shape(shape);
  batch_shape[dim] = 1;
  Strided<N> batch;
  if (!batch.build(batch_shape, strides, sizes, order_by)) return;
  const int64_t count = nest_size(batch);
  const int64_t grain = std::max<int64_t>(1, kMinWork / std::max<int64_t>(1, shape[dim]));
  parallel_for(count, grain, [&](int64_t b0, int64_t b1) {
    walk_range(batch, base, b0, b1,
               [&](char* const* p, int64_t len, const int64_t* s) { rows(p, s, len); });
  });
}

template <class T, bool kProd>
void scan_typed(const Dims& shape, char* out, const Dims& out_strides, char* a,
                const Dims& a_strides, int dim) {
  constexpr int64_t size = sizeof(T);
  const int64_t n = shape[dim];
  const int64_t os = out_strides[dim] * size;
  const int64_t as = a_strides[dim] * size;
  for_batches<2>(shape, {&out_strides, &a_strides}, {sizeof(T), sizeof(T)}, {out, a}, dim, 1,
                 [&](char* const* p, const int64_t* s, int64_t len) {
                   if (len == 1 || std::llabs(as) <= std::llabs(s[1])) {
                     for (int64_t j = 0; j < len; ++j) {
                       scan_row<T, kProd>(p[0] + j * s[0], os, p[1] + j * s[1], as, n);
                     }
                     return;
                   }
                   ScanAcc<T> acc[kColumns];
                   T in_row[kColumns];
                   T out_row[kColumns];
                   const bool dense = s[0] == size && s[1] == size;
                   for (int64_t j0 = 0; j0 < len; j0 += kColumns) {
                     const int64_t w = std::min(kColumns, len - j0);
                     std::fill(acc, acc + w, ScanAcc<T>(kProd ? 1 : 0));
                     for (int64_t i = 0; i < n; ++i) {
                       char* o = p[0] + j0 * s[0] + i * os;
                       const char* x = p[1] + j0 * s[1] + i * as;
                       if (dense) {
                         scan_columns<T, kProd>(acc, reinterpret_cast<T*>(o),
                                                reinterpret_cast<const T*>(x), w);
                         continue;
                       }
                       for (int64_t j = 0; j < w; ++j) {
                         in_row[j] = at<const T>(const_cast<char*>(x), j * s[1]);
                       }
                       scan_columns<T, kProd>(acc, out_row, in_row, w);
                       for (int64_t j = 0; j < w; ++j) at<T>(o, j * s[0]) = out_row[j];
                     }
                   }
                 });
}

template <class T, bool kMax>
void extreme_typed(const Dims& shape, char* values, const Dims& v_strides, char* indices,
                   const Dims& i_strides, char* a, const Dims& a_strides, int dim) {
  using C = ComputeType<T>;
  constexpr int64_t size = sizeof(T);
  const int64_t n = shape[dim];
  const int64_t vs = v_strides[dim] * size;
  const int64_t is = i_strides[dim] * int64_t{8};
  const int64_t as = a_strides[dim] * size;
  for_batches<3>(
      shape, {&v_strides, &i_strides, &a_strides}, {sizeof(T), sizeof(int64_t), sizeof(T)},
      {values, indices, a}, dim, 2, [&](char* const* p, const int64_t* s, int64_t len) {
        if (len == 1 || std::llabs(as) <= std::llabs(s[2])) {
          for (int64_t j = 0; j < len; ++j) {
            extreme_row<T, kMax>(p[0] + j * s[0], vs, p[1] + j * s[1], is, p[2] + j * s[2],
                                 as, n);
          }
          return;
        }
        C best[kColumns];
        int64_t index[kColumns];
        T in_row[kColumns];
        T v_row[kColumns];
        int64_t i_row[kColumns];
        const bool dense = s[0] == size && s[1] == 8 && s[2] == size;
        for (int64_t j0 = 0; j0 < len; j0 += kColumns) {
          const int64_t w = std::min(kColumns, len - j0);
          for (int64_t j = 0; j < w; ++j) {
            best[j] = load(at<const T>(p[2], (j0 + j) * s[2]));
            index[j] = 0;
          }
          for (int64_t i = 0; i < n; ++i) {
            char* vo = p[0] + j0 * s[0] + i * vs;
            char* io = p[1] + j0 * s[1] + i * is;
            const char* x = p[2] + j0 * s[2] + i * as;
            if (dense) {
              extreme_columns<T, kMax>(best, index, reinterpret_cast<T*>(vo),
                                       reinterpret_cast<int64_t*>(io),
                                       reinterpret_cast<const T*>(x), w, i);
              continue;
            }
            for (int64_t j = 0; j < w; ++j) in_row[j] = at<const T>(const_cast<char*>(x), j * s[2]);
            extreme_columns<T, kMax>(best, index, v_row, i_row, in_row, w, i);
            for (int64_t j = 0; j < w; ++j) {
              at<T>(vo, j * s[0]) = v_row[j];
              at<int64_t>(io, j * s[1]) = i_row[j];
            }
          }
        }
      });
}

// Shared checks: layout, dtype known, the dim in range, outputs without repeated elements
// and not overlapping the input.
bool scan_args_ok(const Dims& shape, int dim, std::initializer_list<const Dims*> strides) {
  check_layout(shape, strides);
  return shape.size() <= static_cast<size_t>(kMaxDims) && dim >= 0 &&
         static_cast<size_t>(dim) < shape.size();
}

}  // namespace

bool scan(bool is_prod, int dtype, const Dims& shape, uintptr_t out, const Dims& out_strides,
          uintptr_t a, const Dims& a_strides, int dim) {
  if (!scan_args_ok(shape, dim, {&out_strides, &a_strides})) return false;
  const size_t size = itemsize(dtype);
  if (size == 0) return false;
  if (numel(shape) == 0) return true;
  if (has_zero_stride(shape, out_strides) ||
      extents_overlap(out, shape, out_strides, size, a, shape, a_strides, size)) {
    return false;
  }
  char* o = reinterpret_cast<char*>(out);
  char* p = reinterpret_cast<char*>(a);
  return visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if (is_prod) {
      scan_typed<T, true>(shape, o, out_strides, p, a_strides, dim);
    } else {
      scan_typed<T, false>(shape, o, out_strides, p, a_strides, dim);
    }
  });
}

bool cum_extreme(bool is_max, int dtype, const Dims& shape, uintptr_t values,
                 const Dims& values_strides, uintptr_t indices, const Dims& indices_strides,
                 uintptr_t a, const Dims& a_strides, int dim) {
  if (!scan_args_ok(shape, dim, {&values_strides, &indices_strides, &a_strides})) return false;
  const size_t size = itemsize(dtype);
  if (size == 0) return false;
  if (numel(shape) == 0) return true;
  if (has_zero_stride(shape, values_strides) || has_zero_stride(shape, indices_strides) ||
      extents_overlap(values, shape, values_strides, size, a, shape, a_strides, size) ||
      extents_overlap(indices, shape, indices_strides, 8, a, shape, a_strides, size) ||
      extents_overlap(values, shape, values_strides, size, indices, shape, indices_strides, 8)) {
    return false;
  }
  char* v = reinterpret_cast<char*>(values);
  char* i = reinterpret_cast<char*>(indices);
  char* p = reinterpret_cast<char*>(a);
  return visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if (is_max) {
      extreme_typed<T, true>(shape, v, values_strides, i, indices_strides, p, a_strides, dim);
    } else {
      extreme_typed<T, false>(shape, v, values_strides, i, indices_strides, p, a_strides, dim);
    }
  });
}

}  // namespace plait::cpu
