// Fused scaled dot-product attention; see attention.h.
#include "attention.h"
#include "vecmath.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "blas.h"
#include "dtype.h"
#include "parallel.h"
#include "simd.h"

namespace plait::cpu {
namespace {

// -- softmax rows ----------------------------------------------------------------------------

// The maximum of x[0, n) (NaNs ignored here; they reach the sum through exp and make the row
// NaN, as the composite does). -inf for n == 0.
template <class T>
PLAIT_CLONES T row_max(const T* x, int64_t n) {
  constexpr int kLanes = 16;
  if (n < kLanes) {  // a short row (a small head): the lanes would cost more than the row
    T m = -std::numeric_limits<T>::infinity();
    for (int64_t i = 0; i < n; ++i) m = x[i] > m ? x[i] : m;
    return m;
  }
  T lanes[kLanes];
  for (int j = 0; j < kLanes; ++j) lanes[j] = -std::numeric_limits<T>::infinity();
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) lanes[j] = x[i + j] > lanes[j] ? x[i + j] : lanes[j];
  }
  T m = -std::numeric_limits<T>::infinity();
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  for (int j = 0; j < kLanes; ++j) m = lanes[j] > m ? lanes[j] : m;
  return m;
}

// x[i] = exp(x[i] - shift) in place (a plain loop, vectorised for float).
template <class T>
PLAIT_CLONES void exp_shift(T* x, int64_t n, T shift) {
  if constexpr (std::is_same_v<T, float>) {
    for (int64_t i = 0; i < n; ++i) x[i] = vecmath::exp(x[i] - shift);
  } else {
    for (int64_t i = 0; i < n; ++i) x[i] = std::exp(x[i] - shift);
  }
}

// x[i] = exp(x[i] - shift) in place; returns their sum, added lane-wise over blocks of 16
// (so that the loop vectorises without reassociation flags), then the tail in order, then the
// lanes, in the same pass as the exps.
template <class T>
PLAIT_CLONES T exp_shift_sum(T* x, int64_t n, T shift) {
  constexpr int kLanes = 16;
  auto e = [shift](T v) {
    if constexpr (std::is_same_v<T, float>) {
      return vecmath::exp(v - shift);
    } else {
      return std::exp(v - shift);
    }
  };
  if (n < kLanes) {
    T s = 0;
    for (int64_t i = 0; i < n; ++i) s += x[i] = e(x[i]);
    return s;
  }
  T lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) lanes[j] += x[i + j] = e(x[i + j]);
  }
  T s = 0;
  for (; i < n; ++i) s += x[i] = e(x[i]);
  for (int j = 0; j < kLanes; ++j) s += lanes[j];
  return s;
}

// x[i] += mask[i * stride].
template <class T>
PLAIT_CLONES void add_mask_row(T* __restrict x, const T* __restrict mask, int64_t n,
                               int64_t stride) {
  if (stride == 1) {
    for (int64_t i = 0; i < n; ++i) x[i] += mask[i];
  } else if (stride == 0) {
    const T m = mask[0];
    for (int64_t i = 0; i < n; ++i) x[i] += m;
  } else {
    for (int64_t i = 0; i < n; ++i) x[i] += mask[i * stride];
  }
}

template <class T>
PLAIT_CLONES void divide_row(T* x, int64_t n, T d) {
  for (int64_t i = 0; i < n; ++i) x[i] /= d;
}

// ds[i] = p[i] * (dp[i] - delta), in place in dp.
template <class T>
PLAIT_CLONES void softmax_grad_row(const T* __restrict p, T* __restrict dp, int64_t n,
                                   T delta) {
  for (int64_t i = 0; i < n; ++i) dp[i] = p[i] * (dp[i] - delta);
}

template <class T>
PLAIT_CLONES T dot(const T* __restrict a, const T* __restrict b, int64_t n) {
  constexpr int kLanes = 16;
  T lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) lanes[j] += a[i + j] * b[i + j];
  }
  T s = 0;
  for (; i < n; ++i) s += a[i] * b[i];
  for (int j = 0; j < kLanes; ++j) s += lanes[j];
  return s;
}

// -- layout helpers --------------------------------------------------------------------------

// An operand of one batch entry as a gemm sees it: address, whether it is stored transposed
// (column-major), and its leading dimension.
template <class T>
struct Mat {
  const T* ptr;
  bool trans;
  int64_t ld;
  int64_t row_stride;  // to step to a row block
};

