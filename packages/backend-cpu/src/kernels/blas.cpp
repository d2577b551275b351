// OpenBLAS loaded at run time, and the float/double gemm of blas.h.
//
// The library is the one the scipy-openblas32 wheel ships: 32-bit integers, every symbol
// prefixed with `scipy_`. It is dlopened with RTLD_LOCAL so its symbols never clash with
// another OpenBLAS in the process (numpy's), and never closed: a gemm on another thread may
// still run while Python shuts down.
//
// Threads: OpenBLAS keeps its own pool, which would compete with ours (parallel.h) and, called
// from inside a parallel region, run threads on top of our threads (its threaded level-3
// jobs also wait on each other, so they cannot simply be handed to our pool). So OpenBLAS
// runs single-threaded and the parallelism is ours: `run_tasks` (matmul.cpp) splits the output
// into tiles, one single-threaded gemm each, over parallel_for. A gemm inside a parallel
// region then runs inline as one tile, and torch.set_num_threads governs every thread a
// product uses. Measured on this project's 2-core machine, the tiles were as fast as
// OpenBLAS's own two threads for 2048 x 2048 and 2-3x faster for 256 x 256.
#include "blas.h"

#include <dlfcn.h>

#include <atomic>
#include <climits>
#include <mutex>
#include <vector>

#include "matmul.h"
#include "parallel.h"

namespace plait::cpu::blas {
namespace {

// CBLAS enum values (cblas.h): row-major order, no transpose / transpose.
constexpr int kRowMajor = 101;
constexpr int kNoTrans = 111;
constexpr int kTrans = 112;

using SgemmFn = void (*)(int, int, int, int, int, int, float, const float*, int, const float*,
                         int, float, float*, int);
using DgemmFn = void (*)(int, int, int, int, int, int, double, const double*, int,
                         const double*, int, double, double*, int);
using SetThreadsFn = void (*)(int);
using GetThreadsFn = int (*)();
using ConfigFn = const char* (*)();

struct Library {
  SgemmFn sgemm = nullptr;
  DgemmFn dgemm = nullptr;
  SetThreadsFn set_threads = nullptr;
  GetThreadsFn get_threads = nullptr;
  std::string path;
  std::string config;
};

// Published once, under g_mutex; read lock-free by every gemm.
std::atomic<const Library*> g_library{nullptr};
std::atomic<bool> g_disabled{false};
std::mutex g_mutex;
std::string g_error = "not loaded: blas_load() was not called";

const Library* active() {
  if (g_disabled.load(std::memory_order_relaxed)) return nullptr;
  return g_library.load(std::memory_order_acquire);
}

template <class Fn>
Fn symbol(void* handle, const char* name, std::string& missing) {
  void* p = dlsym(handle, name);
  if (p == nullptr) missing += std::string(missing.empty() ? "" : ", ") + name;
  return reinterpret_cast<Fn>(p);
}

bool fits_blas_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

}  // namespace

bool load(const std::string& path) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_library.load(std::memory_order_acquire) != nullptr) return true;
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    g_error = std::string("dlopen failed: ") + (why ? why : "unknown error");
    return false;
  }
  std::string missing;
  auto* lib = new Library();
  lib->sgemm = symbol<SgemmFn>(handle, "scipy_cblas_sgemm", missing);
  lib->dgemm = symbol<DgemmFn>(handle, "scipy_cblas_dgemm", missing);
  lib->set_threads = symbol<SetThreadsFn>(handle, "scipy_openblas_set_num_threads", missing);
  lib->get_threads = symbol<GetThreadsFn>(handle, "scipy_openblas_get_num_threads", missing);
  const auto config = symbol<ConfigFn>(handle, "scipy_openblas_get_config", missing);
  if (!missing.empty()) {
    delete lib;
    dlclose(handle);
    g_error = "symbols not found in " + path + ": " + missing;
    return false;
  }
  lib->path = path;
  const char* text = config();
  lib->config = text ? text : "";
  lib->set_threads(1);  // our pool does the threading (see the top of this file)
  g_error.clear();
  g_library.store(lib, std::memory_order_release);
  return true;
}

bool loaded() { return active() != nullptr; }

