// A whole LSTM or GRU layer-direction; see rnn_sequence.h.
//
// The steps run in order on the calling thread (each depends on the one before); the products
// and the cells inside a step use the pool as they do on the per-step path. Where the per-step
// path makes one Python call per op and step, this loop makes none: that is the whole gain.
#include "rnn_sequence.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "blas.h"
#include "dtype.h"
#include "matmul.h"
#include "rnn_cells.h"

namespace plait::cpu {
namespace {

uintptr_t address(const void* p) { return reinterpret_cast<uintptr_t>(p); }

// The time index of the s-th step run.
int64_t time_of(int64_t s, int64_t steps, bool reverse) { return reverse ? steps - 1 - s : s; }

template <class T>
void copy_rows(T* dst, const T* src, int64_t n) {
  std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(T));
}

template <class T>
bool forward_typed(int dtype, int64_t steps, int64_t batch, int64_t hidden, bool reverse,
                   uintptr_t output, uintptr_t hy, uintptr_t cy, uintptr_t gates,
                   uintptr_t cells, uintptr_t input_gates, uintptr_t hx, uintptr_t cx,
                   uintptr_t weight_hh, uintptr_t bias_hh) {
  const int64_t g = 4 * hidden, bh = batch * hidden, bg = batch * g;
  std::vector<T> hidden_gates(static_cast<size_t>(bg));
  const T* h = ptr<const T>(hx);
  const T* c = ptr<const T>(cx);
  for (int64_t s = 0; s < steps; ++s) {
    const int64_t t = time_of(s, steps, reverse);
    T* h_out = ptr<T>(output) + t * bh;
    T* c_out = ptr<T>(cells) + t * bh;
    // the per-step path's two ops: F.linear(h, W_hh, b_hh), then the cell without biases
    if (!linear(dtype, batch, hidden, g, address(hidden_gates.data()), address(h), weight_hh,
                bias_hh) ||
        !lstm_cell_forward(dtype, batch, hidden, address(h_out), address(c_out),
                           address(ptr<T>(gates) + t * bg),
                           address(ptr<const T>(input_gates) + t * bg),
                           address(hidden_gates.data()), address(c), 0, 0)) {
      return false;
    }
    h = h_out;
    c = c_out;
  }
  copy_rows(ptr<T>(hy), h, bh);
  copy_rows(ptr<T>(cy), c, bh);
  return true;
}

template <class T>
bool backward_typed(int dtype, int64_t steps, int64_t batch, int64_t hidden, bool reverse,
                    uintptr_t grad_input_gates, uintptr_t grad_hx, uintptr_t grad_cx,
                    uintptr_t grad_weight_hh, uintptr_t grad_bias_hh, uintptr_t grad_output,
                    uintptr_t grad_hy, uintptr_t grad_cy, uintptr_t hx, uintptr_t cx,
                    uintptr_t weight_hh, uintptr_t output, uintptr_t gates, uintptr_t cells) {
  const int64_t g = 4 * hidden, bh = batch * hidden, bg = batch * g;
  const size_t state = static_cast<size_t>(bh);
  // dh, dc: the gradients of the state after the step being differentiated
  std::vector<T> dh(state, T(0)), dc(state, T(0)), dh_step(state), dc_prev(state);
  std::vector<T> h_prev(static_cast<size_t>(steps * bh));  // the h each step read, time order
  if (grad_hy) copy_rows(dh.data(), ptr<const T>(grad_hy), bh);
  if (grad_cy) copy_rows(dc.data(), ptr<const T>(grad_cy), bh);
  T* dgates = ptr<T>(grad_input_gates);
  const T* w = ptr<const T>(weight_hh);
  for (int64_t s = steps - 1; s >= 0; --s) {
    const int64_t t = time_of(s, steps, reverse);
    const int64_t prev = s > 0 ? time_of(s - 1, steps, reverse) : -1;
    if (grad_output) {
      const T* go = ptr<const T>(grad_output) + t * bh;
      for (int64_t k = 0; k < bh; ++k) dh_step[k] = dh[k] + go[k];
    } else {
      dh_step = dh;
    }
    const T* c_prev = prev >= 0 ? ptr<const T>(cells) + prev * bh : ptr<const T>(cx);
    const T* h_before = prev >= 0 ? ptr<const T>(output) + prev * bh : ptr<const T>(hx);
    copy_rows(h_prev.data() + t * bh, h_before, bh);
    if (!lstm_cell_backward(dtype, batch, hidden, address(dgates + t * bg),
                            address(dc_prev.data()), address(dh_step.data()),
                            address(dc.data()), address(c_prev),
                            address(ptr<const T>(cells) + t * bh),
                            address(ptr<const T>(gates) + t * bg))) {
      return false;
    }
    dc.swap(dc_prev);
    // grad of the previous h: d_gates (B, 4H) @ W_hh (4H, H)
    blas::gemm(false, false, batch, hidden, g, T(1), dgates + t * bg, g, w, hidden, T(0),
               dh.data(), hidden);
  }
  copy_rows(ptr<T>(grad_hx), dh.data(), bh);
  copy_rows(ptr<T>(grad_cx), dc.data(), bh);
  // every step's weight gradient in one product: d_gates^T (4H, T*B) @ h_prev (T*B, H)
  blas::gemm(true, false, g, hidden, steps * batch, T(1), dgates, g, h_prev.data(), hidden,
             T(0), ptr<T>(grad_weight_hh), hidden);
  if (grad_bias_hh) {
    T* gb = ptr<T>(grad_bias_hh);
    std::fill(gb, gb + g, T(0));
    for (int64_t r = 0; r < steps * batch; ++r) {
      const T* row = dgates + r * g;
      for (int64_t j = 0; j < g; ++j) gb[j] += row[j];
    }
  }
  return true;
}

// -- GRU ---------------------------------------------------------------------------------------

template <class T>
bool gru_forward_typed(int dtype, int64_t steps, int64_t batch, int64_t hidden, bool reverse,
                       uintptr_t output, uintptr_t hy, uintptr_t workspace,
                       uintptr_t input_gates, uintptr_t hx, uintptr_t weight_hh,
                       uintptr_t bias_hh) {
  const int64_t g = 3 * hidden, bh = batch * hidden, bg = batch * g, bw = batch * 5 * hidden;
  std::vector<T> hidden_gates(static_cast<size_t>(bg));
  const T* h = ptr<const T>(hx);
  for (int64_t s = 0; s < steps; ++s) {
    const int64_t t = time_of(s, steps, reverse);
    T* h_out = ptr<T>(output) + t * bh;
    // the per-step path's two ops: F.linear(h, W_hh, b_hh), then the cell without biases
    if (!linear(dtype, batch, hidden, g, address(hidden_gates.data()), address(h), weight_hh,
                bias_hh) ||
        !gru_cell_forward(dtype, batch, hidden, address(h_out),
                          address(ptr<T>(workspace) + t * bw),
                          address(ptr<const T>(input_gates) + t * bg),
                          address(hidden_gates.data()), address(h), 0, 0)) {
      return false;
    }
    h = h_out;
  }
  copy_rows(ptr<T>(hy), h, bh);
  return true;
}

template <class T>
bool gru_backward_typed(int dtype, int64_t steps, int64_t batch, int64_t hidden, bool reverse,
                        uintptr_t grad_input_gates, uintptr_t grad_hx, uintptr_t grad_weight_hh,
                        uintptr_t grad_bias_hh, uintptr_t grad_output, uintptr_t grad_hy,
                        uintptr_t weight_hh, uintptr_t workspace) {
  const int64_t g = 3 * hidden, w5 = 5 * hidden, bh = batch * hidden, bg = batch * g;
  const size_t state = static_cast<size_t>(bh);
  // dh: the gradient of the state after the step being differentiated
  std::vector<T> dh(state, T(0)), dh_step(state);
  // the hidden gates' gradients of every step, time order, for the one weight product
  std::vector<T> dhidden(static_cast<size_t>(steps * bg));
  if (grad_hy) copy_rows(dh.data(), ptr<const T>(grad_hy), bh);
  T* dinput = ptr<T>(grad_input_gates);
  const T* w = ptr<const T>(weight_hh);
  const T* ws = ptr<const T>(workspace);
  for (int64_t s = steps - 1; s >= 0; --s) {
    const int64_t t = time_of(s, steps, reverse);
    if (grad_output) {
      const T* go = ptr<const T>(grad_output) + t * bh;
      for (int64_t k = 0; k < bh; ++k) dh_step[k] = dh[k] + go[k];
    } else {
      dh_step = dh;
    }
    // dh = the cell's grad_hx (G * z) ...
    if (!gru_cell_backward(dtype, batch, hidden, address(dinput + t * bg),
                           address(dhidden.data() + t * bg), address(dh.data()),
                           address(dh_step.data()), address(ws + t * batch * w5))) {
      return false;
    }
    // ... + the hidden product's: d_hidden_gates (B, 3H) @ W_hh (3H, H)
    blas::gemm(false, false, batch, hidden, g, T(1), dhidden.data() + t * bg, g, w, hidden,
               T(1), dh.data(), hidden);
  }
  copy_rows(ptr<T>(grad_hx), dh.data(), bh);
  // every step's weight gradient in one product: d_hidden^T (3H, T*B) @ h_prev (T*B, H), the
  // h_prev rows read in place from the workspaces ([r, z, n, h_prev, hn], row stride 5H)
  blas::gemm(true, false, g, hidden, steps * batch, T(1), dhidden.data(), g, ws + 3 * hidden,
             w5, T(0), ptr<T>(grad_weight_hh), hidden);
  if (grad_bias_hh) {
    T* gb = ptr<T>(grad_bias_hh);
    std::fill(gb, gb + g, T(0));
    for (int64_t r = 0; r < steps * batch; ++r) {
      const T* row = dhidden.data() + r * g;
      for (int64_t j = 0; j < g; ++j) gb[j] += row[j];
    }
  }
  return true;
}

void check(int64_t steps, int64_t batch, int64_t hidden) {
  if (steps < 0 || batch < 0 || hidden <= 0) {
    throw std::invalid_argument("plait_backend_cpu: an rnn sequence needs steps, batch >= 0 "
                                "and hidden > 0");
  }
}

}  // namespace

