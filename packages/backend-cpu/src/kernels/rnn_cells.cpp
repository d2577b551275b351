// Fused LSTM / GRU cells; see rnn_cells.h.
//
// One PLAIT_CLONES function per cell and direction runs over one row of the batch: unit-stride
// loops over the hidden units with branch-free sigmoid / tanh (vecmath.h for float), so they
// vectorise. T is the storage type, C<T> the arithmetic type (float for float16 / bfloat16).
// Absent operands (biases, gradients) arrive as a row of zeros, so the loops have no branches.
#include "rnn_cells.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "dtype.h"
#include "parallel.h"
#include "simd.h"
#include "vecmath.h"

namespace plait::cpu {
namespace {

template <class T>
using C = ComputeType<T>;

inline float tanh_c(float x) { return vecmath::tanh(x); }
inline double tanh_c(double x) { return std::tanh(x); }
inline float sigmoid_c(float x) { return 1.0f / (1.0f + vecmath::exp(-x)); }
inline double sigmoid_c(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// -- LSTM --------------------------------------------------------------------------------------

// One row: ig, hg, ws are 4H long; bias (4H, the sum of both biases or zeros) in C<T>.
template <class T>
PLAIT_CLONES void lstm_forward_row(int64_t h, T* __restrict hy, T* __restrict cy,
                                   T* __restrict ws, const T* __restrict ig,
                                   const T* __restrict hg, const T* __restrict cx,
                                   const C<T>* __restrict bias) {
  using Cv = C<T>;
  for (int64_t k = 0; k < h; ++k) {
    const Cv i = sigmoid_c(load(ig[k]) + load(hg[k]) + bias[k]);
    const Cv f = sigmoid_c(load(ig[h + k]) + load(hg[h + k]) + bias[h + k]);
    const Cv g = tanh_c(load(ig[2 * h + k]) + load(hg[2 * h + k]) + bias[2 * h + k]);
    const Cv o = sigmoid_c(load(ig[3 * h + k]) + load(hg[3 * h + k]) + bias[3 * h + k]);
    const Cv c = f * load(cx[k]) + i * g;
    hy[k] = store_as<T>(o * tanh_c(c));
    cy[k] = store_as<T>(c);
    ws[k] = store_as<T>(i);
    ws[h + k] = store_as<T>(f);
    ws[2 * h + k] = store_as<T>(g);
    ws[3 * h + k] = store_as<T>(o);
  }
}

// One row; ghy / gcy point at zeros when absent.
template <class T>
PLAIT_CLONES void lstm_backward_row(int64_t h, T* __restrict dgates, T* __restrict dcx,
                                    const T* __restrict ghy, const T* __restrict gcy,
                                    const T* __restrict cx, const T* __restrict cy,
                                    const T* __restrict ws) {
  using Cv = C<T>;
  for (int64_t k = 0; k < h; ++k) {
    const Cv i = load(ws[k]), f = load(ws[h + k]), g = load(ws[2 * h + k]);
    const Cv o = load(ws[3 * h + k]);
    const Cv tc = tanh_c(load(cy[k]));
    const Cv gh = load(ghy[k]);
    const Cv gc = load(gcy[k]) + gh * o * (Cv(1) - tc * tc);
    dgates[k] = store_as<T>(gc * g * i * (Cv(1) - i));
    dgates[h + k] = store_as<T>(gc * load(cx[k]) * f * (Cv(1) - f));
    dgates[2 * h + k] = store_as<T>(gc * i * (Cv(1) - g * g));
    dgates[3 * h + k] = store_as<T>(gh * tc * o * (Cv(1) - o));
    dcx[k] = store_as<T>(gc * f);
  }
}

// -- GRU ---------------------------------------------------------------------------------------

// One row: ig, hg are 3H long, ws 5H; ib, hb (3H each, zeros when absent) in C<T>.
template <class T>
PLAIT_CLONES void gru_forward_row(int64_t h, T* __restrict hy, T* __restrict ws,
                                  const T* __restrict ig, const T* __restrict hg,
                                  const T* __restrict hx, const C<T>* __restrict ib,
                                  const C<T>* __restrict hb) {
  using Cv = C<T>;
  for (int64_t k = 0; k < h; ++k) {
    const Cv r = sigmoid_c((load(ig[k]) + ib[k]) + (load(hg[k]) + hb[k]));
    const Cv z = sigmoid_c((load(ig[h + k]) + ib[h + k]) + (load(hg[h + k]) + hb[h + k]));
    const Cv hn = load(hg[2 * h + k]) + hb[2 * h + k];
    const Cv n = tanh_c((load(ig[2 * h + k]) + ib[2 * h + k]) + r * hn);
    const Cv x = load(hx[k]);
    hy[k] = store_as<T>(n + z * (x - n));
    ws[k] = store_as<T>(r);
    ws[h + k] = store_as<T>(z);
    ws[2 * h + k] = store_as<T>(n);
    ws[3 * h + k] = hx[k];
    ws[4 * h + k] = store_as<T>(hn);
  }
}

template <class T>
PLAIT_CLONES void gru_backward_row(int64_t h, T* __restrict dinput, T* __restrict dhidden,
                                   T* __restrict dhx, const T* __restrict ghy,
                                   const T* __restrict ws) {
  using Cv = C<T>;
  for (int64_t k = 0; k < h; ++k) {
    const Cv r = load(ws[k]), z = load(ws[h + k]), n = load(ws[2 * h + k]);
    const Cv x = load(ws[3 * h + k]), hn = load(ws[4 * h + k]);
    const Cv g = load(ghy[k]);
    const Cv dn = g * (Cv(1) - z) * (Cv(1) - n * n);
    const Cv dz = g * (x - n) * z * (Cv(1) - z);
    const Cv dr = dn * hn * r * (Cv(1) - r);
    dinput[k] = store_as<T>(dr);
    dinput[h + k] = store_as<T>(dz);
    dinput[2 * h + k] = store_as<T>(dn);
    dhidden[k] = store_as<T>(dr);
    dhidden[h + k] = store_as<T>(dz);
    dhidden[2 * h + k] = store_as<T>(dn * r);
    dhx[k] = store_as<T>(g * z);
  }
}

// -- dispatch ----------------------------------------------------------------------------------

// Rows per task: a step's elementwise work under kElementwiseGrain stays on one thread.
int64_t row_grain(int64_t row_elements) {
  return std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(row_elements, 1));
}

// `n` elements of `a` (+ `b`) in C<T>, zeros for an absent (0) operand.
template <class T>
std::vector<C<T>> bias_row(int64_t n, uintptr_t a, uintptr_t b) {
  std::vector<C<T>> out(static_cast<size_t>(n), C<T>(0));
  for (uintptr_t src : {a, b}) {
    if (!src) continue;
    for (int64_t k = 0; k < n; ++k) out[k] += load(ptr<const T>(src)[k]);
  }
  return out;
}

}  // namespace

bool lstm_cell_forward(int dtype, int64_t batch, int64_t hidden, uintptr_t hy, uintptr_t cy,
                       uintptr_t workspace, uintptr_t input_gates, uintptr_t hidden_gates,
                       uintptr_t cx, uintptr_t input_bias, uintptr_t hidden_bias) {
  return visit_floating(dtype, [&](auto tag) {
    using T = decltype(tag);
    const int64_t g = 4 * hidden;
    const std::vector<C<T>> bias = bias_row<T>(g, input_bias, hidden_bias);
    parallel_for(batch, row_grain(g), [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        lstm_forward_row<T>(hidden, ptr<T>(hy) + b * hidden, ptr<T>(cy) + b * hidden,
                            ptr<T>(workspace) + b * g, ptr<const T>(input_gates) + b * g,
                            ptr<const T>(hidden_gates) + b * g, ptr<const T>(cx) + b * hidden,
                            bias.data());
      }
    });
  });
}