std::string load_error() {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_library.load(std::memory_order_acquire) != nullptr && g_disabled.load()) {
    return "disabled by blas_disable()";
  }
  return g_error;
}

void set_load_error(const std::string& reason) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_library.load(std::memory_order_acquire) == nullptr) g_error = "not loaded: " + reason;
}

std::string library_path() {
  const Library* lib = g_library.load(std::memory_order_acquire);
  return lib ? lib->path : std::string();
}

std::string config() {
  const Library* lib = g_library.load(std::memory_order_acquire);
  return lib ? lib->config : std::string();
}

int library_threads() {
  const Library* lib = g_library.load(std::memory_order_acquire);
  return lib ? lib->get_threads() : 0;
}

void set_disabled(bool disabled) { g_disabled.store(disabled); }

// -- single-threaded tile products ---------------------------------------------------------

namespace detail {

bool blas_gemm(const MatView<const float>& a, const MatView<const float>& b,
               const MatView<float>& c, float alpha, float beta) {
  const Library* lib = active();
  if (lib == nullptr) return false;
  BlasOperand oa, ob;
  if (!blas_layout(a, oa) || !blas_layout(b, ob)) return false;
  const int64_t ldc = c.rows > 1 ? c.rs : std::max<int64_t>(c.cols, 1);
  if ((c.cols > 1 && c.cs != 1) || ldc < std::max<int64_t>(c.cols, 1)) return false;
  if (!fits_blas_int(c.rows) || !fits_blas_int(c.cols) || !fits_blas_int(a.cols) ||
      !fits_blas_int(ldc)) {
    return false;
  }
  lib->sgemm(kRowMajor, oa.trans ? kTrans : kNoTrans, ob.trans ? kTrans : kNoTrans,
             static_cast<int>(c.rows), static_cast<int>(c.cols), static_cast<int>(a.cols), alpha,
             a.data, static_cast<int>(oa.ld), b.data, static_cast<int>(ob.ld), beta, c.data,
             static_cast<int>(ldc));
  return true;
}

bool blas_gemm(const MatView<const double>& a, const MatView<const double>& b,
               const MatView<double>& c, double alpha, double beta) {
  const Library* lib = active();
  if (lib == nullptr) return false;
  BlasOperand oa, ob;
  if (!blas_layout(a, oa) || !blas_layout(b, ob)) return false;
  const int64_t ldc = c.rows > 1 ? c.rs : std::max<int64_t>(c.cols, 1);
  if ((c.cols > 1 && c.cs != 1) || ldc < std::max<int64_t>(c.cols, 1)) return false;
  if (!fits_blas_int(c.rows) || !fits_blas_int(c.cols) || !fits_blas_int(a.cols) ||
      !fits_blas_int(ldc)) {
    return false;
  }
  lib->dgemm(kRowMajor, oa.trans ? kTrans : kNoTrans, ob.trans ? kTrans : kNoTrans,
             static_cast<int>(c.rows), static_cast<int>(c.cols), static_cast<int>(a.cols), alpha,
             a.data, static_cast<int>(oa.ld), b.data, static_cast<int>(ob.ld), beta, c.data,
             static_cast<int>(ldc));
  return true;
}

bool blas_layout_ok(int64_t v) { return fits_blas_int(v); }

}  // namespace detail

// -- the public gemm -----------------------------------------------------------------------

namespace {

template <class T>
void gemm_impl(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha,
               const T* a, int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  // op(A) is m x k: A stored m x k with row stride lda, or k x m (transposed).
  using detail::MatView;
  const MatView<const T> va = trans_a ? MatView<const T>{a, m, k, 1, lda}
                                      : MatView<const T>{a, m, k, lda, 1};
  const MatView<const T> vb = trans_b ? MatView<const T>{b, k, n, 1, ldb}
                                      : MatView<const T>{b, k, n, ldb, 1};
  const MatView<T> vc{c, m, n, ldc, 1};
  detail::matmul_parallel(va, vb, vc, alpha, beta);
}

}  // namespace

void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
          const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
          int64_t ldc) {
  gemm_impl(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
          const double* a, int64_t lda, const double* b, int64_t ldb, double beta, double* c,
          int64_t ldc) {
  gemm_impl(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace plait::cpu::blas
