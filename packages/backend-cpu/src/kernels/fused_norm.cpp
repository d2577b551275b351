// Fused softmax / log_softmax and layer norm; see fused_norm.h.
//
// Hot loops are small PLAIT_CLONES functions over one contiguous row (or, for softmax along a
// non-last dimension, over a block of `inner` columns) that keep lane-wise partial results in
// arrays, so they vectorise without reassociation flags. T is the storage type, C =
// ComputeType<T> the arithmetic type (float for float16 / bfloat16).
#include "fused_norm.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "dtype.h"
#include "parallel.h"
#include "row_math.h"
#include "simd.h"

namespace plait::cpu {
namespace {

constexpr int kLanes = 16;

// -- softmax over a contiguous last dimension ---------------------------------------------------

// sum(exp(x - shift)); also writes the exponentials to `e` when it is not null.
template <bool kInRange, class T>
PLAIT_CLONES C<T> row_exp_sum(const T* __restrict x, C<T>* __restrict e, int64_t n,
                              C<T> shift) {
  using Cv = C<T>;
  Cv lanes[kLanes] = {};
  int64_t i = 0;
  if (e != nullptr) {
    for (; i + kLanes <= n; i += kLanes) {
      for (int j = 0; j < kLanes; ++j) {
        const Cv v = exp_t<kInRange>(load(x[i + j]) - shift);
        e[i + j] = v;
        lanes[j] += v;
      }
    }
  } else {
    for (; i + kLanes <= n; i += kLanes) {
      for (int j = 0; j < kLanes; ++j) lanes[j] += exp_t<kInRange>(load(x[i + j]) - shift);
    }
  }
  Cv s = 0;
  for (; i < n; ++i) {
    const Cv v = exp_t<kInRange>(load(x[i]) - shift);
    if (e != nullptr) e[i] = v;
    s += v;
  }
  for (int j = 0; j < kLanes; ++j) s += lanes[j];
  return s;
}

// y = e * scale, in place (T == C).
template <class Cv>
PLAIT_CLONES void row_scale(Cv* __restrict y, int64_t n, Cv scale) {
  for (int64_t i = 0; i < n; ++i) y[i] *= scale;
}

// y = exp(x - shift) * scale, recomputing the exponential (16-bit types: one rounding).
template <bool kInRange, class T>
PLAIT_CLONES void row_exp_scale(T* __restrict y, const T* __restrict x, int64_t n, C<T> shift,
                                C<T> scale) {
  for (int64_t i = 0; i < n; ++i) y[i] = store_as<T>(exp_t<kInRange>(load(x[i]) - shift) * scale);
}

// y = (x - shift) - log_sum.
template <class T>
PLAIT_CLONES void row_log_softmax(T* __restrict y, const T* __restrict x, int64_t n,
                                  C<T> shift, C<T> log_sum) {
  for (int64_t i = 0; i < n; ++i) y[i] = store_as<T>((load(x[i]) - shift) - log_sum);
}

// One softmax / log_softmax row, with exp_in_range when kInRange.
template <bool kInRange, class T>
void softmax_row(bool log, int64_t n, T* y, const T* x, C<T> shift) {
  using Cv = C<T>;
  if (log) {
    const Cv s = row_exp_sum<kInRange, T>(x, nullptr, n, shift);
    row_log_softmax(y, x, n, shift, static_cast<Cv>(std::log(s)));
  } else if constexpr (std::is_same_v<T, Cv>) {
    const Cv s = row_exp_sum<kInRange, T>(x, y, n, shift);
    row_scale(y, n, Cv(1) / s);
  } else {
    const Cv s = row_exp_sum<kInRange, T>(x, nullptr, n, shift);
    row_exp_scale<kInRange>(y, x, n, shift, Cv(1) / s);
  }
}

template <class T>
void softmax_rows(bool log, int64_t rows, int64_t n, T* out, const T* in) {
  using Cv = C<T>;
  const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(n, 1));
  parallel_for_balanced(rows, grain, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const T* x = in + r * n;
      T* y = out + r * n;
      const Range<Cv> range = row_range(x, n);
      // An infinite maximum makes the whole row NaN (inf - inf), as in PyTorch.
      const Cv shift = range.max;
      // Every shifted value in exp_in_range's range; NaNs do not count (the range ignores
      // them, and exp_in_range turns them into NaN as exp_c does).
      const bool in_range = range.min - shift >= Cv(kExpLow) && range.max - shift <= Cv(kExpHigh);
      if (in_range) {
        softmax_row<true>(log, n, y, x, shift);
      } else {
        softmax_row<false>(log, n, y, x, shift);
      }
    }
  });
}

