// Fused LSTM and GRU cells: one step of the recurrence after both matrix products, forward and
// backward. They override core's composite aten ops `_thnn_fused_lstm_cell`,
// `_thnn_fused_lstm_cell_backward_impl`, `_thnn_fused_gru_cell` and
// `_thnn_fused_gru_cell_backward` (torch/_rnn_cells.py, the reference; docs/architecture.md).
//
// Every operand is contiguous, row-major (batch, k * hidden) or (batch, hidden), and of dtype
// `dtype`: float32, float64, float16 or bfloat16 (the 16-bit types load into float, compute in
// float and round once on store). Another dtype returns false and the wrapper
// (plait_backend_cpu/kernels/rnn.py) runs the composite. Rows are split over the worker
// threads; every element is computed the same way whatever the thread count.
#pragma once

#include <cstdint>

namespace plait::cpu {

// gates = input_gates + hidden_gates (+ input_bias + hidden_bias, each 4H, 0 when absent),
// split into i, f, g, o: cy = sigmoid(f) * cx + sigmoid(i) * tanh(g), hy = sigmoid(o) *
// tanh(cy), workspace = the activated gates (batch, 4H).
bool lstm_cell_forward(int dtype, int64_t batch, int64_t hidden, uintptr_t hy, uintptr_t cy,
                       uintptr_t workspace, uintptr_t input_gates, uintptr_t hidden_gates,
                       uintptr_t cx, uintptr_t input_bias, uintptr_t hidden_bias);

// The gradient of the gates (batch, 4H) and of cx for the gradients grad_hy and grad_cy (each
// 0 when absent: zero) from cx, cy and the workspace of lstm_cell_forward.
bool lstm_cell_backward(int dtype, int64_t batch, int64_t hidden, uintptr_t grad_gates,
                        uintptr_t grad_cx, uintptr_t grad_hy, uintptr_t grad_cy, uintptr_t cx,
                        uintptr_t cy, uintptr_t workspace);

// r = sigmoid(i_r + h_r), z = sigmoid(i_z + h_z), n = tanh(i_n + r * h_n) (the biases, 3H
// each or 0, added to their gates first), hy = n + z * (hx - n); workspace = [r, z, n, hx, h_n]
// (batch, 5H).
bool gru_cell_forward(int dtype, int64_t batch, int64_t hidden, uintptr_t hy,
                      uintptr_t workspace, uintptr_t input_gates, uintptr_t hidden_gates,
                      uintptr_t hx, uintptr_t input_bias, uintptr_t hidden_bias);

// The gradients of the input gates, the hidden gates (batch, 3H each) and hx for grad_hy from
// the workspace of gru_cell_forward.
bool gru_cell_backward(int dtype, int64_t batch, int64_t hidden, uintptr_t grad_input,
                       uintptr_t grad_hidden, uintptr_t grad_hx, uintptr_t grad_hy,
                       uintptr_t workspace);

}  // namespace plait::cpu
