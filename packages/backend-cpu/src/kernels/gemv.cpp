// Products with one output row or one output column: dot products, matrix-vector and
// vector-matrix products (gemv.h).
//
// The packed GEMM kernels (sgemm.cpp) tile the output in register blocks of up to 6 rows by
// 64 columns and zero-pad whatever is narrower, so a product whose output is a single column
// (a dot product, `W @ v`, Linear(k, 1)) or a single row (one sample through a layer) did up
// to 384 times the useful multiply-adds there. Here each output element is one pass over the
// depth:
// - a sum over contiguous operands is added lane-wise over blocks of kLanes (so that the loop
//   vectorises without reassociation flags), then the tail in order, then the lanes pairwise;
// - a row output over a B whose rows are contiguous (x @ B) adds `x[p] * B[p, :]` row after
//   row into the output, in depth order (a vectorised axpy per row of B).
// Work is split over output elements only, so every element sums in the same order whatever
// the thread count.
#include "gemv.h"

#include <algorithm>
#include <type_traits>

#include "parallel.h"
#include "simd.h"

namespace plait::cpu::blas::detail {
namespace {

constexpr int kLanes = 32;
// Multiply-adds per task below which another thread costs more than it saves.
constexpr int64_t kGrainWork = 1 << 15;

template <class T>
PLAIT_CLONES T contiguous_dot(const T* __restrict x, const T* __restrict y, int64_t k) {
  T lanes[kLanes] = {};
  int64_t p = 0;
  for (; p + kLanes <= k; p += kLanes) {
    for (int l = 0; l < kLanes; ++l) lanes[l] += x[p + l] * y[p + l];
  }
  T tail = T(0);
  for (; p < k; ++p) tail += x[p] * y[p];
  for (int width = kLanes / 2; width > 0; width /= 2) {
    for (int l = 0; l < width; ++l) lanes[l] += lanes[l + width];
  }
  return lanes[0] + tail;
}

template <class T>
T strided_dot(const T* x, int64_t xs, const T* y, int64_t ys, int64_t k) {
  if (xs == 1 && ys == 1) return contiguous_dot(x, y, k);
  T sum = T(0);
  for (int64_t p = 0; p < k; ++p) sum += x[p * xs] * y[p * ys];
  return sum;
}

template <class T>
void store(T* c, T value, T alpha, T beta) {
  // beta == 0 never reads c (it may hold NaN: an uninitialised output)
  *c = beta == T(0) ? alpha * value : alpha * value + beta * *c;
}

// out[j] += a[p] * b[p, j0:j1] for every p, in depth order (b's rows contiguous).
template <class T>
PLAIT_CLONES void axpy_rows(T* __restrict out, const T* a, int64_t as, const T* b, int64_t brs,
                            int64_t k, int64_t width) {
  for (int64_t p = 0; p < k; ++p) {
    const T scale = a[p * as];
    const T* __restrict row = b + p * brs;
    for (int64_t j = 0; j < width; ++j) out[j] += scale * row[j];
  }
}

template <class T>
int64_t grain_for(int64_t k) {
  return std::max<int64_t>(1, kGrainWork / std::max<int64_t>(k, 1));
}

}  // namespace

template <class T>
bool vector_product(const MatView<const T>& a, const MatView<const T>& b, const MatView<T>& c,
                    T alpha, T beta) {
  static_assert(std::is_floating_point_v<T>);
  const int64_t m = c.rows, n = c.cols, k = a.cols;
  if (k <= 0 || (m != 1 && n != 1)) return false;
  if (n == 1) {  // one output column: a dot product per row of a
    parallel_for(m, grain_for<T>(k), [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        store(c.data + i * c.rs, strided_dot(a.data + i * a.rs, a.cs, b.data, b.rs, k), alpha,
              beta);
      }
    });
    return true;
  }
  // one output row: x (1 x k) @ b (k x n)
  if (b.cs == 1 && c.cs == 1) {  // b's rows contiguous: axpy of each row into the output
    parallel_for(n, std::max<int64_t>(kLanes, grain_for<T>(k)), [&](int64_t j0, int64_t j1) {
      const int64_t width = j1 - j0;
      T* out = c.data + j0;
      T sums[256];
      for (int64_t s0 = 0; s0 < width; s0 += 256) {  // (a bounded buffer: stays in L1)
        const int64_t w = std::min<int64_t>(256, width - s0);
        std::fill(sums, sums + w, T(0));
        axpy_rows(sums, a.data, a.cs, b.data + j0 + s0, b.rs, k, w);
        for (int64_t j = 0; j < w; ++j) store(out + s0 + j, sums[j], alpha, beta);
      }
    });
    return true;
  }
  // b's columns contiguous (x @ W^T, W row-major) or any strides: a dot product per column
  parallel_for(n, grain_for<T>(k), [&](int64_t j0, int64_t j1) {
    for (int64_t j = j0; j < j1; ++j) {
      store(c.data + j * c.cs, strided_dot(a.data, a.cs, b.data + j * b.cs, b.rs, k), alpha,
            beta);
    }
  });
  return true;
}

template bool vector_product<float>(const MatView<const float>&, const MatView<const float>&,
                                    const MatView<float>&, float, float);
template bool vector_product<double>(const MatView<const double>&,
                                     const MatView<const double>&, const MatView<double>&,
                                     double, double);

}  // namespace plait::cpu::blas::detail