// sum(g * y) (softmax) or sum(g) (log_softmax, y ignored).
template <class T>
PLAIT_CLONES C<T> row_dot(const T* __restrict g, const T* __restrict y, int64_t n, bool log) {
  using Cv = C<T>;
  Cv lanes[kLanes] = {};
  int64_t i = 0;
  Cv s = 0;
  if (log) {
    for (; i + kLanes <= n; i += kLanes) {
      for (int j = 0; j < kLanes; ++j) lanes[j] += load(g[i + j]);
    }
    for (; i < n; ++i) s += load(g[i]);
  } else {
    for (; i + kLanes <= n; i += kLanes) {
      for (int j = 0; j < kLanes; ++j) lanes[j] += load(g[i + j]) * load(y[i + j]);
    }
    for (; i < n; ++i) s += load(g[i]) * load(y[i]);
  }
  for (int j = 0; j < kLanes; ++j) s += lanes[j];
  return s;
}

// softmax: gi = y * (g - dot); log_softmax: gi = g - exp(y) * dot.
template <class T>
PLAIT_CLONES void row_softmax_grad(T* __restrict gi, const T* __restrict g,
                                   const T* __restrict y, int64_t n, C<T> dot, bool log) {
  if (log) {
    for (int64_t i = 0; i < n; ++i) gi[i] = store_as<T>(load(g[i]) - exp_c(load(y[i])) * dot);
  } else {
    for (int64_t i = 0; i < n; ++i) gi[i] = store_as<T>(load(y[i]) * (load(g[i]) - dot));
  }
}

template <class T>
void softmax_backward_rows(bool log, int64_t rows, int64_t n, T* grad_in, const T* grad_out,
                           const T* output) {
  const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(n, 1));
  parallel_for_balanced(rows, grain, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const T* g = grad_out + r * n;
      const T* y = output + r * n;
      row_softmax_grad(grad_in + r * n, g, y, n, row_dot(g, y, n, log), log);
    }
  });
}

// -- softmax along a dimension with inner > 1 ---------------------------------------------------
//
// For each outer index the (dim, inner) slab is walked row by row (rows of `inner` contiguous
// elements), keeping per-column maxima and sums for a block of kColumns columns: every loop is
// unit-stride over columns.

constexpr int64_t kColumns = 256;

template <class T>
PLAIT_CLONES void col_max(C<T>* __restrict m, const T* __restrict x, int64_t w) {
  for (int64_t j = 0; j < w; ++j) {
    const C<T> v = load(x[j]);
    m[j] = v > m[j] ? v : m[j];
  }
}

template <class T>
PLAIT_CLONES void col_exp_sum(C<T>* __restrict s, const T* __restrict x,
                              const C<T>* __restrict m, int64_t w) {
  for (int64_t j = 0; j < w; ++j) s[j] += exp_c(load(x[j]) - m[j]);
}

template <class T>
PLAIT_CLONES void col_softmax_out(T* __restrict y, const T* __restrict x,
                                  const C<T>* __restrict m, const C<T>* __restrict s, int64_t w,
                                  bool log) {
  if (log) {
    for (int64_t j = 0; j < w; ++j) y[j] = store_as<T>((load(x[j]) - m[j]) - s[j]);
  } else {
    for (int64_t j = 0; j < w; ++j) y[j] = store_as<T>(exp_c(load(x[j]) - m[j]) * s[j]);
  }
}