template <class T>
Mat<T> matrix(const AttentionOperand& op, int64_t offset) {
  const T* base = reinterpret_cast<const T*>(op.ptr) + offset;
  const bool trans = op.col_stride != 1;
  return {base, trans, trans ? op.col_stride : op.row_stride, op.row_stride};
}

// Element offset of batch entry `b` (row-major over `batch`) for each of `count` operands.
void batch_offsets(const std::vector<int64_t>& batch, int64_t b,
                   const AttentionOperand* const* ops, int count, int64_t* offsets) {
  for (int o = 0; o < count; ++o) offsets[o] = 0;
  for (size_t d = batch.size(); d-- > 0;) {
    const int64_t idx = b % batch[d];
    b /= batch[d];
    for (int o = 0; o < count; ++o) {
      if (ops[o] != nullptr) offsets[o] += idx * ops[o]->batch_strides[d];
    }
  }
}

int64_t batch_count(const std::vector<int64_t>& batch) {
  int64_t n = 1;
  for (const int64_t s : batch) n *= s;
  return n;
}

// Query rows per block: the block's scores (rows x S) stay within ~256 KiB, in L2. A causal
// block computes the scores of keys [0, r0 + rows) only, so smaller blocks skip more of the
// hidden upper triangle: a quarter of L (a multiple of 8, at least 16 rows) computes about
// 5/8 of the full L x S products instead of all of them when one block holds every row.
template <class T>
int64_t row_block(int64_t L, int64_t S, bool is_causal) {
  const int64_t budget = (int64_t{256} << 10) / static_cast<int64_t>(sizeof(T));
  int64_t rows = budget / (S > 0 ? S : 1);
  if (rows > 128) rows = 128;
  if (is_causal) {
    const int64_t quarter = ((L / 4 + 7) / 8) * 8;
    const int64_t causal_rows = quarter > 16 ? quarter : 16;
    if (rows > causal_rows) rows = causal_rows;
  }
  if (rows < 1) rows = 1;
  return rows < L ? rows : (L > 0 ? L : 1);
}

// Columns row `row` of the scores can see.
inline int64_t visible(int64_t row, int64_t cols, bool is_causal) {
  if (!is_causal) return cols;
  return row + 1 < cols ? row + 1 : cols;
}

// scores[rows x cols] = scale * Q[r0 : r0 + rows] K[0 : cols]^T + mask, cut causally.
template <class T>
void scores_block(const Mat<T>& q, const Mat<T>& k, const AttentionOperand* mask,
                  int64_t mask_offset, int64_t r0, int64_t rows, int64_t cols, int64_t E,
                  T scale, bool is_causal, T* scores) {
  const T* q_block = q.trans ? q.ptr + r0 : q.ptr + r0 * q.row_stride;
  // K^T is (E x cols): a row-major K is read transposed; a column-major one is K^T row-major.
  blas::gemm(q.trans, !k.trans, rows, cols, E, scale, q_block, q.ld, k.ptr, k.ld, T(0), scores,
             cols);
  for (int64_t i = 0; i < rows; ++i) {
    T* x = scores + i * cols;
    const int64_t n = visible(r0 + i, cols, is_causal);
    if (mask != nullptr) {
      const T* m = reinterpret_cast<const T*>(mask->ptr) + mask_offset +
                   (r0 + i) * mask->row_stride;
      add_mask_row(x, m, n, mask->col_stride);
    }
  }
}

template <class T>
int64_t task_grain(int64_t rows, int64_t S, int64_t E, int64_t Ev) {
  // A worker pays off above ~2^18 flops.
  const int64_t flops = 2 * rows * (S > 0 ? S : 1) * (E + Ev) + 1;
  const int64_t grain = (int64_t{1} << 18) / flops;
  return grain > 1 ? grain : 1;
}

