// Internals of the matrix products shared by blas.cpp, matmul.cpp and matmul_native.cpp (the
// public interfaces are blas.h and the `matmul` primitive in matmul.cpp).
//
// A matrix operand is a MatView: a pointer and rows x cols with a row and a column stride in
// elements, so a transposed operand is the same memory with the strides swapped and a tile
// is a pointer offset. Products run tile by tile, each tile single-threaded: OpenBLAS when it
// is loaded and the dtype is float32/float64 (float16/bfloat16 through float32 buffers), the
// native cache-blocked kernel otherwise.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "dtype.h"
#include "strided.h"

namespace plait::cpu {

// The `matmul` primitive: out (..., m, n) = a (..., m, k) @ b (..., k, n), every operand of
// dtype `dtype` with the output's batch dimensions (stride 0 where broadcast); `a_strides` and
// `b_strides` have `shape`'s length. Returns false (nothing written) for bool, an unknown
// dtype, an output with a stride-0 dimension, or an output overlapping an input; those cases
// are the reference kernel's. Throws std::invalid_argument on malformed layouts.
bool matmul(int dtype, const Dims& shape, int64_t k, uintptr_t out, const Dims& out_strides,
            uintptr_t a, const Dims& a_strides, uintptr_t b, const Dims& b_strides);

// A linear layer over rows: out (rows, n) = x (rows, k) @ w (n, k)^T, plus bias (n) broadcast
// over the rows when `bias` is not 0; every operand contiguous and row-major, float32 or
// float64 (false otherwise: the caller's composite serves the call). Throws
// std::invalid_argument for negative sizes or a null pointer where there are elements.
bool linear(int dtype, int64_t rows, int64_t k, int64_t n, uintptr_t out, uintptr_t x,
            uintptr_t w, uintptr_t bias);

}  // namespace plait::cpu

namespace plait::cpu::blas::detail {

template <class T>
struct MatView {
  T* data;
  int64_t rows;
  int64_t cols;
  int64_t rs;  // row stride, elements
  int64_t cs;  // column stride, elements

  MatView block(int64_t r0, int64_t r1, int64_t c0, int64_t c1) const {
    return {data + r0 * rs + c0 * cs, r1 - r0, c1 - c0, rs, cs};
  }
  MatView transposed() const { return {data, cols, rows, cs, rs}; }
  template <class U = T, std::enable_if_t<!std::is_const_v<U>, int> = 0>
  operator MatView<const U>() const {
    return {data, rows, cols, rs, cs};
  }
};

// How BLAS sees a row-major operand: transposed or not, and its leading dimension.
struct BlasOperand {
  bool trans = false;
  int64_t ld = 0;
};

bool blas_layout_ok(int64_t v);  // fits BLAS's 32-bit integers

// True (and `out` filled) when `v` can be passed to BLAS without a copy: one of its strides
// is 1 and the other at least the extent of that dimension (strides of size-1 dimensions do
// not matter).
template <class T>
bool blas_layout(const MatView<T>& v, BlasOperand& out) {
  const int64_t rows1 = std::max<int64_t>(v.rows, 1);
  const int64_t cols1 = std::max<int64_t>(v.cols, 1);
  if ((v.cols <= 1 || v.cs == 1) && (v.rows <= 1 || v.rs >= cols1)) {
    out = {false, v.rows <= 1 ? cols1 : v.rs};
  } else if ((v.rows <= 1 || v.rs == 1) && (v.cols <= 1 || v.cs >= rows1)) {
    out = {true, v.cols <= 1 ? rows1 : v.cs};
  } else {
    return false;
  }
  return blas_layout_ok(out.ld);
}

// C = alpha * A @ B + beta * C through OpenBLAS on the calling thread; false (nothing done)
// when OpenBLAS is not in use or an operand's layout (or a size past 2^31) needs a copy.
bool blas_gemm(const MatView<const float>& a, const MatView<const float>& b,
               const MatView<float>& c, float alpha, float beta);
bool blas_gemm(const MatView<const double>& a, const MatView<const double>& b,
               const MatView<double>& c, double alpha, double beta);

// The type products accumulate in: float for float16/bfloat16, the type itself for
// float/double, a wrapping unsigned type for integers (the low bits of a wrapped sum are the
// sum modulo 2^bits, as in PyTorch).
template <class T, bool = is_floating_v<T>>
struct Accumulate {
  using type = ComputeType<T>;
};
template <class T>
struct Accumulate<T, false> {
  using type = WrapType<T>;
};
template <class T>
using AccType = typename Accumulate<T>::type;

// The native kernel on the calling thread: C = alpha * A @ B + beta * C (beta == 0 ignores C's
// old values, NaN included). Any strides. Instantiated for every dtype but bool.
template <class T>
void native_gemm(const MatView<const T>& a, const MatView<const T>& b, const MatView<T>& c,
                 AccType<T> alpha, AccType<T> beta);

// float32 products on the packed AVX-512/AVX2 kernels (sgemm.cpp): available when the running
// CPU has AVX2 and FMA (and PLAIT_CPU_VECTOR_BYTES does not ask for 16-byte vectors).
bool packed_sgemm_available();

// C = alpha * A @ B + beta * C for any strides; `threaded`: over the pool's threads (each
// packing what its region of C reads), else on the calling thread. With `bias` (n floats;
// beta is then ignored), C = alpha * A @ B + bias broadcast over the rows, with the bits of
// filling C with the bias first and calling with beta 1. Results do not depend on the thread
// count. Requires packed_sgemm_available() (else runs the native kernel).
void packed_sgemm(const MatView<const float>& a, const MatView<const float>& b,
                  const MatView<float>& c, float alpha, float beta, bool threaded,
                  const float* bias = nullptr);

// One tile, single-threaded: BLAS (copying operands BLAS cannot take as they are) or native.
template <class T>
void matmul_tile(const MatView<const T>& a, const MatView<const T>& b, const MatView<T>& c,
                 AccType<T> alpha, AccType<T> beta);

// The whole product, split into tiles over the pool (inline inside a parallel region).
template <class T>
void matmul_parallel(const MatView<const T>& a, const MatView<const T>& b, const MatView<T>& c,
                     AccType<T> alpha, AccType<T> beta);

}  // namespace plait::cpu::blas::detail