template <class T>
PLAIT_CLONES void col_dot(C<T>* __restrict s, const T* __restrict g, const T* __restrict y,
                          int64_t w, bool log) {
  if (log) {
    for (int64_t j = 0; j < w; ++j) s[j] += load(g[j]);
  } else {
    for (int64_t j = 0; j < w; ++j) s[j] += load(g[j]) * load(y[j]);
  }
}

template <class T>
PLAIT_CLONES void col_softmax_grad(T* __restrict gi, const T* __restrict g,
                                   const T* __restrict y, const C<T>* __restrict s, int64_t w,
                                   bool log) {
  if (log) {
    for (int64_t j = 0; j < w; ++j) gi[j] = store_as<T>(load(g[j]) - exp_c(load(y[j])) * s[j]);
  } else {
    for (int64_t j = 0; j < w; ++j) gi[j] = store_as<T>(load(y[j]) * (load(g[j]) - s[j]));
  }
}

// Calls body(o, j0, w) for every outer index and block of columns, in parallel.
template <class F>
void for_column_blocks(int64_t outer, int64_t dim, int64_t inner, const F& body) {
  const int64_t blocks = (inner + kColumns - 1) / kColumns;
  const int64_t tasks = outer * blocks;
  const int64_t per_task = dim * std::min(inner, kColumns);
  const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(per_task, 1));
  parallel_for_balanced(tasks, grain, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t o = t / blocks;
      const int64_t j0 = (t % blocks) * kColumns;
      body(o, j0, std::min(kColumns, inner - j0));
    }
  });
}

template <class T>
void softmax_columns(bool log, int64_t outer, int64_t dim, int64_t inner, T* out,
                     const T* in) {
  using Cv = C<T>;
  for_column_blocks(outer, dim, inner, [&](int64_t o, int64_t j0, int64_t w) {
    Cv m[kColumns];
    Cv s[kColumns];
    const T* x = in + o * dim * inner + j0;
    T* y = out + o * dim * inner + j0;
    for (int64_t j = 0; j < w; ++j) {
      m[j] = -std::numeric_limits<Cv>::infinity();
      s[j] = 0;
    }
    for (int64_t k = 0; k < dim; ++k) col_max(m, x + k * inner, w);
    for (int64_t k = 0; k < dim; ++k) col_exp_sum(s, x + k * inner, m, w);
    for (int64_t j = 0; j < w; ++j) s[j] = log ? static_cast<Cv>(std::log(s[j])) : Cv(1) / s[j];
    for (int64_t k = 0; k < dim; ++k) col_softmax_out(y + k * inner, x + k * inner, m, s, w, log);
  });
}

template <class T>
void softmax_backward_columns(bool log, int64_t outer, int64_t dim, int64_t inner, T* grad_in,
                              const T* grad_out, const T* output) {
  using Cv = C<T>;
  for_column_blocks(outer, dim, inner, [&](int64_t o, int64_t j0, int64_t w) {
    Cv s[kColumns];
    const int64_t base = o * dim * inner + j0;
    for (int64_t j = 0; j < w; ++j) s[j] = 0;
    for (int64_t k = 0; k < dim; ++k) {
      col_dot(s, grad_out + base + k * inner, output + base + k * inner, w, log);
    }
    for (int64_t k = 0; k < dim; ++k) {
      const int64_t at = base + k * inner;
      col_softmax_grad(grad_in + at, grad_out + at, output + at, s, w, log);
    }
  });
}

// -- layer norm -------------------------------------------------------------------------------
//
// Row statistics accumulate in double over 32 lanes (lane j sums the elements j, j + 32, ...
// in order; the lanes then fold pairwise, the same order on every CPU). All 32 lanes of two
// sums are 8 AVX-512 registers but 16 AVX2 ones, the whole register file: narrower CPUs run
// the lanes in passes of 16 (or 8) over the row, so nothing spills. The per-element
// arithmetic runs in C in the composite's order: ((x - mean) * rstd) * weight + bias. Contraction into fused multiply-adds is off here: in the backward, h - mean(h) must be
// exactly 0 where every h of a row is equal (a single column), and an FMA that skips the
// rounding of h = g * w would leave its rounding error, amplified by rstd, in the gradient.
// (Clang contracts only within one expression, which these loops keep apart already.)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
#endif

