// Native kernels of the reduction, scan, indexing, sort and random primitive groups.
//
// Conventions as kernels.h: outputs are preallocated, pointers are addresses of the first
// element, strides are in elements, dtypes are dtype.h codes. A kernel returns false when it
// leaves the case to the core's reference kernel (a dtype or dtype combination it does not
// run, more than kMaxDims dimensions, outputs that overlap inputs) and throws
// std::invalid_argument (ValueError) on malformed layouts, std::out_of_range (IndexError) on
// an index outside its dimension.
//
// Floating results never depend on the thread count: work is split by output element, or,
// when there are few outputs, into fixed blocks of the reduced range whose partial results
// are combined in block order.
#pragma once

#include <cstdint>

#include "strided.h"

namespace plait::cpu {

#define PLAIT_CPU_REDUCE_OPS(X) \
  X(Sum, "sum")                 \
  X(Prod, "prod")               \
  X(Amax, "amax")               \
  X(Amin, "amin")               \
  X(Any, "any")                 \
  X(All, "all")

#define PLAIT_CPU_REDUCE_ENUM_ROW(NAME, PRIM) NAME,
enum class ReduceOp { PLAIT_CPU_REDUCE_OPS(PLAIT_CPU_REDUCE_ENUM_ROW) };
#undef PLAIT_CPU_REDUCE_ENUM_ROW

// `out` has `a`'s shape (`shape`) with the dimensions of `reduce_mask` (bit d = dimension d)
// set to 1; `out_strides` has shape's length (its values at reduced dimensions are ignored).
// Dtypes: sum/prod write the input dtype, float64 from a float, or int64 from an integer or
// bool; amax/amin write the input dtype; any/all read any dtype and write bool or uint8.
bool reduce(ReduceOp op, int out_dtype, int a_dtype, const Dims& shape, uintptr_t out,
            const Dims& out_strides, uintptr_t a, const Dims& a_strides, uint64_t reduce_mask);

// argmax/argmin of `a` along `dim` into int64 `out` (size 1 at `dim`): the first extreme,
// or the first NaN.
bool arg_reduce(bool is_max, int a_dtype, const Dims& shape, uintptr_t out,
                const Dims& out_strides, uintptr_t a, const Dims& a_strides, int dim);

// cumsum/cumprod along `dim` (out and a share dtype and shape), accumulating sequentially in
// the dtype (float for float16/bfloat16) like the reference.
bool scan(bool is_prod, int dtype, const Dims& shape, uintptr_t out, const Dims& out_strides,
          uintptr_t a, const Dims& a_strides, int dim);

// cummax/cummin: running extreme and its int64 index (the later index on ties; NaN, once
// seen, stays and each later NaN moves the index).
bool cum_extreme(bool is_max, int dtype, const Dims& shape, uintptr_t values,
                 const Dims& values_strides, uintptr_t indices, const Dims& indices_strides,
                 uintptr_t a, const Dims& a_strides, int dim);

// out[i..] = a[.. index[i..] at dim ..]; out and index share `index_shape`, a has `a_shape`
// of the same rank (sizes >= index's except at dim).
bool gather(int dtype, const Dims& index_shape, uintptr_t out, const Dims& out_strides,
            const Dims& a_shape, uintptr_t a, const Dims& a_strides, int dim, uintptr_t index,
            const Dims& index_strides);

// scatter_ into `out` (shape `out_shape`) from `src` at `index` (shape `index_shape`, src's
// strides over it), applied in index's row-major order. `reduce`: 0 none, 1 sum, 2 prod,
// 3 amax, 4 amin, 5 mean.
bool scatter(int dtype, const Dims& out_shape, uintptr_t out, const Dims& out_strides,
             int dim, const Dims& index_shape, uintptr_t index, const Dims& index_strides,
             uintptr_t src, const Dims& src_strides, int reduce, bool include_self);

// Number of nonzero elements of `a` (-1: dtype left to the reference).
int64_t count_nonzero(int dtype, const Dims& shape, uintptr_t a, const Dims& a_strides);

// Writes the coordinates of the nonzero elements of `a`, in row-major order, into int64
// `out`: coordinate d of the i-th element at out + (i * row_stride + d * col_stride).
// `count` is count_nonzero's answer; returns false if the data no longer has that count.
bool nonzero(int dtype, const Dims& shape, uintptr_t a, const Dims& a_strides, int64_t count,
             uintptr_t out, int64_t row_stride, int64_t col_stride);

// Stable sort along `dim` (NaN largest) into values (a's dtype) and int64 indices.
bool sort(int dtype, const Dims& shape, uintptr_t values, const Dims& values_strides,
          uintptr_t indices, const Dims& indices_strides, uintptr_t a, const Dims& a_strides,
          int dim, bool descending);

// The first k of the stable sort along `dim` (largest first when `largest`); values and
// indices have `shape` with `k` at dim.
bool topk(int dtype, const Dims& shape, uintptr_t values, const Dims& values_strides,
          uintptr_t indices, const Dims& indices_strides, uintptr_t a, const Dims& a_strides,
          int64_t k, int dim, bool largest);

// Bisection per value: seq (batch..., n) and values/out (batch..., m) (batch dims equal).
bool searchsorted(int dtype, const Dims& seq_shape, uintptr_t seq, const Dims& seq_strides,
                  const Dims& values_shape, uintptr_t values, const Dims& values_strides,
                  uintptr_t out, const Dims& out_strides, bool right);

// Philox4x32-10 words into int64 `out`: element i (row-major) is lane i % 4 at counter
// offset + i / 4 with key `seed`.
bool random_bits(const Dims& shape, uintptr_t out, const Dims& out_strides, uint64_t seed,
                 uint64_t offset);

// Core's composite samplers in one call, value for value (same words, formulas and rounding),
// into n contiguous elements of floating dtype `dtype` (false for another dtype); the caller
// reserved the counters from `offset`. Uniform: [0, 1) in `dtype` when `unit`, else
// u * scale + low in the compute dtype (float64 for float64, float32 otherwise). Normal:
// Box-Muller, times std when `scaled`, plus mean when `shifted`. Bernoulli: u < p, as 1 or 0.
bool random_uniform(int dtype, int64_t n, uintptr_t out, uint64_t seed, uint64_t offset,
                    bool unit, double scale, double low);
bool random_normal(int dtype, int64_t n, uintptr_t out, uint64_t seed, uint64_t offset,
                   double mean, double std, bool scaled, bool shifted);
bool random_bernoulli(int dtype, int64_t n, uintptr_t out, uint64_t seed, uint64_t offset,
                      double p);

}  // namespace plait::cpu
