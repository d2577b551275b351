// Matrix products: OpenBLAS (from the scipy-openblas32 wheel, loaded at run time) for float32
// and float64, a cache-blocked native kernel for every other case.
//
// OpenBLAS is never linked at build time: the Python side finds the shared library and calls
// `load(path)`, which dlopens it and resolves the gemm symbols. Until then, or when loading
// fails (the reason is kept in `load_error()`), `gemm` runs the native kernel.
//
// Threads: OpenBLAS is kept single-threaded and `gemm` splits C into tiles over our pool
// (parallel.h), so `torch.set_num_threads` governs every thread a product uses. Called from
// inside a `parallel_for` region, `gemm` runs inline on the calling thread: no
// oversubscription, and no nested pool.
#pragma once

#include <cstdint>
#include <string>

namespace plait::cpu::blas {

// Row-major C[m,n] = alpha * op(A)[m,k] @ op(B)[k,n] + beta * C; op = transpose when trans_*.
// lda/ldb/ldc are row strides in elements (of A and B as stored, i.e. before op). Uses
// OpenBLAS when loaded, else the native kernel. With k == 0 the product is zero (C = beta * C;
// beta == 0 overwrites C, NaNs included). Safe to call from any thread.
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
          const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
          int64_t ldc);
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
          const double* a, int64_t lda, const double* b, int64_t ldb, double beta, double* c,
          int64_t ldc);

bool loaded();  // OpenBLAS available (loaded and not disabled)

// dlopens the OpenBLAS library at `path` and resolves its symbols. Returns true on success;
// on failure keeps the native kernel and records why (load_error()). Loading twice is a no-op.
bool load(const std::string& path);

// Why OpenBLAS is not in use ("" when it is).
std::string load_error();

// Records why the caller did not even try `load` (the wheel is missing, a test disabled it).
void set_load_error(const std::string& reason);

// The loaded library's path and its own configuration string ("" when not loaded).
std::string library_path();
std::string config();

// OpenBLAS's own thread count (0 when not loaded): always 1, see above.
int library_threads();

// Test hook: route every gemm to the native kernel (true) or back to OpenBLAS (false).
void set_disabled(bool disabled);

// float32 products run on our own packed kernels (sgemm.cpp) where the CPU has AVX2 and FMA;
// the kernel in use, e.g. "avx512 12x32" ("" when none: OpenBLAS or the native kernel then).
std::string packed_kernel();

// Test hook: send float32 products to OpenBLAS / the native kernel (true) or back (false).
void set_packed_disabled(bool disabled);

// The packed float32 kernels sum an element's depth in slabs of this many products, adding
// each slab's sum onto the previous ones: products over depths that are multiples of it,
// accumulated with beta 1, give the same bits as one product over their whole depth.
inline constexpr int64_t kPackedSlab = 256;

}  // namespace plait::cpu::blas