constexpr int kSumLanes = 32;

#define PLAIT_INLINE __attribute__((always_inline)) inline

// Lanes [lane0, lane0 + W) of two lane-wise sums over the first `full` (a multiple of
// kSumLanes) elements: s1[lane] += u and s2[lane] += v of term(i, u, v), element i = lane,
// lane + kSumLanes, ... in order.
template <int W, class F>
PLAIT_INLINE void lane_sums(int64_t full, int lane0, const F& term, double* __restrict s1,
                            double* __restrict s2) {
  double a[W] = {};
  double b[W] = {};
  for (int64_t i = lane0; i < full; i += kSumLanes) {
    for (int j = 0; j < W; ++j) {
      double u, v;
      term(i + j, u, v);
      a[j] += u;
      b[j] += v;
    }
  }
  for (int j = 0; j < W; ++j) {
    s1[lane0 + j] = a[j];
    s2[lane0 + j] = b[j];
  }
}

// The lanes of two sums over the full blocks of a row, in as many passes as the running
// CPU's registers need (the same sums whatever the passes).
template <class F>
PLAIT_INLINE void row_lane_sums(int64_t full, const F& term, double* s1, double* s2) {
  switch (native_vector_bytes()) {
    case 64:
      lane_sums<kSumLanes>(full, 0, term, s1, s2);
      break;
    case 32:
      for (int l = 0; l < kSumLanes; l += 16) lane_sums<16>(full, l, term, s1, s2);
      break;
    default:
      for (int l = 0; l < kSumLanes; l += 8) lane_sums<8>(full, l, term, s1, s2);
      break;
  }
}

// The same lane sums written with vectors of VB bytes for float and double rows (GCC
// vectorises lane_sums' strided passes poorly: half its work stayed scalar). Four vectors of
// doubles per sum and pass: 8 registers of accumulators at every width, 32 / (4 * VB / 8)
// passes.
template <int VB, class T>
struct LaneVectors {
  static constexpr int kWidth = VB / 8;  // doubles per vector
  static constexpr int kPass = 4 * kWidth;  // lanes per pass
  typedef double Vd __attribute__((vector_size(VB)));
  typedef T Vc __attribute__((vector_size(kWidth * sizeof(T))));
  // (No function returns a vector: out of a clone's ISA, that would change the ABI.)
  static PLAIT_INLINE void load(Vc& v, const T* p) { std::memcpy(&v, p, sizeof(v)); }
  static PLAIT_INLINE void load_wide(Vd& v, const T* p) {
    Vc c;
    load(c, p);
    v = __builtin_convertvector(c, Vd);
  }
  static PLAIT_INLINE void store(double* p, const Vd& v) { std::memcpy(p, &v, sizeof(v)); }
};

// row_moments' lanes: s1 = sum(x - x0), s2 = sum((x - x0)^2).
template <int VB, class T>
PLAIT_INLINE void moment_vectors(const T* __restrict x, int64_t full, double x0,
                                 double* __restrict s1, double* __restrict s2) {
  using L = LaneVectors<VB, T>;
  using Vd = typename L::Vd;
  const Vd shift = Vd{} + x0;
  for (int lane0 = 0; lane0 < kSumLanes; lane0 += L::kPass) {
    Vd a[4], b[4];
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) a[k] = b[k] = Vd{};  // (`= {}` zeroed them in memory)
    for (int64_t i = lane0; i < full; i += kSumLanes) {
      // The first of several passes (AVX2, SSE) asks for the lines the later ones read: a
      // pass reads every other line of the row (a (4096, 1024) layer_norm on one AVX2 core:
      // 5-10% faster with this, the row read from memory being most of the moments' time).
      if (L::kPass < kSumLanes && lane0 == 0) {
        constexpr int kLine = 64 / static_cast<int>(sizeof(T));
        for (int later = L::kPass; later < kSumLanes; later += kLine) {
          __builtin_prefetch(x + i + later);
        }
      }
#pragma GCC unroll 4
      for (int k = 0; k < 4; ++k) {
        Vd d;
        L::load_wide(d, x + i + k * L::kWidth);
        d -= shift;
        a[k] += d;
        b[k] += d * d;
      }
    }
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
      L::store(s1 + lane0 + k * L::kWidth, a[k]);
      L::store(s2 + lane0 + k * L::kWidth, b[k]);
    }
  }
}