template <class T>
void forward_typed(const AttentionShape& sh, const AttentionOperand& q_op,
                   const AttentionOperand& k_op, const AttentionOperand& v_op,
                   const AttentionOperand* mask, T* out, T* lse, T scale, bool is_causal) {
  const int64_t batches = batch_count(sh.batch);
  const int64_t rb = row_block<T>(sh.L, sh.S, is_causal);
  const int64_t blocks = (sh.L + rb - 1) / rb;
  const AttentionOperand* ops[4] = {&q_op, &k_op, &v_op, mask};
  parallel_for(batches * blocks, task_grain<T>(rb, sh.S, sh.E, sh.Ev),
               [&](int64_t t0, int64_t t1) {
    std::vector<T> scores(static_cast<size_t>(rb * sh.S));
    std::vector<T> sums(static_cast<size_t>(rb));
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t b = t / blocks;
      const int64_t r0 = (t % blocks) * rb;
      const int64_t rows = r0 + rb <= sh.L ? rb : sh.L - r0;
      int64_t off[4];
      batch_offsets(sh.batch, b, ops, 4, off);
      const Mat<T> q = matrix<T>(q_op, off[0]);
      const Mat<T> k = matrix<T>(k_op, off[1]);
      const Mat<T> v = matrix<T>(v_op, off[2]);
      T* out_block = out + (b * sh.L + r0) * sh.Ev;
      T* lse_block = lse + b * sh.L + r0;
      // Causal: the block's last row sees keys [0, r0 + rows); later keys are never read.
      const int64_t cols = is_causal && r0 + rows < sh.S ? r0 + rows : sh.S;
      scores_block(q, k, mask, off[3], r0, rows, cols, sh.E, scale, is_causal, scores.data());
      for (int64_t i = 0; i < rows; ++i) {
        T* x = scores.data() + i * cols;
        // The keys a causal row does not see score -inf, so that the row's passes run over
        // all the block's columns (a multiple of 16 when L is: no scalar tails) and their
        // exps are the zeros P V needs there.
        for (int64_t j = visible(r0 + i, cols, is_causal); j < cols; ++j) {
          x[j] = -std::numeric_limits<T>::infinity();
        }
        T m = row_max(x, cols);
        // A row that sees nothing (all -inf): exp(-inf - 0) = 0, output 0, logsumexp -inf.
        if (m == -std::numeric_limits<T>::infinity()) m = T(0);
        const T s = exp_shift_sum(x, cols, m);
        sums[i] = s;
        lse_block[i] = m + std::log(s);
      }
      // out = P V: V is (cols x Ev), row-major unless stored transposed.
      blas::gemm(false, v.trans, rows, sh.Ev, cols, T(1), scores.data(), cols, v.ptr, v.ld,
                 T(0), out_block, sh.Ev);
      for (int64_t i = 0; i < rows; ++i) {
        divide_row(out_block + i * sh.Ev, sh.Ev, sums[i] == T(0) ? T(1) : sums[i]);
      }
    }
  });
}

template <class T>
void backward_typed(const AttentionShape& sh, const T* grad_out, const AttentionOperand& q_op,
                    const AttentionOperand& k_op, const AttentionOperand& v_op,
                    const AttentionOperand* mask, const T* out, const T* lse, T* grad_q,
                    T* grad_k, T* grad_v, T scale, bool is_causal) {
  const int64_t batches = batch_count(sh.batch);
  const int64_t rb = row_block<T>(sh.L, sh.S, is_causal);
  const AttentionOperand* ops[4] = {&q_op, &k_op, &v_op, mask};
  // dK and dV sum over every query row: one task per batch entry owns them.
  parallel_for(batches, task_grain<T>(sh.L, sh.S, sh.E, sh.Ev), [&](int64_t b0, int64_t b1) {
    std::vector<T> p(static_cast<size_t>(rb * sh.S));
    std::vector<T> dp(static_cast<size_t>(rb * sh.S));
    for (int64_t b = b0; b < b1; ++b) {
      int64_t off[4];
      batch_offsets(sh.batch, b, ops, 4, off);
      const Mat<T> q = matrix<T>(q_op, off[0]);
      const Mat<T> k = matrix<T>(k_op, off[1]);
      const Mat<T> v = matrix<T>(v_op, off[2]);
      T* dk = grad_k + b * sh.S * sh.E;
      T* dv = grad_v + b * sh.S * sh.Ev;
      std::memset(static_cast<void*>(dk), 0, sizeof(T) * sh.S * sh.E);
      std::memset(static_cast<void*>(dv), 0, sizeof(T) * sh.S * sh.Ev);
      for (int64_t r0 = 0; r0 < sh.L; r0 += rb) {
        const int64_t rows = r0 + rb <= sh.L ? rb : sh.L - r0;
        const int64_t cols = is_causal && r0 + rows < sh.S ? r0 + rows : sh.S;
        const T* go = grad_out + (b * sh.L + r0) * sh.Ev;
        const T* o = out + (b * sh.L + r0) * sh.Ev;
        const T* l = lse + b * sh.L + r0;
        T* dq = grad_q + (b * sh.L + r0) * sh.E;
        if (cols == 0) {
          std::memset(static_cast<void*>(dq), 0, sizeof(T) * rows * sh.E);
          continue;
        }
        scores_block(q, k, mask, off[3], r0, rows, cols, sh.E, scale, is_causal, p.data());
        for (int64_t i = 0; i < rows; ++i) {
          T* x = p.data() + i * cols;
          const int64_t n = visible(r0 + i, cols, is_causal);
          // P = exp(S - lse); a row that saw nothing (lse = -inf) has P = 0.
          if (l[i] == -std::numeric_limits<T>::infinity()) {
            std::memset(static_cast<void*>(x), 0, sizeof(T) * cols);
            continue;
          }
          // the hidden keys as in the forward: -inf, whose exps are the zeros there
          for (int64_t j = n; j < cols; ++j) x[j] = -std::numeric_limits<T>::infinity();
          exp_shift(x, cols, l[i]);
        }
        // dV[0:cols] += P^T dO
        blas::gemm(true, false, cols, sh.Ev, rows, T(1), p.data(), cols, go, sh.Ev, T(1), dv,
                   sh.Ev);
        // dP = dO V^T
        blas::gemm(false, !v.trans, rows, cols, sh.Ev, T(1), go, sh.Ev, v.ptr, v.ld, T(0),
                   dp.data(), cols);
        // dS = P * (dP - rowsum(dO * O))
        for (int64_t i = 0; i < rows; ++i) {
          const T delta = dot(go + i * sh.Ev, o + i * sh.Ev, sh.Ev);
          softmax_grad_row(p.data() + i * cols, dp.data() + i * cols, cols, delta);
        }
        // dQ = scale * dS K ; dK[0:cols] += scale * dS^T Q
        blas::gemm(false, k.trans, rows, sh.E, cols, scale, dp.data(), cols, k.ptr, k.ld, T(0),
                   dq, sh.E);
        const T* q_block = q.trans ? q.ptr + r0 : q.ptr + r0 * q.row_stride;
        blas::gemm(true, q.trans, cols, sh.E, rows, scale, dp.data(), cols, q_block, q.ld, T(1),
                   dk, sh.E);
      }
    }
  });
}

