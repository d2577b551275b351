// The `matmul` primitive: batched products, tiles over threads, BLAS or the native kernel.
//
// Work is a list of tasks, each one tile of one batch item's output, run by parallel_for; a
// task's product runs single-threaded (see blas.cpp on why OpenBLAS never threads itself).
// Batch dimensions are walked by index arithmetic, so stride-0 (broadcast) batch dimensions
// read the same matrix again instead of a materialised copy.
#include <algorithm>
#include <cstring>
#include <memory>
#include <type_traits>

#include "blas.h"
#include "dtype.h"
#include "gemv.h"
#include "matmul.h"
#include "parallel.h"
#include "strided.h"

namespace plait::cpu {
namespace blas::detail {
namespace {

// Multiply-adds below which a task is not worth a thread (about 10 microseconds of BLAS).
constexpr double kTaskWork = 1 << 18;
// Tiles split a dimension at multiples of this (whole micro-tiles of the BLAS kernels).
constexpr int64_t kTileAlign = 32;

// BLAS can write C as it is: unit column stride and rows that do not overlap.
template <class T>
bool writable_by_blas(const MatView<T>& c) {
  return (c.cols <= 1 || c.cs == 1) && (c.rows <= 1 || c.rs >= std::max<int64_t>(c.cols, 1));
}

template <class T>
std::unique_ptr<T[]> contiguous_copy(const MatView<const T>& v) {
  std::unique_ptr<T[]> buf(new T[std::max<int64_t>(v.rows * v.cols, 1)]);
  for (int64_t i = 0; i < v.rows; ++i) {
    for (int64_t j = 0; j < v.cols; ++j) buf[i * v.cols + j] = v.data[i * v.rs + j * v.cs];
  }
  return buf;
}

// float/double through BLAS, copying what BLAS cannot take; false leaves it to the native
// kernel (OpenBLAS not loaded, or a size past BLAS's 32-bit integers).
template <class F>
bool blas_tile(MatView<const F> a, MatView<const F> b, MatView<F> c, F alpha, F beta) {
  if (!loaded() || !blas_layout_ok(c.rows) || !blas_layout_ok(c.cols) ||
      !blas_layout_ok(a.cols)) {
    return false;
  }
  // A column-major output is a row-major C^T = B^T A^T: no copy of C needed.
  if (!writable_by_blas(c) && writable_by_blas(c.transposed())) {
    const MatView<const F> at = a.transposed();
    a = b.transposed();
    b = at;
    c = c.transposed();
  }
  BlasOperand layout;
  std::unique_ptr<F[]> abuf, bbuf, cbuf;
  if (!blas_layout(a, layout)) {
    abuf = contiguous_copy(a);
    a = {abuf.get(), a.rows, a.cols, a.cols, 1};
  }
  if (!blas_layout(b, layout)) {
    bbuf = contiguous_copy(b);
    b = {bbuf.get(), b.rows, b.cols, b.cols, 1};
  }
  MatView<F> target = c;
  if (!writable_by_blas(c)) {
    cbuf = beta != F(0) ? contiguous_copy<F>(c) : std::unique_ptr<F[]>(new F[c.rows * c.cols]);
    target = {cbuf.get(), c.rows, c.cols, c.cols, 1};
  }
  if (!blas_gemm(a, b, target, alpha, beta)) return false;
  if (cbuf) {
    for (int64_t i = 0; i < c.rows; ++i) {
      for (int64_t j = 0; j < c.cols; ++j) c.data[i * c.rs + j * c.cs] = cbuf[i * c.cols + j];
    }
  }
  return true;
}

// float16/bfloat16 through sgemm: blocks converted to float32 buffers (bounded size, reused),
// products accumulated over the depth in float32, rounded once on store.
template <class T>
bool half_tile(const MatView<const T>& a, const MatView<const T>& b, const MatView<T>& c,
               float alpha, float beta) {
  constexpr int64_t kMB = 256, kNB = 256, kKB = 512;
  if (!loaded()) return false;
  const int64_t m = c.rows, n = c.cols, k = a.cols;
  const int64_t mb_max = std::min(kMB, m), nb_max = std::min(kNB, n);
  const int64_t kb_max = std::max<int64_t>(1, std::min(kKB, k));
  std::unique_ptr<float[]> af(new float[mb_max * kb_max]);
  std::unique_ptr<float[]> bf(new float[kb_max * nb_max]);
  std::unique_ptr<float[]> cf(new float[mb_max * nb_max]);
  for (int64_t j0 = 0; j0 < n; j0 += kNB) {
    const int64_t nb = std::min(kNB, n - j0);
    for (int64_t i0 = 0; i0 < m; i0 += kMB) {
      const int64_t mb = std::min(kMB, m - i0);
      const MatView<float> cv{cf.get(), mb, nb, nb, 1};
      if (k == 0) std::fill(cf.get(), cf.get() + mb * nb, 0.0f);
      for (int64_t p0 = 0; p0 < k; p0 += kKB) {
        const int64_t kb = std::min(kKB, k - p0);
        for (int64_t i = 0; i < mb; ++i) {
          const T* row = a.data + (i0 + i) * a.rs + p0 * a.cs;
          for (int64_t p = 0; p < kb; ++p) af[i * kb + p] = cast<float>(row[p * a.cs]);
        }
        for (int64_t p = 0; p < kb; ++p) {
          const T* row = b.data + (p0 + p) * b.rs + j0 * b.cs;
          for (int64_t j = 0; j < nb; ++j) bf[p * nb + j] = cast<float>(row[j * b.cs]);
        }
        const MatView<const float> av{af.get(), mb, kb, kb, 1};
        const MatView<const float> bv{bf.get(), kb, nb, nb, 1};
        if (!blas_gemm(av, bv, cv, 1.0f, p0 == 0 ? 0.0f : 1.0f)) return false;
      }
      for (int64_t i = 0; i < mb; ++i) {
        T* crow = c.data + (i0 + i) * c.rs + j0 * c.cs;
        for (int64_t j = 0; j < nb; ++j) {
          float v = alpha * cf[i * nb + j];
          if (beta != 0.0f) v += beta * cast<float>(crow[j * c.cs]);
          crow[j * c.cs] = cast<T>(v);
        }
      }
    }
  }
  return true;
}

}  // namespace

template <class T>
void matmul_tile(const MatView<const T>& a, const MatView<const T>& b, const MatView<T>& c,
                 AccType<T> alpha, AccType<T> beta) {
  if (c.rows <= 0 || c.cols <= 0) return;
  if (a.cols == 0) {  // an empty sum: C = beta * C, which the native kernel does cheaply
    native_gemm<T>(a, b, c, alpha, beta);
    return;
  }
  if constexpr (std::is_same_v<T, float>) {
    if (packed_sgemm_available()) {
      packed_sgemm(a, b, c, alpha, beta, false);
      return;
    }
  }
  if constexpr (std::is_floating_point_v<T>) {
    if (blas_tile<T>(a, b, c, alpha, beta)) return;
  } else if constexpr (is_reduced_float_v<T>) {
    // Only sizes past BLAS's integers fail half way, and those are never reached: the
    // blocks are small and a row stride past 2^31 is left to the native kernel up front.
    if (half_tile(a, b, c, alpha, beta)) return;
  }
  native_gemm<T>(a, b, c, alpha, beta);
}

namespace {

// Splits every item's output into `tiles` parts along its longer dimension.
struct TilePlan {
  int64_t tiles = 1;
  bool by_rows = true;
  int64_t step = 0;  // rows or columns per tile
};

TilePlan plan_tiles(int64_t items, int64_t m, int64_t n, int64_t k) {
  TilePlan plan;
  plan.by_rows = m >= n;
  const int64_t extent = plan.by_rows ? m : n;
  plan.step = extent;
  const int threads = num_threads();
  if (threads <= 1 || items >= threads || in_parallel_region()) return plan;
  const double work = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const int64_t wanted = (threads + items - 1) / items;
  const int64_t by_work =
      static_cast<int64_t>(std::min(work / kTaskWork, static_cast<double>(wanted)));
  const int64_t by_extent = std::max<int64_t>(1, extent / kTileAlign);
  plan.tiles = std::max<int64_t>(1, std::min(by_work, by_extent));
  if (plan.tiles > 1) {
    plan.step = (extent + plan.tiles - 1) / plan.tiles;
    plan.step = (plan.step + kTileAlign - 1) / kTileAlign * kTileAlign;
    plan.tiles = (extent + plan.step - 1) / plan.step;
  }
  return plan;
}

// Runs every (item, tile) task; `views(item, a, b, c)` sets an item's operands.
template <class T, class Views>
void run_tasks(int64_t items, int64_t m, int64_t n, int64_t k, AccType<T> alpha,
               AccType<T> beta, const Views& views) {
  if (items <= 0 || m <= 0 || n <= 0) return;
  if constexpr (std::is_floating_point_v<T>) {
    // One output row or column (dot products, matrix-vector products): the loops of
    // gemv.cpp, not the GEMM tiles, which would pad it to a whole register block.
    if (k > 0 && (m == 1 || n == 1)) {
      auto product = [&](int64_t item) {
        MatView<const T> a{}, b{};
        MatView<T> c{};
        views(item, a, b, c);
        vector_product<T>(a, b, c, alpha, beta);
      };
      const double work = static_cast<double>(m) * static_cast<double>(n) *
                          static_cast<double>(k);
      parallel_for(items, std::max<int64_t>(1, static_cast<int64_t>(kTaskWork / work)),
                   [&](int64_t i0, int64_t i1) {
                     for (int64_t item = i0; item < i1; ++item) product(item);
                   });
      return;
    }
  }
  if constexpr (std::is_same_v<T, float>) {
    // Fewer items than threads: each product over every thread, sharing its packed B.
    if (k > 0 && items < num_threads() && packed_sgemm_available() && !in_parallel_region()) {
      for (int64_t item = 0; item < items; ++item) {
        MatView<const T> a{}, b{};
        MatView<T> c{};
        views(item, a, b, c);
        packed_sgemm(a, b, c, alpha, beta, true);
      }
      return;
    }
  }
  const TilePlan plan = plan_tiles(items, m, n, k);
  const double task_work = static_cast<double>(m) * static_cast<double>(n) *
                           static_cast<double>(std::max<int64_t>(k, 1)) /
                           static_cast<double>(plan.tiles);
  const int64_t grain =
      std::max<int64_t>(1, static_cast<int64_t>(kTaskWork / std::max(task_work, 1.0)));
  parallel_for(items * plan.tiles, grain, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      MatView<const T> a{}, b{};
      MatView<T> c{};
      views(t / plan.tiles, a, b, c);
      const int64_t lo = (t % plan.tiles) * plan.step;
      if (plan.by_rows) {
        const int64_t hi = std::min(m, lo + plan.step);
        matmul_tile<T>(a.block(lo, hi, 0, k), b, c.block(lo, hi, 0, n), alpha, beta);
      } else {
        const int64_t hi = std::min(n, lo + plan.step);
        matmul_tile<T>(a, b.block(0, k, lo, hi), c.block(0, m, lo, hi), alpha, beta);
      }
    }
  });
}

}  // namespace