// row_grad_sums' lanes: s1 = sum(h), s2 = sum(h * xhat), h and xhat in T as the scalar terms.
template <int VB, bool kWeight, class T>
PLAIT_INLINE void grad_sum_vectors(const T* __restrict g, const T* __restrict x,
                                   const T* __restrict w, int64_t full, T mean, T rstd,
                                   double* __restrict s1, double* __restrict s2) {
  using L = LaneVectors<VB, T>;
  using Vd = typename L::Vd;
  using Vc = typename L::Vc;
  for (int lane0 = 0; lane0 < kSumLanes; lane0 += L::kPass) {
    Vd a[4], b[4];
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) a[k] = b[k] = Vd{};
    for (int64_t i = lane0; i < full; i += kSumLanes) {
#pragma GCC unroll 4
      for (int k = 0; k < 4; ++k) {
        const int64_t at = i + k * L::kWidth;
        Vc h, xv;
        L::load(h, g + at);
        if constexpr (kWeight) {
          Vc wv;
          L::load(wv, w + at);
          h = h * wv;
        }
        L::load(xv, x + at);
        const Vc hx = h * ((xv - mean) * rstd);
        // (GCC 12 widens these registers in halves, two instructions more per vector than
        // the one conversion of a load moment_vectors gets; still in registers.)
        a[k] += __builtin_convertvector(h, Vd);
        b[k] += __builtin_convertvector(hx, Vd);
      }
    }
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
      L::store(s1 + lane0 + k * L::kWidth, a[k]);
      L::store(s2 + lane0 + k * L::kWidth, b[k]);
    }
  }
}

template <class T>
constexpr bool kVectorLanes = std::is_same_v<T, float> || std::is_same_v<T, double>;

// The lanes folded pairwise (lane j + lane j + 16, then halves again) into lanes[0].
PLAIT_INLINE double fold_lanes(double* lanes) {
  for (int w = kSumLanes / 2; w >= 1; w /= 2) {
    for (int j = 0; j < w; ++j) lanes[j] += lanes[j + w];
  }
  return lanes[0];
}

// Sums of (x - x0) and (x - x0)^2 in double for one row, x0 = x[0]: one pass over memory,
// and the shift by a sample of the row keeps sum-of-squares cancellation harmless.
template <class T>
PLAIT_CLONES void row_moments(const T* __restrict x, int64_t n, double* moments) {
  const double x0 = static_cast<double>(load(x[0]));
  const int64_t full = n - n % kSumLanes;
  double s1[kSumLanes], s2[kSumLanes];
  if constexpr (kVectorLanes<T>) {
    switch (native_vector_bytes()) {
      case 64: moment_vectors<64>(x, full, x0, s1, s2); break;
      case 32: moment_vectors<32>(x, full, x0, s1, s2); break;
      default: moment_vectors<16>(x, full, x0, s1, s2); break;
    }
  } else {
    row_lane_sums(full, [&](int64_t i, double& u, double& v) {
      const double d = static_cast<double>(load(x[i])) - x0;
      u = d;
      v = d * d;
    }, s1, s2);
  }
  double a = fold_lanes(s1), b = fold_lanes(s2);
  for (int64_t i = full; i < n; ++i) {
    const double d = static_cast<double>(load(x[i])) - x0;
    a += d;
    b += d * d;
  }
  const double nd = static_cast<double>(n);
  moments[0] = x0 + a / nd;                            // mean
  moments[1] = std::max(0.0, (b - a * (a / nd)) / nd);  // biased variance
}

