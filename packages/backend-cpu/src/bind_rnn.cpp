// Bindings of the fused LSTM / GRU cells (kernels/rnn_cells.cpp) and the whole-sequence LSTM
// and GRU (kernels/rnn_sequence.cpp). Operands are contiguous;
// plait_backend_cpu/kernels/rnn.py checks them and allocates the outputs.
#include "bindings.h"
#include "kernels/rnn_cells.h"
#include "kernels/rnn_sequence.h"

using namespace nanobind::literals;

namespace plait::cpu {

void bind_rnn(nb::module_& m) {
  m.def(
      "lstm_cell_forward",
      [](int dtype, int64_t batch, int64_t hidden, uintptr_t hy, uintptr_t cy, uintptr_t ws,
         uintptr_t input_gates, uintptr_t hidden_gates, uintptr_t cx, uintptr_t input_bias,
         uintptr_t hidden_bias) {
        MaybeReleaseGil nogil(Dims{batch, 4 * hidden});
        return lstm_cell_forward(dtype, batch, hidden, hy, cy, ws, input_gates, hidden_gates,
                                 cx, input_bias, hidden_bias);
      },
      "dtype"_a, "batch"_a, "hidden"_a, "hy"_a, "cy"_a, "workspace"_a, "input_gates"_a,
      "hidden_gates"_a, "cx"_a, "input_bias"_a, "hidden_bias"_a,
      "One LSTM step from its gate pre-activations (a bias address of 0: none).");
  m.def(
      "lstm_cell_backward",
      [](int dtype, int64_t batch, int64_t hidden, uintptr_t grad_gates, uintptr_t grad_cx,
         uintptr_t grad_hy, uintptr_t grad_cy, uintptr_t cx, uintptr_t cy, uintptr_t ws) {
        MaybeReleaseGil nogil(Dims{batch, 4 * hidden});
        return lstm_cell_backward(dtype, batch, hidden, grad_gates, grad_cx, grad_hy, grad_cy,
                                  cx, cy, ws);
      },
      "dtype"_a, "batch"_a, "hidden"_a, "grad_gates"_a, "grad_cx"_a, "grad_hy"_a, "grad_cy"_a,
      "cx"_a, "cy"_a, "workspace"_a,
      "Gradients of the gates and cx of lstm_cell_forward (a gradient address of 0: zero).");
  m.def(
      "gru_cell_forward",
      [](int dtype, int64_t batch, int64_t hidden, uintptr_t hy, uintptr_t ws,
         uintptr_t input_gates, uintptr_t hidden_gates, uintptr_t hx, uintptr_t input_bias,
         uintptr_t hidden_bias) {
        MaybeReleaseGil nogil(Dims{batch, 3 * hidden});
        return gru_cell_forward(dtype, batch, hidden, hy, ws, input_gates, hidden_gates, hx,
                                input_bias, hidden_bias);
      },
      "dtype"_a, "batch"_a, "hidden"_a, "hy"_a, "workspace"_a, "input_gates"_a,
      "hidden_gates"_a, "hx"_a, "input_bias"_a, "hidden_bias"_a,
      "One GRU step from its gate pre-activations (a bias address of 0: none).");
  m.def(
      "gru_cell_backward",
      [](int dtype, int64_t batch, int64_t hidden, uintptr_t grad_input, uintptr_t grad_hidden,
         uintptr_t grad_hx, uintptr_t grad_hy, uintptr_t ws) {
        MaybeReleaseGil nogil(Dims{batch, 3 * hidden});
        return gru_cell_backward(dtype, batch, hidden, grad_input, grad_hidden, grad_hx,
                                 grad_hy, ws);
      },
      "dtype"_a, "batch"_a, "hidden"_a, "grad_input"_a, "grad_hidden"_a, "grad_hx"_a,
      "grad_hy"_a, "workspace"_a, "Gradients of the gates and hx of gru_cell_forward.");
  m.def(
      "lstm_sequence_forward",
      [](int dtype, int64_t steps, int64_t batch, int64_t hidden, bool reverse,
         uintptr_t output, uintptr_t hy, uintptr_t cy, uintptr_t gates, uintptr_t cells,
         uintptr_t input_gates, uintptr_t hx, uintptr_t cx, uintptr_t weight_hh,
         uintptr_t bias_hh) {
        MaybeReleaseGil nogil(Dims{steps, batch, 4 * hidden, hidden});
        return lstm_sequence_forward(dtype, steps, batch, hidden, reverse, output, hy, cy,
                                     gates, cells, input_gates, hx, cx, weight_hh, bias_hh);
      },
      "dtype"_a, "steps"_a, "batch"_a, "hidden"_a, "reverse"_a, "output"_a, "hy"_a, "cy"_a,
      "gates"_a, "cells"_a, "input_gates"_a, "hx"_a, "cx"_a, "weight_hh"_a, "bias_hh"_a,
      "A whole LSTM layer-direction from its input gates (a bias address of 0: none).");
  m.def(
      "lstm_sequence_backward",
      [](int dtype, int64_t steps, int64_t batch, int64_t hidden, bool reverse,
         uintptr_t grad_input_gates, uintptr_t grad_hx, uintptr_t grad_cx,
         uintptr_t grad_weight_hh, uintptr_t grad_bias_hh, uintptr_t grad_output,
         uintptr_t grad_hy, uintptr_t grad_cy, uintptr_t hx, uintptr_t cx, uintptr_t weight_hh,
         uintptr_t output, uintptr_t gates, uintptr_t cells) {
        MaybeReleaseGil nogil(Dims{steps, batch, 4 * hidden, hidden});
        return lstm_sequence_backward(dtype, steps, batch, hidden, reverse, grad_input_gates,
                                      grad_hx, grad_cx, grad_weight_hh, grad_bias_hh,
                                      grad_output, grad_hy, grad_cy, hx, cx, weight_hh, output,
                                      gates, cells);
      },
      "dtype"_a, "steps"_a, "batch"_a, "hidden"_a, "reverse"_a, "grad_input_gates"_a,
      "grad_hx"_a, "grad_cx"_a, "grad_weight_hh"_a, "grad_bias_hh"_a, "grad_output"_a,
      "grad_hy"_a, "grad_cy"_a, "hx"_a, "cx"_a, "weight_hh"_a, "output"_a, "gates"_a,
      "cells"_a,
      "Gradients of lstm_sequence_forward's inputs (a gradient address of 0: zero; a "
      "grad_bias_hh of 0: not computed).");
  m.def(
      "gru_sequence_forward",
      [](int dtype, int64_t steps, int64_t batch, int64_t hidden, bool reverse,
         uintptr_t output, uintptr_t hy, uintptr_t workspace, uintptr_t input_gates,
         uintptr_t hx, uintptr_t weight_hh, uintptr_t bias_hh) {
        MaybeReleaseGil nogil(Dims{steps, batch, 3 * hidden, hidden});
        return gru_sequence_forward(dtype, steps, batch, hidden, reverse, output, hy, workspace,
                                    input_gates, hx, weight_hh, bias_hh);
      },
      "dtype"_a, "steps"_a, "batch"_a, "hidden"_a, "reverse"_a, "output"_a, "hy"_a,
      "workspace"_a, "input_gates"_a, "hx"_a, "weight_hh"_a, "bias_hh"_a,
      "A whole GRU layer-direction from its input gates (a bias address of 0: none).");
  m.def(
      "gru_sequence_backward",
      [](int dtype, int64_t steps, int64_t batch, int64_t hidden, bool reverse,
         uintptr_t grad_input_gates, uintptr_t grad_hx, uintptr_t grad_weight_hh,
         uintptr_t grad_bias_hh, uintptr_t grad_output, uintptr_t grad_hy, uintptr_t weight_hh,
         uintptr_t workspace) {
        MaybeReleaseGil nogil(Dims{steps, batch, 3 * hidden, hidden});
        return gru_sequence_backward(dtype, steps, batch, hidden, reverse, grad_input_gates,
                                     grad_hx, grad_weight_hh, grad_bias_hh, grad_output, grad_hy,
                                     weight_hh, workspace);
      },
      "dtype"_a, "steps"_a, "batch"_a, "hidden"_a, "reverse"_a, "grad_input_gates"_a,
      "grad_hx"_a, "grad_weight_hh"_a, "grad_bias_hh"_a, "grad_output"_a, "grad_hy"_a,
      "weight_hh"_a, "workspace"_a,
      "Gradients of gru_sequence_forward's inputs (a gradient address of 0: zero; a "
      "grad_bias_hh of 0: not computed).");
}

}  // namespace plait::cpu