template <class T>
void matmul_parallel(const MatView<const T>& a, const MatView<const T>& b, const MatView<T>& c,
                     AccType<T> alpha, AccType<T> beta) {
  run_tasks<T>(1, c.rows, c.cols, a.cols, alpha, beta,
               [&](int64_t, MatView<const T>& ai, MatView<const T>& bi, MatView<T>& ci) {
                 ai = a;
                 bi = b;
                 ci = c;
               });
}

template void matmul_parallel<float>(const MatView<const float>&, const MatView<const float>&,
                                     const MatView<float>&, float, float);
template void matmul_parallel<double>(const MatView<const double>&,
                                      const MatView<const double>&, const MatView<double>&,
                                      double, double);

}  // namespace blas::detail

namespace {

template <class T>
void matmul_typed(const Dims& shape, int64_t k, uintptr_t out, const Dims& out_strides,
                  uintptr_t a, const Dims& a_strides, uintptr_t b, const Dims& b_strides) {
  using blas::detail::MatView;
  const size_t nd = shape.size();
  const size_t batch_dims = nd - 2;
  const int64_t m = shape[nd - 2];
  const int64_t n = shape[nd - 1];
  int64_t items = 1;
  for (size_t d = 0; d < batch_dims; ++d) items *= shape[d];
  T* c0 = reinterpret_cast<T*>(out);
  const T* a0 = reinterpret_cast<const T*>(a);
  const T* b0 = reinterpret_cast<const T*>(b);
  blas::detail::run_tasks<T>(
      items, m, n, k, blas::detail::AccType<T>(1), blas::detail::AccType<T>(0),
      [&](int64_t item, MatView<const T>& av, MatView<const T>& bv, MatView<T>& cv) {
        int64_t oc = 0, oa = 0, ob = 0;
        for (size_t d = batch_dims; d-- > 0;) {
          const int64_t i = item % shape[d];
          item /= shape[d];
          oc += i * out_strides[d];
          oa += i * a_strides[d];
          ob += i * b_strides[d];
        }
        av = {a0 + oa, m, k, a_strides[nd - 2], a_strides[nd - 1]};
        bv = {b0 + ob, k, n, b_strides[nd - 2], b_strides[nd - 1]};
        cv = {c0 + oc, m, n, out_strides[nd - 2], out_strides[nd - 1]};
      });
}

// The byte range an operand of `shape` with `strides` touches overlaps another's.
bool overlaps(uintptr_t p, const Dims& shape, const Dims& strides, uintptr_t q,
              const Dims& q_shape, const Dims& q_strides, size_t itemsize) {
  const Extent e = extent(p, shape, strides, itemsize);
  const Extent f = extent(q, q_shape, q_strides, itemsize);
  return e.first < f.last && f.first < e.last;
}

}  // namespace