template <class T>
PLAIT_CLONES void row_normalize(T* __restrict y, const T* __restrict x, int64_t n, C<T> mean,
                                C<T> rstd, const T* __restrict w, const T* __restrict b) {
  if (w != nullptr && b != nullptr) {
    for (int64_t i = 0; i < n; ++i) {
      y[i] = store_as<T>(((load(x[i]) - mean) * rstd) * load(w[i]) + load(b[i]));
    }
  } else if (w != nullptr) {
    for (int64_t i = 0; i < n; ++i) y[i] = store_as<T>(((load(x[i]) - mean) * rstd) * load(w[i]));
  } else if (b != nullptr) {
    for (int64_t i = 0; i < n; ++i) y[i] = store_as<T>((load(x[i]) - mean) * rstd + load(b[i]));
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = store_as<T>((load(x[i]) - mean) * rstd);
  }
}

template <class T>
void layer_norm_rows(int64_t rows, int64_t n, C<T> eps, T* out, T* mean, T* rstd, const T* x,
                     const T* w, const T* b) {
  using Cv = C<T>;
  const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(n, 1));
  // Balanced chunks, as the backward's: a memory-bound pass split in two halves waits for a
  // late worker's whole half (a (4096, 1024) forward measured 0.73x to 1.89x PyTorch's on a
  // busy 2-core machine). Rows are independent, so the split never changes a result.
  parallel_for_balanced(rows, grain, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const T* xr = x + r * n;
      if (n == 0) {  // nothing to normalise: PyTorch's mean 0 and rstd NaN
        mean[r] = store_as<T>(Cv(0));
        rstd[r] = store_as<T>(std::numeric_limits<Cv>::quiet_NaN());
        continue;
      }
      double moments[2];
      row_moments(xr, n, moments);
      const Cv m = static_cast<Cv>(moments[0]);
      const Cv var = static_cast<Cv>(moments[1]);
      const Cv rs = Cv(1) / std::sqrt(var + eps);
      row_normalize(out + r * n, xr, n, m, rs, w, b);
      mean[r] = store_as<T>(m);
      rstd[r] = store_as<T>(rs);
    }
  });
}

// (sum(h), sum(h * xhat)) with h = g * w (or g) and xhat = (x - mean) * rstd.
template <class T>
PLAIT_CLONES void row_grad_sums(const T* __restrict g, const T* __restrict x,
                                const T* __restrict w, int64_t n, C<T> mean, C<T> rstd,
                                double* sums) {
  const int64_t full = n - n % kSumLanes;
  double a[kSumLanes], c[kSumLanes];
  auto term = [&](int64_t i, double& u, double& v) {
    const C<T> h = w != nullptr ? load(g[i]) * load(w[i]) : load(g[i]);
    const C<T> xhat = (load(x[i]) - mean) * rstd;
    u = static_cast<double>(h);
    v = static_cast<double>(h * xhat);
  };
  if constexpr (kVectorLanes<T>) {
    const int bytes = native_vector_bytes();
    if (w != nullptr) {
      if (bytes == 64) grad_sum_vectors<64, true>(g, x, w, full, mean, rstd, a, c);
      else if (bytes == 32) grad_sum_vectors<32, true>(g, x, w, full, mean, rstd, a, c);
      else grad_sum_vectors<16, true>(g, x, w, full, mean, rstd, a, c);
    } else {
      if (bytes == 64) grad_sum_vectors<64, false>(g, x, w, full, mean, rstd, a, c);
      else if (bytes == 32) grad_sum_vectors<32, false>(g, x, w, full, mean, rstd, a, c);
      else grad_sum_vectors<16, false>(g, x, w, full, mean, rstd, a, c);
    }
  } else {
    row_lane_sums(full, term, a, c);
  }
  double sa = fold_lanes(a), sc = fold_lanes(c);
  for (int64_t i = full; i < n; ++i) {
    double u, v;
    term(i, u, v);
    sa += u;
    sc += v;
  }
  sums[0] = sa;
  sums[1] = sc;
}