bool lstm_cell_backward(int dtype, int64_t batch, int64_t hidden, uintptr_t grad_gates,
                        uintptr_t grad_cx, uintptr_t grad_hy, uintptr_t grad_cy, uintptr_t cx,
                        uintptr_t cy, uintptr_t workspace) {
  return visit_floating(dtype, [&](auto tag) {
    using T = decltype(tag);
    const int64_t g = 4 * hidden;
    // An absent gradient reads as one row of zeros, repeated (row stride 0).
    const std::vector<T> zeros(static_cast<size_t>(hidden), store_as<T>(C<T>(0)));
    const T* ghy = grad_hy ? ptr<const T>(grad_hy) : zeros.data();
    const T* gcy = grad_cy ? ptr<const T>(grad_cy) : zeros.data();
    const int64_t shy = grad_hy ? hidden : 0, scy = grad_cy ? hidden : 0;
    parallel_for(batch, row_grain(g), [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        lstm_backward_row<T>(hidden, ptr<T>(grad_gates) + b * g, ptr<T>(grad_cx) + b * hidden,
                             ghy + b * shy, gcy + b * scy, ptr<const T>(cx) + b * hidden,
                             ptr<const T>(cy) + b * hidden, ptr<const T>(workspace) + b * g);
      }
    });
  });
}

bool gru_cell_forward(int dtype, int64_t batch, int64_t hidden, uintptr_t hy,
                      uintptr_t workspace, uintptr_t input_gates, uintptr_t hidden_gates,
                      uintptr_t hx, uintptr_t input_bias, uintptr_t hidden_bias) {
  return visit_floating(dtype, [&](auto tag) {
    using T = decltype(tag);
    const int64_t g = 3 * hidden;
    const std::vector<C<T>> ib = bias_row<T>(g, input_bias, 0);
    const std::vector<C<T>> hb = bias_row<T>(g, hidden_bias, 0);
    parallel_for(batch, row_grain(g), [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        gru_forward_row<T>(hidden, ptr<T>(hy) + b * hidden, ptr<T>(workspace) + b * 5 * hidden,
                           ptr<const T>(input_gates) + b * g, ptr<const T>(hidden_gates) + b * g,
                           ptr<const T>(hx) + b * hidden, ib.data(), hb.data());
      }
    });
  });
}

bool gru_cell_backward(int dtype, int64_t batch, int64_t hidden, uintptr_t grad_input,
                       uintptr_t grad_hidden, uintptr_t grad_hx, uintptr_t grad_hy,
                       uintptr_t workspace) {
  return visit_floating(dtype, [&](auto tag) {
    using T = decltype(tag);
    const int64_t g = 3 * hidden;
    parallel_for(batch, row_grain(g), [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        gru_backward_row<T>(hidden, ptr<T>(grad_input) + b * g, ptr<T>(grad_hidden) + b * g,
                            ptr<T>(grad_hx) + b * hidden, ptr<const T>(grad_hy) + b * hidden,
                            ptr<const T>(workspace) + b * 5 * hidden);
      }
    });
  });
}

}  // namespace plait::cpu
