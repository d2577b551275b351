// A whole LSTM or GRU layer-direction, forward and backward: the recurrences of
// `aten::_lstm_sequence` / `aten::_gru_sequence` and their `_backward` ops
// (torch/_fused/rnn_sequence.py, the reference) as one native call each, so a sequence of T
// steps costs two calls instead of T matmuls, T cells and their autograd nodes.
//
// Every step is the per-step path's own work: the hidden product through `linear` (matmul.h,
// what F.linear runs) and the fused cell (rnn_cells.h), so the outputs are the step loop's bits.
// Operands are contiguous and row-major, float32 or float64 (another dtype returns false and
// the wrapper, plait_backend_cpu/kernels/rnn.py, runs the composite). A step's "previous" state
// is the one of the step before it in running order (t - 1, or t + 1 with `reverse`), hx / cx
// for the first. LSTM layouts: input_gates and gates (T, B, 4H), output and cells (T, B, H),
// hx, cx, hy, cy (B, H), weight_hh (4H, H), bias_hh (4H). GRU layouts: input_gates (T, B, 3H),
// workspace (T, B, 5H: each step's gru_cell_forward workspace, which holds the state the step
// read), output (T, B, H), hx, hy (B, H), weight_hh (3H, H), bias_hh (3H).
#pragma once

#include <cstdint>

namespace plait::cpu {

// Runs the T LSTM steps: output[t] = h_t, cells[t] = c_t, gates[t] = the activated gates of
// step t, hy / cy the final state. bias_hh may be 0 (none).
bool lstm_sequence_forward(int dtype, int64_t steps, int64_t batch, int64_t hidden,
                           bool reverse, uintptr_t output, uintptr_t hy, uintptr_t cy,
                           uintptr_t gates, uintptr_t cells, uintptr_t input_gates,
                           uintptr_t hx, uintptr_t cx, uintptr_t weight_hh, uintptr_t bias_hh);

// The gradients of input_gates (T, B, 4H; also the hidden gates' gradient), hx, cx, weight_hh
// (4H, H: one product over every step) and, when grad_bias_hh is not 0, bias_hh (4H) for
// grad_output (T, B, H), grad_hy, grad_cy (B, H; each 0 when absent: zero).
bool lstm_sequence_backward(int dtype, int64_t steps, int64_t batch, int64_t hidden,
                            bool reverse, uintptr_t grad_input_gates, uintptr_t grad_hx,
                            uintptr_t grad_cx, uintptr_t grad_weight_hh, uintptr_t grad_bias_hh,
                            uintptr_t grad_output, uintptr_t grad_hy, uintptr_t grad_cy,
                            uintptr_t hx, uintptr_t cx, uintptr_t weight_hh, uintptr_t output,
                            uintptr_t gates, uintptr_t cells);

// Runs the T GRU steps: output[t] = h_t, workspace[t] = the cell's workspace of step t, hy the
// final state. bias_hh may be 0 (none).
bool gru_sequence_forward(int dtype, int64_t steps, int64_t batch, int64_t hidden, bool reverse,
                          uintptr_t output, uintptr_t hy, uintptr_t workspace,
                          uintptr_t input_gates, uintptr_t hx, uintptr_t weight_hh,
                          uintptr_t bias_hh);

// The gradients of input_gates (T, B, 3H), hx, weight_hh (3H, H: one product over every step,
// the previous states read from the workspaces) and, when grad_bias_hh is not 0, bias_hh (3H)
// for grad_output (T, B, H) and grad_hy (B, H; each 0 when absent: zero).
bool gru_sequence_backward(int dtype, int64_t steps, int64_t batch, int64_t hidden,
                           bool reverse, uintptr_t grad_input_gates, uintptr_t grad_hx,
                           uintptr_t grad_weight_hh, uintptr_t grad_bias_hh,
                           uintptr_t grad_output, uintptr_t grad_hy, uintptr_t weight_hh,
                           uintptr_t workspace);

}  // namespace plait::cpu