// dx = rstd * (h - mean_h - xhat * mean_hx).
template <class T>
PLAIT_CLONES void row_grad_input(T* __restrict dx, const T* __restrict g,
                                 const T* __restrict x, const T* __restrict w, int64_t n,
                                 C<T> mean, C<T> rstd, C<T> mean_h, C<T> mean_hx) {
  for (int64_t i = 0; i < n; ++i) {
    const C<T> h = w != nullptr ? load(g[i]) * load(w[i]) : load(g[i]);
    const C<T> xhat = (load(x[i]) - mean) * rstd;
    dx[i] = store_as<T>(rstd * (h - mean_h - xhat * mean_hx));
  }
}

// dw[i] += g * xhat (when dw is not null); db[i] += g (when db is not null), in the compute
// type within a block of rows (the blocks are then added in double).
template <class T>
PLAIT_CLONES void row_grad_params(C<T>* __restrict dw, C<T>* __restrict db,
                                  const T* __restrict g, const T* __restrict x, int64_t n,
                                  C<T> mean, C<T> rstd) {
  if (dw != nullptr && db != nullptr) {
    for (int64_t i = 0; i < n; ++i) {
      const C<T> gi = load(g[i]);
      dw[i] += gi * ((load(x[i]) - mean) * rstd);
      db[i] += gi;
    }
  } else if (dw != nullptr) {
    for (int64_t i = 0; i < n; ++i) dw[i] += load(g[i]) * ((load(x[i]) - mean) * rstd);
  } else if (db != nullptr) {
    for (int64_t i = 0; i < n; ++i) db[i] += load(g[i]);
  }
}

// row_grad_input and row_grad_params in one pass over the row (the same arithmetic per
// element, so the same values): g, x and xhat are loaded and computed once, not twice.
template <class T>
PLAIT_CLONES void row_grad_input_params(T* __restrict dx, C<T>* __restrict dw,
                                        C<T>* __restrict db, const T* __restrict g,
                                        const T* __restrict x, const T* __restrict w, int64_t n,
                                        C<T> mean, C<T> rstd, C<T> mean_h, C<T> mean_hx) {
  for (int64_t i = 0; i < n; ++i) {
    const C<T> gi = load(g[i]);
    const C<T> h = w != nullptr ? gi * load(w[i]) : gi;
    const C<T> xhat = (load(x[i]) - mean) * rstd;
    dx[i] = store_as<T>(rstd * (h - mean_h - xhat * mean_hx));
    if (dw != nullptr) dw[i] += gi * xhat;
    if (db != nullptr) db[i] += gi;
  }
}

// Rows per block of the weight/bias gradient sums: each block sums its rows into its own
// buffer and the buffers are added in block order, so the result does not depend on threads.
constexpr int64_t kRowsPerBlock = 256;

