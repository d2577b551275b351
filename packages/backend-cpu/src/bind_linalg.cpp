// Bindings of the matrix products (kernels/matmul.cpp) and of the OpenBLAS loader
// (kernels/blas.cpp).
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>

#include "bindings.h"
#include "kernels/blas.h"
#include "kernels/dtype.h"
#include "kernels/matmul.h"

using namespace nanobind::literals;

namespace plait::cpu {
namespace {

bool matmul_entry(int dtype, const Dims& shape, int64_t k, uintptr_t out,
                  const Dims& out_strides, uintptr_t a, const Dims& a_strides, uintptr_t b,
                  const Dims& b_strides) {
  // Multiply-adds, not output elements, decide whether the GIL is worth releasing.
  const double work = static_cast<double>(numel(shape)) * static_cast<double>(k);
  std::optional<nb::gil_scoped_release> nogil;
  if (work > static_cast<double>(kReleaseGilAbove)) nogil.emplace();
  return matmul(dtype, shape, k, out, out_strides, a, a_strides, b, b_strides);
}

bool linear_entry(int dtype, int64_t rows, int64_t k, int64_t n, uintptr_t out, uintptr_t x,
                  uintptr_t w, uintptr_t bias) {
  const double work = static_cast<double>(rows) * static_cast<double>(n) *
                      static_cast<double>(k);
  std::optional<nb::gil_scoped_release> nogil;
  if (work > static_cast<double>(kReleaseGilAbove)) nogil.emplace();
  return linear(dtype, rows, k, n, out, x, w, bias);
}

// blas::gemm on raw addresses, for tests of the interface other kernels (conv) use.
bool gemm_entry(int dtype, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                double alpha, uintptr_t a, int64_t lda, uintptr_t b, int64_t ldb, double beta,
                uintptr_t c, int64_t ldc) {
  nb::gil_scoped_release nogil;
  if (dtype == dtype_code<float>()) {
    blas::gemm(trans_a, trans_b, m, n, k, static_cast<float>(alpha),
               reinterpret_cast<const float*>(a), lda, reinterpret_cast<const float*>(b), ldb,
               static_cast<float>(beta), reinterpret_cast<float*>(c), ldc);
    return true;
  }
  if (dtype == dtype_code<double>()) {
    blas::gemm(trans_a, trans_b, m, n, k, alpha, reinterpret_cast<const double*>(a), lda,
               reinterpret_cast<const double*>(b), ldb, beta, reinterpret_cast<double*>(c), ldc);
    return true;
  }
  return false;
}

nb::dict blas_info() {
  nb::dict d;
  d["loaded"] = blas::loaded();
  d["library"] = blas::library_path();
  d["config"] = blas::config();
  d["error"] = blas::load_error();
  d["library_threads"] = blas::library_threads();
  d["packed_kernel"] = blas::packed_kernel();
  return d;
}

}  // namespace

void bind_linalg(nb::module_& m) {
  m.def("matmul", &matmul_entry, "dtype"_a, "shape"_a, "k"_a, "out"_a, "out_strides"_a, "a"_a,
        "a_strides"_a, "b"_a, "b_strides"_a,
        "out (..., m, n) = a (..., m, k) @ b (..., k, n); False leaves the case to the "
        "reference kernel.");
  m.def("linear", &linear_entry, "dtype"_a, "rows"_a, "k"_a, "n"_a, "out"_a, "x"_a, "w"_a,
        "bias"_a,
        "out (rows, n) = x (rows, k) @ w (n, k)^T [+ bias (n)], contiguous float32/float64 "
        "operands (bias 0: none); False leaves the case to the composite.");
  m.def("gemm", &gemm_entry, "dtype"_a, "trans_a"_a, "trans_b"_a, "m"_a, "n"_a, "k"_a,
        "alpha"_a, "a"_a, "lda"_a, "b"_a, "ldb"_a, "beta"_a, "c"_a, "ldc"_a,
        "Row-major C = alpha * op(A) @ op(B) + beta * C (float32/float64; False otherwise).");
  m.def("blas_load", &blas::load, "path"_a,
        "dlopen the scipy-openblas32 library at `path` for float matrix products; False (and "
        "blas_info()['error'] says why) when it cannot be used.");
  m.def("blas_set_error", &blas::set_load_error, "reason"_a,
        "Record why OpenBLAS was not loaded (shown by blas_info() while it is not).");
  m.def("blas_info", &blas_info,
        "Whether OpenBLAS is in use, its library path, configuration and own thread count "
        "(always 1: products are tiled over the kernels' threads), or why not; and the packed "
        "float32 kernel in use ('' when none).");
  m.def("blas_disable", &blas::set_disabled, "disabled"_a,
        "Test hook: route every product to the native kernel (True) or back to OpenBLAS.");
  m.def("packed_disable", &blas::set_packed_disabled, "disabled"_a,
        "Test hook: route float32 products to OpenBLAS or the native kernel (True) instead of "
        "the packed AVX2/AVX-512 kernels (blas_info()['packed_kernel']), or back (False).");
}

}  // namespace plait::cpu