bool matmul(int dtype, const Dims& shape, int64_t k, uintptr_t out, const Dims& out_strides,
            uintptr_t a, const Dims& a_strides, uintptr_t b, const Dims& b_strides) {
  const size_t nd = shape.size();
  if (nd < 2 || nd > static_cast<size_t>(kMaxDims) || k < 0) {
    throw std::invalid_argument("plait_backend_cpu: matmul needs (..., m, n) outputs and k >= 0");
  }
  check_layout(shape, {&out_strides, &a_strides, &b_strides});
  if (numel(shape) == 0) return dtype != 0 && itemsize(dtype) != 0;
  if (has_zero_stride(shape, out_strides)) return false;
  Dims a_shape = shape, b_shape = shape;
  a_shape[nd - 1] = k;
  b_shape[nd - 2] = k;
  const size_t size = itemsize(dtype);
  if (k > 0 && (overlaps(out, shape, out_strides, a, a_shape, a_strides, size) ||
                overlaps(out, shape, out_strides, b, b_shape, b_strides, size))) {
    return false;  // the reference kernel computes the product before it stores
  }
  bool handled = false;
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      matmul_typed<T>(shape, k, out, out_strides, a, a_strides, b, b_strides);
      handled = true;
    }
  });
  return handled;
}

namespace {

template <class T>
void linear_typed(int64_t rows, int64_t k, int64_t n, T* out, const T* x, const T* w,
                  const T* bias) {
  using blas::detail::MatView;
  if (k > 0 && (rows == 1 || n == 1)) {  // one sample, or one output feature: gemv.cpp
    if (bias != nullptr) {
      for (int64_t i = 0; i < rows; ++i) std::memcpy(out + i * n, bias, sizeof(T) * n);
    }
    blas::detail::vector_product<T>(MatView<const T>{x, rows, k, k, 1},
                                     MatView<const T>{w, k, n, 1, k},
                                     MatView<T>{out, rows, n, n, 1}, T(1),
                                     bias != nullptr ? T(1) : T(0));
    return;
  }
  if constexpr (std::is_same_v<T, float>) {
    // The packed kernels write the bias into each tile of the output as they reach it (on
    // the thread that owns the tile, while it is in L1) instead of a serial pass over the
    // whole output before the product; the same bits.
    if (bias != nullptr && k > 0 && blas::detail::packed_sgemm_available()) {
      blas::detail::packed_sgemm(MatView<const float>{x, rows, k, k, 1},
                                 MatView<const float>{w, k, n, 1, k},
                                 MatView<float>{out, rows, n, n, 1}, 1.0f, 0.0f, true, bias);
      return;
    }
  }
  if (bias != nullptr) {  // the bias in every row, then the product added onto it (beta 1)
    for (int64_t i = 0; i < rows; ++i) std::memcpy(out + i * n, bias, sizeof(T) * n);
  }
  blas::gemm(false, true, rows, n, k, T(1), x, k, w, k, bias != nullptr ? T(1) : T(0), out, n);
}

}  // namespace

bool linear(int dtype, int64_t rows, int64_t k, int64_t n, uintptr_t out, uintptr_t x,
            uintptr_t w, uintptr_t bias) {
  if (rows < 0 || k < 0 || n < 0) {
    throw std::invalid_argument("plait_backend_cpu: linear needs sizes >= 0");
  }
  if (rows == 0 || n == 0) return dtype == dtype_code<float>() || dtype == dtype_code<double>();
  if (out == 0 || (k > 0 && (x == 0 || w == 0))) {
    throw std::invalid_argument("plait_backend_cpu: linear got a null pointer");
  }
  if (dtype == dtype_code<float>()) {
    linear_typed(rows, k, n, reinterpret_cast<float*>(out), reinterpret_cast<const float*>(x),
                 reinterpret_cast<const float*>(w), reinterpret_cast<const float*>(bias));
    return true;
  }
  if (dtype == dtype_code<double>()) {
    linear_typed(rows, k, n, reinterpret_cast<double*>(out), reinterpret_cast<const double*>(x),
                 reinterpret_cast<const double*>(w), reinterpret_cast<const double*>(bias));
    return true;
  }
  return false;
}

}  // namespace plait::cpu