bool lstm_sequence_forward(int dtype, int64_t steps, int64_t batch, int64_t hidden,
                           bool reverse, uintptr_t output, uintptr_t hy, uintptr_t cy,
                           uintptr_t gates, uintptr_t cells, uintptr_t input_gates,
                           uintptr_t hx, uintptr_t cx, uintptr_t weight_hh, uintptr_t bias_hh) {
  check(steps, batch, hidden);
  if (dtype == dtype_code<float>()) {
    return forward_typed<float>(dtype, steps, batch, hidden, reverse, output, hy, cy, gates,
                                cells, input_gates, hx, cx, weight_hh, bias_hh);
  }
  if (dtype == dtype_code<double>()) {
    return forward_typed<double>(dtype, steps, batch, hidden, reverse, output, hy, cy, gates,
                                 cells, input_gates, hx, cx, weight_hh, bias_hh);
  }
  return false;
}

bool lstm_sequence_backward(int dtype, int64_t steps, int64_t batch, int64_t hidden,
                            bool reverse, uintptr_t grad_input_gates, uintptr_t grad_hx,
                            uintptr_t grad_cx, uintptr_t grad_weight_hh, uintptr_t grad_bias_hh,
                            uintptr_t grad_output, uintptr_t grad_hy, uintptr_t grad_cy,
                            uintptr_t hx, uintptr_t cx, uintptr_t weight_hh, uintptr_t output,
                            uintptr_t gates, uintptr_t cells) {
  check(steps, batch, hidden);
  if (dtype == dtype_code<float>()) {
    return backward_typed<float>(dtype, steps, batch, hidden, reverse, grad_input_gates,
                                 grad_hx, grad_cx, grad_weight_hh, grad_bias_hh, grad_output,
                                 grad_hy, grad_cy, hx, cx, weight_hh, output, gates, cells);
  }
  if (dtype == dtype_code<double>()) {
    return backward_typed<double>(dtype, steps, batch, hidden, reverse, grad_input_gates,
                                  grad_hx, grad_cx, grad_weight_hh, grad_bias_hh, grad_output,
                                  grad_hy, grad_cy, hx, cx, weight_hh, output, gates, cells);
  }
  return false;
}