bool valid_shape(const AttentionShape& sh, std::initializer_list<const AttentionOperand*> ops) {
  if (sh.L < 0 || sh.S < 0 || sh.E < 0 || sh.Ev < 0) return false;
  for (const int64_t s : sh.batch) {
    if (s < 0) return false;
  }
  for (const AttentionOperand* op : ops) {
    if (op != nullptr && op->batch_strides.size() != sh.batch.size()) return false;
  }
  return true;
}

}  // namespace

bool attention_forward(int dtype, const AttentionShape& shape, const AttentionOperand& q,
                       const AttentionOperand& k, const AttentionOperand& v,
                       const AttentionOperand* mask, uintptr_t out, uintptr_t logsumexp,
                       double scale, bool is_causal) {
  if (!valid_shape(shape, {&q, &k, &v, mask})) return false;
  if (batch_count(shape.batch) == 0 || shape.L == 0) return true;
  if (dtype == dtype_code<float>()) {
    forward_typed<float>(shape, q, k, v, mask, reinterpret_cast<float*>(out),
                         reinterpret_cast<float*>(logsumexp), static_cast<float>(scale),
                         is_causal);
    return true;
  }
  if (dtype == dtype_code<double>()) {
    forward_typed<double>(shape, q, k, v, mask, reinterpret_cast<double*>(out),
                          reinterpret_cast<double*>(logsumexp), scale, is_causal);
    return true;
  }
  return false;
}

bool attention_backward(int dtype, const AttentionShape& shape, uintptr_t grad_out,
                        const AttentionOperand& q, const AttentionOperand& k,
                        const AttentionOperand& v, const AttentionOperand* mask, uintptr_t out,
                        uintptr_t logsumexp, uintptr_t grad_q, uintptr_t grad_k,
                        uintptr_t grad_v, double scale, bool is_causal) {
  if (!valid_shape(shape, {&q, &k, &v, mask})) return false;
  if (batch_count(shape.batch) == 0) return true;
  auto run = [&](auto tag) {
    using T = decltype(tag);
    backward_typed<T>(shape, reinterpret_cast<const T*>(grad_out), q, k, v, mask,
                      reinterpret_cast<const T*>(out), reinterpret_cast<const T*>(logsumexp),
                      reinterpret_cast<T*>(grad_q), reinterpret_cast<T*>(grad_k),
                      reinterpret_cast<T*>(grad_v), static_cast<T>(scale), is_causal);
  };
  if (dtype == dtype_code<float>()) {
    run(float{});
    return true;
  }
  if (dtype == dtype_code<double>()) {
    run(double{});
    return true;
  }
  return false;
}

}  // namespace plait::cpu
