// Fused cross-entropy over logits; see loss.h.
//
// A row of logits is read twice while it sits in L1 (its maximum, then the sum of exponentials
// shifted by it): cheaper than an online max-and-rescale pass, which needs two exponentials per
// element. Hot loops are PLAIT_CLONES functions keeping lane-wise partial results in arrays so
// they vectorise without reassociation flags. T is the storage type, Cv = ComputeType<T>.
#include "loss.h"

#include <algorithm>
#include <cmath>
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

// sum(exp(x - shift)).
template <bool kInRange, class T>
PLAIT_CLONES C<T> row_exp_sum(const T* __restrict x, int64_t n, C<T> shift) {
  using Cv = C<T>;
  Cv lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) lanes[j] += exp_t<kInRange>(load(x[i + j]) - shift);
  }
  Cv s = 0;
  for (; i < n; ++i) s += exp_t<kInRange>(load(x[i]) - shift);
  for (int j = 0; j < kLanes; ++j) s += lanes[j];
  return s;
}

// gi = exp(x - lse) * a.
template <bool kInRange, class T>
PLAIT_CLONES void row_scaled_softmax(T* __restrict gi, const T* __restrict x, int64_t n,
                                     C<T> lse, C<T> a) {
  for (int64_t i = 0; i < n; ++i) gi[i] = cast<T>(exp_t<kInRange>(load(x[i]) - lse) * a);
}

// The logsumexp of a row, shifted by its maximum unless that is infinite (an all -inf row or
// a +inf entry: inf - inf would make a NaN), as torch.logsumexp. Rows whose shifted values
// all lie in exp_in_range's range (NaNs aside) take it.
template <class T>
C<T> row_logsumexp(const T* x, int64_t n) {
  using Cv = C<T>;
  const Range<Cv> range = row_range(x, n);
  const Cv shift = std::isinf(range.max) ? Cv(0) : range.max;
  const bool in_range = range.min - shift >= Cv(kExpLow) && range.max - shift <= Cv(kExpHigh);
  const Cv s = in_range ? row_exp_sum<true>(x, n, shift) : row_exp_sum<false>(x, n, shift);
  return shift + std::log(s);
}

// -- rows of few classes -----------------------------------------------------------------------
//
// Under kSmallClasses classes a row is too short for the lane arrays (their set-up and the
// dependent chain of their final reduction cost more than the row: 40 ns a row): rows go by
// chunks of kChunkRows, the shifted values of a whole chunk into one buffer, and one flat,
// vectorised pass takes their exponentials.

constexpr int64_t kSmallClasses = 32;  // (at 100 classes the per-row loops win again)
constexpr int64_t kChunkRows = 64;

// buf[i] = exp(buf[i]), in place.
template <class Cv>
PLAIT_CLONES void exp_inplace(Cv* __restrict buf, int64_t n) {
  for (int64_t i = 0; i < n; ++i) buf[i] = exp_c(buf[i]);
}

// buf (rows * classes) = x - shift of each row, shift being the row's maximum (0 when that is
// infinite, the composite's rule), or `given` (its rows' logsumexps) when not null; writes the
// shifts to `shift`. rows <= kChunkRows, classes < kSmallClasses.
template <class T>
void chunk_shifted(const T* x, int64_t rows, int64_t classes, const T* given, C<T>* buf,
                   C<T>* shift) {
  using Cv = C<T>;
  for (int64_t r = 0; r < rows; ++r) {
    const T* row = x + r * classes;
    Cv m;
    if (given != nullptr) {
      m = load(given[r]);
    } else {
      m = -std::numeric_limits<Cv>::infinity();
      for (int64_t c = 0; c < classes; ++c) {
        const Cv v = load(row[c]);
        m = v > m ? v : m;
      }
      if (std::isinf(m)) m = Cv(0);
    }
    shift[r] = m;
    for (int64_t c = 0; c < classes; ++c) buf[r * classes + c] = load(row[c]) - m;
  }
}

