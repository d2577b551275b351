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
// the kernel in use, e.g. "avx512 6x64" ("" when none: OpenBLAS or the native kernel then).
std::string packed_kernel();

// Test hook: send float32 products to OpenBLAS / the native kernel (true) or back (false).
void set_packed_disabled(bool disabled);

// The packed float32 kernels sum an element's depth in slabs of this many products, adding
// each slab's sum onto the previous ones: products over depths that are multiples of it,
// accumulated with beta 1, give the same bits as one product over their whole depth.
inline constexpr int64_t kPackedSlab = 256;

// Products whose operands the caller packs itself, for a convolution that multiplies one
// weight by many column tiles: the weight is packed once (pack_a) instead of once per tile,
// and im2col writes the columns straight into B panels instead of a buffer the product copies
// again. Every element sums its depth in the slabs and order packed_sgemm uses, so results
// are the same bits as through gemm. All of these need packed_kernel() to be non-empty.
//
// Columns of a B panel (64 on AVX-512, 16 on AVX2); 0 without the packed kernels.
int64_t packed_panel_width();

// Floats that pack_a writes for an m x k operand.
int64_t packed_a_floats(int64_t m, int64_t k);

// The row-major m x k matrix a (row stride lda >= k) packed into out (packed_a_floats(m, k)
// floats).
void pack_a(int64_t m, int64_t k, const float* a, int64_t lda, float* out);

// c[m x n] (row stride ldc) = A @ B + beta * c on the calling thread (beta 0 never reads c),
// A packed by pack_a(m, k, ...), B (k x n) as panels of W = packed_panel_width() columns:
// panel j (columns j * W to j * W + W) at b_panels + j * panel_stride, its row p (k rows) at
// + p * W. The last panel's columns past n must hold finite values (zeros). B panels 64-byte
// aligned load fastest.
void packed_gemm_panels(int64_t m, int64_t n, int64_t k, const float* a_packed,
                        const float* b_panels, int64_t panel_stride, float beta, float* c,
                        int64_t ldc);

// Floats between the slabs of a packed m x k operand (m > 1): pack_a's layout puts row r,
// depth p0 + p of slab s (p < kPackedSlab) at s * packed_a_slab_floats(m) + r * kPackedSlab
// + p, so a caller may write an operand there itself (a weight gradient's im2col). Rows past
// m in the last panel are never read.
int64_t packed_a_slab_floats(int64_t m);

// c[m x n] (row stride ldc) = A @ B + beta * c on the calling thread (beta 0 never reads c),
// A (m > 1) packed as pack_a lays it out, B any k x n view (element (p, j) at
// b[p * b_rs + j * b_cs]), packed here.
void packed_gemm_b(int64_t m, int64_t n, int64_t k, const float* a_packed, const float* b,
                   int64_t b_rs, int64_t b_cs, float beta, float* c, int64_t ldc);

}  // namespace plait::cpu::blas
