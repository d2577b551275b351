"""Wrappers of the fused LSTM / GRU cell kernels: they override core's composite aten ops
``_thnn_fused_lstm_cell``, ``_thnn_fused_lstm_cell_backward_impl``, ``_thnn_fused_gru_cell``
and ``_thnn_fused_gru_cell_backward`` (``torch/_rnn_cells.py``) under the CPU key; and of the
whole-sequence LSTM and GRU, ``_lstm_sequence``, ``_gru_sequence`` and their ``_backward`` ops
(``torch/_fused/rnn_sequence.py``; float32 and float64 only, the dtypes of the native products).

A wrapper checks its operands (one floating dtype, 2-d states and gates of matching shapes,
1-d biases), copies non-contiguous ones, allocates contiguous outputs and makes one native
call. Anything else (broadcast states, mixed dtypes, empty batches) runs the op's composite
from core, which is also the reference the tests compare with.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

from ._common import Kernel, addresses, composite, floating_codes


def _matrix(t: Any, rows: int, cols: int) -> bool:
    return t is not None and tuple(t.shape) == (rows, cols)


def make_kernels(
    native: ModuleType,
    dtype_codes: Mapping[Any, int],
    reference: Callable[[str], Kernel],
) -> dict[str, Kernel]:
    """The fused cell kernels, keyed by aten op (``"aten::_thnn_fused_lstm_cell"``...)."""
    import torch
    from torch.backends import contract

    codes = floating_codes(native, dtype_codes)

    def layout(state: Any, *operands: Any) -> tuple[int, int, int] | None:
        """(dtype code, batch, hidden) when ``state`` is a non-empty (batch, hidden) matrix
        and every operand (None allowed) has its dtype; None otherwise."""
        code = codes.get(state.dtype)
        if code is None or len(state.shape) != 2 or not state.numel():
            return None
        if any(t is not None and (t.dtype != state.dtype or t.device != state.device)
               for t in operands):
            return None
        return code, state.shape[0], state.shape[1]

    def biases_ok(width: int, *biases: Any) -> bool:
        return all(b is None or tuple(b.shape) == (width,) for b in biases)

    def contiguous(*tensors: Any) -> list[Any]:
        return [t.contiguous() if t is not None else None for t in tensors]

    def empty(state: Any, rows: int, cols: int) -> Any:
        return torch.empty((rows, cols), dtype=state.dtype, device=state.device)

    def dense(*tensors: Any) -> bool:
        return all(t is None or t.is_contiguous() for t in tensors)

    lstm_cell_forward = native.lstm_cell_forward
    lstm_cell_backward_native = native.lstm_cell_backward

    def plan_lstm_cell(input_gates: Any, hidden_gates: Any, cx: Any, input_bias: Any = None,
                       hidden_bias: Any = None) -> Kernel | None:
        """The kernel of one signature of contiguous operands the native cell takes: the
        checks and the outputs' layouts worked out once (an LSTM's every time step)."""
        args = (input_gates, hidden_gates, cx, input_bias, hidden_bias)
        lay = layout(cx, *args)
        if lay is None or not dense(*args):
            return None
        code, b, h = lay
        if not (_matrix(input_gates, b, 4 * h) and _matrix(hidden_gates, b, 4 * h)
                and biases_ok(4 * h, input_bias, hidden_bias)):
            return None
        dt, dev = cx.dtype, cx.device
        new_outputs = contract.allocator([((b, h), dt, dev), ((b, h), dt, dev),
                                          ((b, 4 * h), dt, dev)])

        def planned(input_gates: Any, hidden_gates: Any, cx: Any, input_bias: Any = None,
                    hidden_bias: Any = None) -> Any:
            outs, (hy, cy, ws) = new_outputs()
            if not lstm_cell_forward(
                    code, b, h, hy, cy, ws, input_gates.data_ptr(), hidden_gates.data_ptr(),
                    cx.data_ptr(), input_bias.data_ptr() if input_bias is not None else 0,
                    hidden_bias.data_ptr() if hidden_bias is not None else 0):
                return None  # the generic path
            return outs

        return planned

    def plan_lstm_cell_backward(grad_hy: Any, grad_cy: Any, cx: Any, cy: Any, workspace: Any,
                                has_bias: bool) -> Kernel | None:
        """The kernel of one signature of contiguous operands (as :func:`plan_lstm_cell`);
        the bias gradient, when asked for, is the gates' gradient summed over the batch."""
        lay = layout(cx, grad_hy, grad_cy, cy, workspace)
        if lay is None or not dense(grad_hy, grad_cy, cx, cy, workspace):
            return None
        code, b, h = lay
        if not (_matrix(cy, b, h) and _matrix(workspace, b, 4 * h)
                and all(g is None or _matrix(g, b, h) for g in (grad_hy, grad_cy))):
            return None
        dt, dev = cx.dtype, cx.device
        new_outputs = contract.allocator([((b, 4 * h), dt, dev), ((b, h), dt, dev)])

        def planned(grad_hy: Any, grad_cy: Any, cx: Any, cy: Any, workspace: Any,
                    has_bias: bool) -> Any:
            (grad_gates, grad_cx), (gg, gcx) = new_outputs()
            if not lstm_cell_backward_native(
                    code, b, h, gg, gcx, grad_hy.data_ptr() if grad_hy is not None else 0,
                    grad_cy.data_ptr() if grad_cy is not None else 0, cx.data_ptr(),
                    cy.data_ptr(), workspace.data_ptr()):
                return None  # the generic path
            return grad_gates, grad_cx, grad_gates.sum(0) if has_bias else None

        return planned

    @contract.plannable(plan_lstm_cell, native=True)
    def lstm_cell(input_gates: Any, hidden_gates: Any, cx: Any, input_bias: Any = None,
                  hidden_bias: Any = None) -> Any:
        args = (input_gates, hidden_gates, cx, input_bias, hidden_bias)
        lay = layout(cx, *args)
        if lay is None:
            return composite("aten::_thnn_fused_lstm_cell")(*args)
        code, b, h = lay
        if not (_matrix(input_gates, b, 4 * h) and _matrix(hidden_gates, b, 4 * h)
                and biases_ok(4 * h, input_bias, hidden_bias)):
            return composite("aten::_thnn_fused_lstm_cell")(*args)
        operands = contiguous(*args)  # referenced until the native call returns
        hy, cy, ws = empty(cx, b, h), empty(cx, b, h), empty(cx, b, 4 * h)
        ptrs = addresses(hy, cy, ws, *operands)
        if ptrs is None or not native.lstm_cell_forward(code, b, h, *ptrs):
            return composite("aten::_thnn_fused_lstm_cell")(*args)
        return hy, cy, ws

    # (not native: the bias gradient is a sum the planned kernel asks core for)
    @contract.plannable(plan_lstm_cell_backward)
    def lstm_cell_backward(grad_hy: Any, grad_cy: Any, cx: Any, cy: Any, workspace: Any,
                           has_bias: bool) -> Any:
        args = (grad_hy, grad_cy, cx, cy, workspace, has_bias)
        lay = layout(cx, grad_hy, grad_cy, cy, workspace)
        if lay is None:
            return composite("aten::_thnn_fused_lstm_cell_backward_impl")(*args)
        code, b, h = lay
        if not (_matrix(cy, b, h) and _matrix(workspace, b, 4 * h)
                and all(g is None or _matrix(g, b, h) for g in (grad_hy, grad_cy))):
            return composite("aten::_thnn_fused_lstm_cell_backward_impl")(*args)
        operands = contiguous(grad_hy, grad_cy, cx, cy, workspace)
        grad_gates, grad_cx = empty(cx, b, 4 * h), empty(cx, b, h)
        ptrs = addresses(grad_gates, grad_cx, *operands)
        if ptrs is None or not native.lstm_cell_backward(code, b, h, *ptrs):
            return composite("aten::_thnn_fused_lstm_cell_backward_impl")(*args)
        return grad_gates, grad_cx, grad_gates.sum(0) if has_bias else None

    gru_cell_forward = native.gru_cell_forward
    gru_cell_backward_native = native.gru_cell_backward

    def plan_gru_cell(input_gates: Any, hidden_gates: Any, hx: Any, input_bias: Any = None,
                      hidden_bias: Any = None) -> Kernel | None:
        """The kernel of one signature of contiguous operands (as :func:`plan_lstm_cell`)."""
        args = (input_gates, hidden_gates, hx, input_bias, hidden_bias)
        lay = layout(hx, *args)
        if lay is None or not dense(*args):
            return None
        code, b, h = lay
        if not (_matrix(input_gates, b, 3 * h) and _matrix(hidden_gates, b, 3 * h)
                and biases_ok(3 * h, input_bias, hidden_bias)):
            return None
        dt, dev = hx.dtype, hx.device
        new_outputs = contract.allocator([((b, h), dt, dev), ((b, 5 * h), dt, dev)])

        def planned(input_gates: Any, hidden_gates: Any, hx: Any, input_bias: Any = None,
                    hidden_bias: Any = None) -> Any:
            outs, (hy, ws) = new_outputs()
            if not gru_cell_forward(
                    code, b, h, hy, ws, input_gates.data_ptr(), hidden_gates.data_ptr(),
                    hx.data_ptr(), input_bias.data_ptr() if input_bias is not None else 0,
                    hidden_bias.data_ptr() if hidden_bias is not None else 0):
                return None  # the generic path
            return outs

        return planned

    def plan_gru_cell_backward(grad_hy: Any, workspace: Any, has_bias: bool) -> Kernel | None:
        """The kernel of one signature of contiguous operands (as
        :func:`plan_lstm_cell_backward`)."""
        lay = layout(grad_hy, workspace)
        if lay is None or not dense(grad_hy, workspace):
            return None
        code, b, h = lay
        if not _matrix(workspace, b, 5 * h):
            return None
        dt, dev = grad_hy.dtype, grad_hy.device
        new_outputs = contract.allocator([((b, 3 * h), dt, dev), ((b, 3 * h), dt, dev),
                                          ((b, h), dt, dev)])

        def planned(grad_hy: Any, workspace: Any, has_bias: bool) -> Any:
            (grad_input, grad_hidden, grad_hx), ptrs = new_outputs()
            if not gru_cell_backward_native(code, b, h, *ptrs, grad_hy.data_ptr(),
                                            workspace.data_ptr()):
                return None  # the generic path
            if has_bias:
                return grad_input, grad_hidden, grad_hx, grad_input.sum(0), grad_hidden.sum(0)
            return grad_input, grad_hidden, grad_hx, None, None

        return planned

    @contract.plannable(plan_gru_cell, native=True)
    def gru_cell(input_gates: Any, hidden_gates: Any, hx: Any, input_bias: Any = None,
                 hidden_bias: Any = None) -> Any:
        args = (input_gates, hidden_gates, hx, input_bias, hidden_bias)
        lay = layout(hx, *args)
        if lay is None:
            return composite("aten::_thnn_fused_gru_cell")(*args)
        code, b, h = lay
        if not (_matrix(input_gates, b, 3 * h) and _matrix(hidden_gates, b, 3 * h)
                and biases_ok(3 * h, input_bias, hidden_bias)):
            return composite("aten::_thnn_fused_gru_cell")(*args)
        operands = contiguous(*args)
        hy, ws = empty(hx, b, h), empty(hx, b, 5 * h)
        ptrs = addresses(hy, ws, *operands)
        if ptrs is None or not native.gru_cell_forward(code, b, h, *ptrs):
            return composite("aten::_thnn_fused_gru_cell")(*args)
        return hy, ws

    # (not native: the bias gradients are sums the planned kernel asks core for)
    @contract.plannable(plan_gru_cell_backward)
    def gru_cell_backward(grad_hy: Any, workspace: Any, has_bias: bool) -> Any:
        args = (grad_hy, workspace, has_bias)
        lay = layout(grad_hy, workspace)
        if lay is None:
            return composite("aten::_thnn_fused_gru_cell_backward")(*args)
        code, b, h = lay
        if not _matrix(workspace, b, 5 * h):
            return composite("aten::_thnn_fused_gru_cell_backward")(*args)
        operands = contiguous(grad_hy, workspace)
        grad_input, grad_hidden = empty(grad_hy, b, 3 * h), empty(grad_hy, b, 3 * h)
        grad_hx = empty(grad_hy, b, h)
        ptrs = addresses(grad_input, grad_hidden, grad_hx, *operands)
        if ptrs is None or not native.gru_cell_backward(code, b, h, *ptrs):
            return composite("aten::_thnn_fused_gru_cell_backward")(*args)
        if has_bias:
            return grad_input, grad_hidden, grad_hx, grad_input.sum(0), grad_hidden.sum(0)
        return grad_input, grad_hidden, grad_hx, None, None

    seq_codes = {dt: code for dt, code in codes.items() if dt in (torch.float32, torch.float64)}

    def sequence_layout(input_gates: Any, hx: Any, cx: Any, weight_hh: Any, bias_hh: Any,
                        *others: Any) -> tuple[int, int, int, int] | None:
        """(dtype code, steps, batch, hidden) when the operands have the layouts of
        ``aten::_lstm_sequence`` (others: (T, B, H) or (B, H) tensors, None allowed), one
        dtype the native loop runs and a non-empty sequence; None otherwise (the composite)."""
        code = seq_codes.get(hx.dtype)
        if code is None or len(hx.shape) != 2 or not hx.numel() or len(input_gates.shape) != 3:
            return None
        (t, b, g), h = input_gates.shape, hx.shape[1]
        if not t or g != 4 * h or b != hx.shape[0] or tuple(cx.shape) != (b, h) \
                or tuple(weight_hh.shape) != (g, h) or not biases_ok(g, bias_hh):
            return None
        operands = (input_gates, cx, weight_hh, bias_hh, *others)
        if any(o is not None and (o.dtype != hx.dtype or o.device != hx.device)
               for o in operands):
            return None
        if any(o is not None and tuple(o.shape) not in ((t, b, h), (b, h)) for o in others):
            return None
        return code, t, b, h

    native_sequence_forward = getattr(native, "lstm_sequence_forward", None)
    native_sequence_backward = getattr(native, "lstm_sequence_backward", None)

    def lstm_sequence(input_gates: Any, hx: Any, cx: Any, weight_hh: Any, bias_hh: Any = None,
                      reverse: bool = False) -> Any:
        args = (input_gates, hx, cx, weight_hh, bias_hh, reverse)
        lay = sequence_layout(input_gates, hx, cx, weight_hh, bias_hh)
        if lay is None:
            return composite("aten::_lstm_sequence")(*args)
        code, t, b, h = lay
        operands = contiguous(input_gates, hx, cx, weight_hh, bias_hh)
        dt, dev = hx.dtype, hx.device
        output = torch.empty((t, b, h), dtype=dt, device=dev)
        gates = torch.empty((t, b, 4 * h), dtype=dt, device=dev)
        cells = torch.empty((t, b, h), dtype=dt, device=dev)
        hy, cy = empty(hx, b, h), empty(hx, b, h)
        ptrs = addresses(output, hy, cy, gates, cells, *operands)
        if ptrs is None or not native_sequence_forward(code, t, b, h, bool(reverse), *ptrs):
            return composite("aten::_lstm_sequence")(*args)
        return output, hy, cy, gates, cells

    def lstm_sequence_backward(grad_output: Any, grad_hy: Any, grad_cy: Any, hx: Any, cx: Any,
                               weight_hh: Any, output: Any, gates: Any, cells: Any,
                               has_bias: bool, reverse: bool) -> Any:
        args = (grad_output, grad_hy, grad_cy, hx, cx, weight_hh, output, gates, cells,
                has_bias, reverse)
        lay = sequence_layout(gates, hx, cx, weight_hh, None, grad_output, grad_hy, grad_cy,
                              output, cells)
        if lay is None:
            return composite("aten::_lstm_sequence_backward")(*args)
        code, t, b, h = lay
        shapes = {"grad_output": (t, b, h), "output": (t, b, h), "cells": (t, b, h),
                  "grad_hy": (b, h), "grad_cy": (b, h)}
        given = {"grad_output": grad_output, "output": output, "cells": cells,
                 "grad_hy": grad_hy, "grad_cy": grad_cy}
        if any(v is not None and tuple(v.shape) != shapes[k] for k, v in given.items()):
            return composite("aten::_lstm_sequence_backward")(*args)
        operands = contiguous(grad_output, grad_hy, grad_cy, hx, cx, weight_hh, output, gates,
                              cells)
        dt, dev = hx.dtype, hx.device
        grad_gates = torch.empty((t, b, 4 * h), dtype=dt, device=dev)
        grad_hx, grad_cx = empty(hx, b, h), empty(hx, b, h)
        grad_weight = empty(hx, 4 * h, h)
        grad_bias = torch.empty((4 * h,), dtype=dt, device=dev) if has_bias else None
        ptrs = addresses(grad_gates, grad_hx, grad_cx, grad_weight, grad_bias, *operands)
        if ptrs is None or not native_sequence_backward(code, t, b, h, bool(reverse), *ptrs):
            return composite("aten::_lstm_sequence_backward")(*args)
        return grad_gates, grad_hx, grad_cx, grad_weight, grad_bias

    native_gru_forward = getattr(native, "gru_sequence_forward", None)
    native_gru_backward = getattr(native, "gru_sequence_backward", None)

    def gru_layout(seq: Any, width: int, weight_hh: Any, bias_hh: Any,
                   *others: Any) -> tuple[int, int, int, int] | None:
        """(dtype code, steps, batch, hidden) when ``seq`` is a non-empty (T, B, width * H)
        sequence (the input gates, width 3, or the cell workspaces, width 5) for a (3H, H)
        ``weight_hh`` of a dtype the native loop runs, ``bias_hh`` is (3H) or None and every
        operand (``others`` too, None allowed) has that dtype and device; None otherwise (the
        composite). The callers check the shapes of ``others``."""
        code = seq_codes.get(weight_hh.dtype)
        if code is None or len(weight_hh.shape) != 2 or len(seq.shape) != 3:
            return None
        (t, b, w), h = seq.shape, weight_hh.shape[1]
        if not (t and b and h) or w != width * h or weight_hh.shape[0] != 3 * h \
                or not biases_ok(3 * h, bias_hh):
            return None
        if any(o is not None and (o.dtype != weight_hh.dtype or o.device != weight_hh.device)
               for o in (seq, bias_hh, *others)):
            return None
        return code, t, b, h

    def gru_sequence(input_gates: Any, hx: Any, weight_hh: Any, bias_hh: Any = None,
                     reverse: bool = False) -> Any:
        args = (input_gates, hx, weight_hh, bias_hh, reverse)
        lay = gru_layout(input_gates, 3, weight_hh, bias_hh, hx)
        if lay is None or not _matrix(hx, lay[2], lay[3]):
            return composite("aten::_gru_sequence")(*args)
        code, t, b, h = lay
        operands = contiguous(input_gates, hx, weight_hh, bias_hh)
        dt, dev = hx.dtype, hx.device
        output = torch.empty((t, b, h), dtype=dt, device=dev)
        workspace = torch.empty((t, b, 5 * h), dtype=dt, device=dev)
        hy = empty(hx, b, h)
        ptrs = addresses(output, hy, workspace, *operands)
        if ptrs is None or not native_gru_forward(code, t, b, h, bool(reverse), *ptrs):
            return composite("aten::_gru_sequence")(*args)
        return output, hy, workspace

    def gru_sequence_backward(grad_output: Any, grad_hy: Any, weight_hh: Any, workspace: Any,
                              has_bias: bool, reverse: bool) -> Any:
        args = (grad_output, grad_hy, weight_hh, workspace, has_bias, reverse)
        lay = gru_layout(workspace, 5, weight_hh, None, grad_output, grad_hy)
        if lay is None:
            return composite("aten::_gru_sequence_backward")(*args)
        code, t, b, h = lay
        if (grad_output is not None and tuple(grad_output.shape) != (t, b, h)) \
                or (grad_hy is not None and not _matrix(grad_hy, b, h)):
            return composite("aten::_gru_sequence_backward")(*args)
        operands = contiguous(grad_output, grad_hy, weight_hh, workspace)
        dt, dev = weight_hh.dtype, weight_hh.device
        grad_gates = torch.empty((t, b, 3 * h), dtype=dt, device=dev)
        grad_hx = torch.empty((b, h), dtype=dt, device=dev)
        grad_weight = torch.empty((3 * h, h), dtype=dt, device=dev)
        grad_bias = torch.empty((3 * h,), dtype=dt, device=dev) if has_bias else None
        ptrs = addresses(grad_gates, grad_hx, grad_weight, grad_bias, *operands)
        if ptrs is None or not native_gru_backward(code, t, b, h, bool(reverse), *ptrs):
            return composite("aten::_gru_sequence_backward")(*args)
        return grad_gates, grad_hx, grad_weight, grad_bias

    kernels = {
        "aten::_thnn_fused_lstm_cell": lstm_cell,
        "aten::_thnn_fused_lstm_cell_backward_impl": lstm_cell_backward,
        "aten::_thnn_fused_gru_cell": gru_cell,
        "aten::_thnn_fused_gru_cell_backward": gru_cell_backward,
    }
    if native_sequence_forward is not None and native_sequence_backward is not None:
        kernels["aten::_lstm_sequence"] = lstm_sequence
        kernels["aten::_lstm_sequence_backward"] = lstm_sequence_backward
    if native_gru_forward is not None and native_gru_backward is not None:
        kernels["aten::_gru_sequence"] = gru_sequence
        kernels["aten::_gru_sequence_backward"] = gru_sequence_backward
    for name, fn in kernels.items():
        fn.__name__ = fn.__qualname__ = f"{name[len('aten::'):]}_cpu"
    return kernels