// The logsumexps of rows (<= kChunkRows) of few classes.
template <class T>
void chunk_logsumexp(const T* x, int64_t rows, int64_t classes, C<T>* out) {
  using Cv = C<T>;
  Cv buf[kChunkRows * kSmallClasses];
  Cv shift[kChunkRows];
  chunk_shifted(x, rows, classes, static_cast<const T*>(nullptr), buf, shift);
  exp_inplace(buf, rows * classes);
  for (int64_t r = 0; r < rows; ++r) {
    Cv s = 0;
    for (int64_t c = 0; c < classes; ++c) s += buf[r * classes + c];
    out[r] = shift[r] + std::log(s);
  }
}

// True when every target is ignore_index or a class index.
bool targets_valid(const int64_t* target, int64_t rows, int64_t classes, int64_t ignore_index) {
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t t = target[r];
    if (t != ignore_index && (t < 0 || t >= classes)) return false;
  }
  return true;
}

// The weight of row r's target (0 when ignored).
template <class T>
inline double row_weight(const T* weight, int64_t t, int64_t ignore_index) {
  if (t == ignore_index) return 0.0;
  return weight != nullptr ? static_cast<double>(load(weight[t])) : 1.0;
}

// Rows per block of the thread-count-independent sums: enough elements that a tensor below
// the elementwise grain stays in one block (single-threaded).
int64_t rows_per_block(int64_t classes) {
  return std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(classes, 1));
}

template <class T>
void forward(int64_t rows, int64_t classes, int64_t reduction, int64_t ignore_index, T* loss,
             T* lse, const T* x, const int64_t* target, const T* weight) {
  using Cv = C<T>;
  const int64_t block = rows_per_block(classes);
  const int64_t blocks = fixed_block_count(rows, block);
  std::vector<double> loss_sums(static_cast<size_t>(blocks), 0.0);
  std::vector<double> weight_sums(static_cast<size_t>(blocks), 0.0);
  fixed_blocks(rows, block, [&](int64_t b, int64_t r0, int64_t r1) {
    double loss_sum = 0.0;
    double weight_sum = 0.0;
    Cv chunk_lse[kChunkRows];
    for (int64_t c0 = r0; c0 < r1; c0 += kChunkRows) {
      const int64_t c1 = std::min(r1, c0 + kChunkRows);
      if (classes < kSmallClasses) chunk_logsumexp(x + c0 * classes, c1 - c0, classes, chunk_lse);
      for (int64_t r = c0; r < c1; ++r) {
        const T* row = x + r * classes;
        const Cv l = classes < kSmallClasses ? chunk_lse[r - c0] : row_logsumexp(row, classes);
        lse[r] = cast<T>(l);
        const int64_t t = target[r];
        const double w = row_weight(weight, t, ignore_index);
        const int64_t safe = t == ignore_index ? 0 : t;
        // -(logp[t]) * w, as the composite (a weight of 0 still gives 0)
        const double v = -static_cast<double>(load(row[safe]) - l) * w;
        if (reduction == 0) {
          loss[r] = cast<T>(static_cast<Cv>(v));
        } else {
          loss_sum += v;
          weight_sum += w;
        }
      }
    }
    loss_sums[static_cast<size_t>(b)] = loss_sum;
    weight_sums[static_cast<size_t>(b)] = weight_sum;
  });
  if (reduction == 0) return;
  double loss_sum = 0.0;
  double weight_sum = 0.0;
  for (int64_t b = 0; b < blocks; ++b) {
    loss_sum += loss_sums[static_cast<size_t>(b)];
    weight_sum += weight_sums[static_cast<size_t>(b)];
  }
  // mean over no kept weight: 0 / 0, NaN as in PyTorch
  const double out = reduction == 1 ? loss_sum / weight_sum : loss_sum;
  loss[0] = cast<T>(static_cast<Cv>(out));
}