bool gru_sequence_forward(int dtype, int64_t steps, int64_t batch, int64_t hidden, bool reverse,
                          uintptr_t output, uintptr_t hy, uintptr_t workspace,
                          uintptr_t input_gates, uintptr_t hx, uintptr_t weight_hh,
                          uintptr_t bias_hh) {
  check(steps, batch, hidden);
  if (dtype == dtype_code<float>()) {
    return gru_forward_typed<float>(dtype, steps, batch, hidden, reverse, output, hy, workspace,
                                    input_gates, hx, weight_hh, bias_hh);
  }
  if (dtype == dtype_code<double>()) {
    return gru_forward_typed<double>(dtype, steps, batch, hidden, reverse, output, hy,
                                     workspace, input_gates, hx, weight_hh, bias_hh);
  }
  return false;
}

bool gru_sequence_backward(int dtype, int64_t steps, int64_t batch, int64_t hidden,
                           bool reverse, uintptr_t grad_input_gates, uintptr_t grad_hx,
                           uintptr_t grad_weight_hh, uintptr_t grad_bias_hh,
                           uintptr_t grad_output, uintptr_t grad_hy, uintptr_t weight_hh,
                           uintptr_t workspace) {
  check(steps, batch, hidden);
  if (dtype == dtype_code<float>()) {
    return gru_backward_typed<float>(dtype, steps, batch, hidden, reverse, grad_input_gates,
                                     grad_hx, grad_weight_hh, grad_bias_hh, grad_output,
                                     grad_hy, weight_hh, workspace);
  }
  if (dtype == dtype_code<double>()) {
    return gru_backward_typed<double>(dtype, steps, batch, hidden, reverse, grad_input_gates,
                                      grad_hx, grad_weight_hh, grad_bias_hh, grad_output,
                                      grad_hy, weight_hh, workspace);
  }
  return false;
}

}  // namespace plait::cpu