template <class T>
void layer_norm_backward_rows(int64_t rows, int64_t n, T* dx, T* dw, T* db, const T* g,
                              const T* x, const T* mean, const T* rstd, const T* w) {
  using Cv = C<T>;
  const bool params = dw != nullptr || db != nullptr;
  const int64_t blocks = fixed_block_count(rows, kRowsPerBlock);
  std::vector<Cv> partial;
  if (params) partial.assign(static_cast<size_t>(blocks * 2 * n), Cv(0));
  fixed_blocks(rows, kRowsPerBlock, [&](int64_t block, int64_t r0, int64_t r1) {
    Cv* pw = dw != nullptr ? partial.data() + block * 2 * n : nullptr;
    Cv* pb = db != nullptr ? partial.data() + block * 2 * n + n : nullptr;
    for (int64_t r = r0; r < r1; ++r) {
      const T* gr = g + r * n;
      const T* xr = x + r * n;
      const Cv m = load(mean[r]);
      const Cv rs = load(rstd[r]);
      if (dx != nullptr && n > 0) {
        double sums[2];
        row_grad_sums(gr, xr, w, n, m, rs, sums);
        const Cv mean_h = static_cast<Cv>(sums[0] / static_cast<double>(n));
        const Cv mean_hx = static_cast<Cv>(sums[1] / static_cast<double>(n));
        if (params) {
          row_grad_input_params(dx + r * n, pw, pb, gr, xr, w, n, m, rs, mean_h, mean_hx);
          continue;
        }
        row_grad_input(dx + r * n, gr, xr, w, n, m, rs, mean_h, mean_hx);
      }
      if (params) row_grad_params(pw, pb, gr, xr, n, m, rs);
    }
  });
  if (!params) return;
  for (int64_t i = 0; i < n; ++i) {
    double sw = 0, sb = 0;
    for (int64_t b = 0; b < blocks; ++b) {
      sw += static_cast<double>(partial[static_cast<size_t>(b * 2 * n + i)]);
      sb += static_cast<double>(partial[static_cast<size_t>(b * 2 * n + n + i)]);
    }
    if (dw != nullptr) dw[i] = store_as<T>(static_cast<Cv>(sw));
    if (db != nullptr) db[i] = store_as<T>(static_cast<Cv>(sb));
  }
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif

}  // namespace

bool softmax_forward(int dtype, bool log, int64_t outer, int64_t dim, int64_t inner,
                     uintptr_t out, uintptr_t in) {
  return visit_floating(dtype, [&](auto tag) {
    using T = decltype(tag);
    if (outer <= 0 || dim <= 0 || inner <= 0) return;
    if (inner == 1) {
      softmax_rows(log, outer, dim, ptr<T>(out), ptr<const T>(in));
    } else {
      softmax_columns(log, outer, dim, inner, ptr<T>(out), ptr<const T>(in));
    }
  });
}

bool softmax_backward(int dtype, bool log, int64_t outer, int64_t dim, int64_t inner,
                      uintptr_t grad_in, uintptr_t grad_out, uintptr_t output) {
  return visit_floating(dtype, [&](auto tag) {
    using T = decltype(tag);
    if (outer <= 0 || dim <= 0 || inner <= 0) return;
    if (inner == 1) {
      softmax_backward_rows(log, outer, dim, ptr<T>(grad_in), ptr<const T>(grad_out),
                            ptr<const T>(output));
    } else {
      softmax_backward_columns(log, outer, dim, inner, ptr<T>(grad_in), ptr<const T>(grad_out),
                               ptr<const T>(output));
    }
  });
}

bool layer_norm_forward(int dtype, int64_t rows, int64_t cols, double eps, uintptr_t out,
                        uintptr_t mean, uintptr_t rstd, uintptr_t x, uintptr_t weight,
                        uintptr_t bias) {
  return visit_floating(dtype, [&](auto tag) {
    using T = decltype(tag);
    if (rows <= 0) return;
    layer_norm_rows(rows, cols, static_cast<C<T>>(eps), ptr<T>(out), ptr<T>(mean), ptr<T>(rstd),
                    ptr<const T>(x), ptr<const T>(weight), ptr<const T>(bias));
  });
}

bool layer_norm_backward(int dtype, int64_t rows, int64_t cols, uintptr_t grad_in,
                         uintptr_t grad_weight, uintptr_t grad_bias, uintptr_t grad_out,
                         uintptr_t x, uintptr_t mean, uintptr_t rstd, uintptr_t weight) {
  return visit_floating(dtype, [&](auto tag) {
    using T = decltype(tag);
    if (rows < 0 || cols < 0) return;
    layer_norm_backward_rows(rows, cols, ptr<T>(grad_in), ptr<T>(grad_weight),
                             ptr<T>(grad_bias), ptr<const T>(grad_out), ptr<const T>(x),
                             ptr<const T>(mean), ptr<const T>(rstd), ptr<const T>(weight));
  });
}

}  // namespace plait::cpu