template <class T>
void backward(int64_t rows, int64_t classes, int64_t reduction, int64_t ignore_index,
              T* grad_in, const T* grad_out, const T* x, const int64_t* target, const T* weight,
              const T* lse) {
  using Cv = C<T>;
  double scale = 1.0;  // what multiplies grad_out: 1 / summed weights for the mean
  if (reduction == 1) {
    double total = 0.0;
    for (int64_t r = 0; r < rows; ++r) total += row_weight(weight, target[r], ignore_index);
    scale = 1.0 / total;  // inf when every weight is 0: then every row is zero anyway
  }
  const int64_t grain = rows_per_block(classes);
  // The coefficient of row r's softmax: 0 for a row of weight 0 (ignored target), which
  // gets zeros (also when every target is ignored and the mean's scale is inf).
  auto coefficient = [&](int64_t r, double w) {
    return static_cast<Cv>(static_cast<double>(load(grad_out[reduction == 0 ? r : 0])) * w *
                           scale);
  };
  if (classes < kSmallClasses) {
    parallel_for_balanced(rows, grain, [&](int64_t r0, int64_t r1) {
      Cv buf[kChunkRows * kSmallClasses];
      Cv shift[kChunkRows];
      for (int64_t c0 = r0; c0 < r1; c0 += kChunkRows) {
        const int64_t n = std::min(r1, c0 + kChunkRows) - c0;
        chunk_shifted(x + c0 * classes, n, classes, lse + c0, buf, shift);
        exp_inplace(buf, n * classes);
        for (int64_t r = 0; r < n; ++r) {
          T* gi = grad_in + (c0 + r) * classes;
          const double w = row_weight(weight, target[c0 + r], ignore_index);
          if (w == 0.0) {
            std::fill(gi, gi + classes, cast<T>(Cv(0)));
            continue;
          }
          const Cv a = coefficient(c0 + r, w);
          for (int64_t c = 0; c < classes; ++c) gi[c] = cast<T>(buf[r * classes + c] * a);
          const int64_t t = target[c0 + r];
          gi[t] = cast<T>(buf[r * classes + t] * a - a);
        }
      }
    });
    return;
  }
  parallel_for_balanced(rows, grain, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      T* gi = grad_in + r * classes;
      const double w = row_weight(weight, target[r], ignore_index);
      if (w == 0.0) {
        std::fill(gi, gi + classes, cast<T>(Cv(0)));
        continue;
      }
      const Cv a = coefficient(r, w);
      const T* row = x + r * classes;
      const Cv l = load(lse[r]);
      // x - lse <= 0 up to rounding; in range when the row's minimum is (one cheap pass
      // over a row the exponentials' pass then finds in L1)
      const Range<Cv> range = row_range(row, classes);
      if (range.min - l >= Cv(kExpLow) && range.max - l <= Cv(kExpHigh)) {
        row_scaled_softmax<true>(gi, row, classes, l, a);
      } else {
        row_scaled_softmax<false>(gi, row, classes, l, a);
      }
      const int64_t t = target[r];
      gi[t] = cast<T>(exp_c(load(row[t]) - l) * a - a);
    }
  });
}

}  // namespace

int cross_entropy_forward(int dtype, int64_t rows, int64_t classes, int64_t reduction,
                          int64_t ignore_index, uintptr_t loss, uintptr_t lse, uintptr_t x,
                          uintptr_t target, uintptr_t weight) {
  const int64_t* t = ptr<const int64_t>(target);
  if (!targets_valid(t, rows, classes, ignore_index)) return kLossBadTarget;
  const bool ok = visit_floating(dtype, [&](auto tag) {
    using T = decltype(tag);
    forward(rows, classes, reduction, ignore_index, ptr<T>(loss), ptr<T>(lse),
            ptr<const T>(x), t, ptr<const T>(weight));
  });
  return ok ? kLossOk : kLossBadDtype;
}

int cross_entropy_backward(int dtype, int64_t rows, int64_t classes, int64_t reduction,
                           int64_t ignore_index, uintptr_t grad_in, uintptr_t grad_out,
                           uintptr_t x, uintptr_t target, uintptr_t weight, uintptr_t lse) {
  const int64_t* t = ptr<const int64_t>(target);
  if (!targets_valid(t, rows, classes, ignore_index)) return kLossBadTarget;
  const bool ok = visit_floating(dtype, [&](auto tag) {
    using T = decltype(tag);
    backward(rows, classes, reduction, ignore_index, ptr<T>(grad_in), ptr<const T>(grad_out),
             ptr<const T>(x), t, ptr<const T>(weight), ptr<const T>(lse));
  });
  return ok ? kLossOk : kLossBadDtype;
}

}  // namespace plait::cpu
