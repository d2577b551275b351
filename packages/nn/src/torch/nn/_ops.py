"""Composite functional ops the layers need that ``nn.functional`` does not have yet: padding
by mode, pooling through strided windows, batch norm, leaky relu.

Written in differentiable core ops (docs/ops.md: pooling is composite over strided windows),
so autograd needs no formulas of its own. ``nn.functional`` re-exports them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch
from torch import Tensor
from torch._aten.no_data import has_no_data
from torch.jit._recording import traced_as

_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def ntuple(x: Any, n: int, name: str = "argument") -> tuple[int, ...]:
    """``x`` as an ``n``-tuple of ints (an int repeats)."""
    if isinstance(x, (list, tuple)):
        if len(x) == 1:
            return (int(x[0]),) * n
        if len(x) != n:
            raise ValueError(f"{name} must have {n} elements, got {len(x)}")
        return tuple(int(v) for v in x)
    return (int(x),) * n


def _mode_index(size: int, before: int, after: int, mode: str, device: Any) -> Tensor:
    """Input positions read by the ``size + before + after`` outputs of a padded dim, computed
    as one vector (a Python loop over the positions cost ~100 ms for a 16k-sample signal)."""
    i = torch.arange(-before, size + after, device=device)
    if mode == "reflect":
        if size == 1:
            return torch.zeros_like(i)
        period = 2 * (size - 1)
        j = i.abs().remainder(period)
        return torch.where(j >= size, period - j, j)
    if mode == "replicate":
        return i.clamp(0, size - 1)
    # circular: negative pads crop first, the rest wraps around what is left
    lo, hi = max(-before, 0), size - max(-after, 0)
    return lo + (i - lo).remainder(hi - lo) if hi > lo else i


# one node in traces (and one ONNX Pad), as the aten operator PyTorch has for it
@traced_as("aten::pad")
def pad(input: Tensor, pad: Sequence[int], mode: str = "constant",
        value: float | None = None) -> Tensor:
    """``F.pad``: ``pad`` lists (before, after) pairs from the last dim backwards."""
    if mode not in _PAD_MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.dim():
        raise RuntimeError("Padding length should be less than or equal to two times the input "
                         "dimension but got padding length "
                         f"{len(pad)} and input of dimension {input.dim()}")
    if mode == "constant":  # one operator, as in PyTorch (negative pads crop)
        return torch.ops.aten.constant_pad_nd.default(input, [int(p) for p in pad],
                                                      0.0 if value is None else value)
    padded_dims = len(pad) // 2
    # the reflect/replicate/circular kernels pad the last 1-3 dims of an input with one or
    # two dims before them (batch and channels, or channels only), as PyTorch's do
    if not 1 <= padded_dims <= 3 or input.dim() not in (padded_dims + 1, padded_dims + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.dim()}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    out = input
    for k in range(len(pad) // 2):
        dim = input.dim() - 1 - k
        before, after = int(pad[2 * k]), int(pad[2 * k + 1])
        if before == 0 and after == 0:
            continue
        size = out.shape[dim]
        if mode == "reflect" and (before >= size or after >= size):
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding "
                               f"input dimension, but got: padding ({before}, {after}) at "
                               f"dimension {dim} of input {list(input.shape)}")
        if mode == "circular" and (before > size or after > size):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        out = out.index_select(dim, _mode_index(size, before, after, mode, out.device))
    return out


def _windows(x: Tensor, kernel: tuple[int, ...], stride: tuple[int, ...],
             dilation: tuple[int, ...]) -> Tensor:
    """(N, C, *out, *kernel) windows of the last ``len(kernel)`` dims of ``x``."""
    for i in range(len(kernel)):
        dim = 2 + i  # unfold keeps the other dims in place and appends the window dim
        span = dilation[i] * (kernel[i] - 1) + 1
        x = x.unfold(dim, span, stride[i])
        if dilation[i] > 1:
            x = x[..., :: dilation[i]]
    # unfold appends each window dim at the end, in order: (N, C, *out, *kernel)
    return x


def _out_size(size: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    span = d * (k - 1) + 1
    num = size + 2 * p - span
    out = (-(-num // s) if ceil_mode else num // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1  # the last window must start inside the input or the left padding
    return out


# How PyTorch's pooling errors name each dim's value: (kT, kH, kW) for 3-d windows.
_DIM_LETTERS = {1: ("W",), 2: ("H", "W"), 3: ("T", "H", "W")}


def _check_window(n: int, k: tuple[int, ...], s: tuple[int, ...], p: tuple[int, ...],
                  d: tuple[int, ...]) -> None:
    """PyTorch's checks of a pooling window, in its order: a zero stride first (the output
    size divides by it), then signs, then padding against the window."""
    letters = _DIM_LETTERS[n]

    def values(prefix: str, vs: tuple[int, ...]) -> str:
        return " ".join(f"{prefix}{letter}: {v}" for letter, v in zip(letters, vs))

    if 0 in s:
        raise RuntimeError("stride should not be zero")
    for pi in p:
        if pi < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {pi}")
    for label, prefix, vs in (("kernel size", "k", k), ("stride", "d", s),
                              ("dilation", "dilation", d)):
        if any(v <= 0 for v in vs):
            raise RuntimeError(f"{label} should be greater than zero, but got "
                               f"{values(prefix, vs)}")
    for ki, pi, di in zip(k, p, d):
        if pi > (di * (ki - 1) + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={pi}, kernel_size={ki} and dilation={di}")


def _check_out_size(x: Tensor, n: int, outs: list[int]) -> None:
    if any(o <= 0 for o in outs):
        sizes, plane = list(x.shape[1:]), list(x.shape[1:-n]) + outs
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, sizes))}). Calculated output "
                           f"size: ({'x'.join(map(str, plane))}). Output size is too small")


def _check_pool(input: Tensor, n: int, name: str) -> None:
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(f"{name}: Expected {n + 1}D or {n + 2}D input tensor, but got "
                           f"{list(input.shape)}")


def window_max(win: Tensor, source: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """Maximum over the last dim of ``win`` and its index, as PyTorch's max-pooling kernels
    pick it: the first maximum, or the last NaN when the window holds one. The value is a
    gather at that index, so the gradient goes to that one element (``amax`` would share it
    among ties, and give NaN gradients around a NaN). ``source``, the tensor the windows read
    (smaller than the windows), is where to look for NaN."""
    arg = win.argmax(-1, keepdim=True)
    src = win if source is None else source
    # Under vmap the NaN test cannot steer Python (a value per sample), nor on a meta or fake
    # tensor (no values): take the NaN-aware path, which gives the same result when there is
    # none.
    if win.is_floating_point() and (torch._C._functorch.is_batchedtensor(src)
                                    or has_no_data(src) or bool(src.isnan().any())):
        nan = win.isnan()
        last_nan = (win.shape[-1] - 1) - nan.flip(-1).to(torch.uint8).argmax(-1, True)
        arg = torch.where(nan.any(-1, keepdim=True), last_nan, arg)
    return win.gather(-1, arg).squeeze(-1), arg.squeeze(-1)


_MAX_POOL2D = torch.ops.aten.max_pool2d_with_indices.default
_AVG_POOL2D = torch.ops.aten.avg_pool2d.default
_ADAPTIVE_MAX_POOL2D = torch.ops.aten.adaptive_max_pool2d.default
_ADAPTIVE_AVG_POOL2D = torch.ops.aten._adaptive_avg_pool2d.default


def _as_2d(input: Tensor, n: int, *settings: Sequence[int]) -> tuple[Any, ...]:
    """A 1-d pooling as PyTorch runs it, through its 2-d operator: the input with a height
    of 1 and each setting with a leading 1 (0 for the padding); 2-d calls as they are."""
    if n == 2:
        return (input, *(list(v) for v in settings))
    lead = (1, 1, 0, 1)
    return (input.unsqueeze(-2), *([first, *v] for first, v in zip(lead, settings)))


# one node in traces (and one ONNX node), as the aten operator PyTorch has for it
@traced_as("aten::max_pool{n}d")
def max_pool(input: Tensor, n: int, kernel_size: Any, stride: Any = None, padding: Any = 0,
             dilation: Any = 1, ceil_mode: bool = False,
             return_indices: bool = False) -> Any:
    """``F.max_pool{n}d``: maximum over each window (padding counts as -inf)."""
    _check_pool(input, n, f"max_pool{n}d")
    batched = input.dim() == n + 2
    x = input if batched else input.unsqueeze(0)
    k = ntuple(kernel_size, n, "kernel_size")
    s = k if stride is None or (isinstance(stride, (list, tuple)) and not stride) else \
        ntuple(stride, n, "stride")
    p, d = ntuple(padding, n, "padding"), ntuple(dilation, n, "dilation")
    _check_window(n, k, s, p, d)
    sizes = x.shape[2:]
    outs = [_out_size(sz, ki, si, pi, di, ceil_mode) for sz, ki, si, pi, di in
            zip(sizes, k, s, p, d)]
    _check_out_size(x, n, outs)
    if n <= 2:  # one operator, as in PyTorch (1-d: the 2-d one on a (..., 1, L) view)
        values, index = _MAX_POOL2D(*_as_2d(input, n, k, s, p, d), ceil_mode)
        if n == 1:
            values, index = values.squeeze(-2), index.squeeze(-2)
        return (values, index) if return_indices else values
    pads = []
    for sz, ki, si, pi, di, o in zip(sizes, k, s, p, d, outs):
        need = (o - 1) * si + di * (ki - 1) + 1 - sz - pi  # right padding the last window uses
        pads.append((pi, max(need, 0)))
    flat = [v for before_after in reversed(pads) for v in before_after]
    padded = pad(x, flat, value=-math.inf) if any(flat) else x
    win = _windows(padded, k, s, d)
    win = win[(slice(None), slice(None), *(slice(0, o) for o in outs))]
    if not return_indices and not (input.requires_grad and torch.is_grad_enabled()):
        values = win.amax(tuple(range(-n, 0)))
        return values if batched else values.squeeze(0)
    # flat index of the max inside each window -> index into the (unpadded) input plane
    flat_win = win.reshape(*win.shape[: 2 + n], math.prod(win.shape[2 + n:]))
    values, arg = window_max(flat_win, x)
    if not return_indices:
        return values if batched else values.squeeze(0)
    coords = []
    rem = arg
    for i in reversed(range(n)):
        coords.append(rem % k[i])
        rem = torch.div(rem, k[i], rounding_mode="floor")
    coords = coords[::-1]
    index = torch.zeros_like(arg)
    for i in range(n):
        shape = [1] * (2 + n)
        shape[2 + i] = outs[i]
        start = (torch.arange(outs[i], device=arg.device) * s[i] - p[i]).reshape(shape)
        pos = start + coords[i] * d[i]
        index = index * sizes[i] + pos
    return (values, index) if batched else (values.squeeze(0), index.squeeze(0))


# one node in traces (and one ONNX node), as the aten operator PyTorch has for it
@traced_as("aten::avg_pool{n}d")
def avg_pool(input: Tensor, n: int, kernel_size: Any, stride: Any = None, padding: Any = 0,
             ceil_mode: bool = False, count_include_pad: bool = True,
             divisor_override: int | None = None) -> Tensor:
    """``F.avg_pool{n}d``: mean over each window."""
    _check_pool(input, n, f"avg_pool{n}d")
    batched = input.dim() == n + 2
    x = input if batched else input.unsqueeze(0)
    k = ntuple(kernel_size, n, "kernel_size")
    s = k if stride is None or (isinstance(stride, (list, tuple)) and not stride) else \
        ntuple(stride, n, "stride")
    p = ntuple(padding, n, "padding")
    _check_window(n, k, s, p, (1,) * n)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    sizes = x.shape[2:]
    outs = [_out_size(sz, ki, si, pi, 1, ceil_mode) for sz, ki, si, pi in zip(sizes, k, s, p)]
    _check_out_size(x, n, outs)
    if n <= 2:  # one operator, as in PyTorch (1-d: the 2-d one on a (..., 1, L) view)
        view, k2, s2, p2, _d2 = _as_2d(input, n, k, s, p, (1,) * n)
        out = _AVG_POOL2D(view, k2, s2, p2, ceil_mode, count_include_pad, divisor_override)
        return out.squeeze(-2) if n == 1 else out
    pads = []
    for sz, ki, si, pi, o in zip(sizes, k, s, p, outs):
        need = (o - 1) * si + ki - sz - pi
        pads.append((pi, max(need, 0)))
    flat = [v for ba in reversed(pads) for v in ba]
    padded = pad(x, flat, value=0.0) if any(flat) else x
    win = _windows(padded, k, s, (1,) * n)
    win = win[(slice(None), slice(None), *(slice(0, o) for o in outs))]
    total = win.sum(tuple(range(-n, 0)))
    if divisor_override:
        return (total / divisor_override) if batched else (total / divisor_override).squeeze(0)
    # divisor per window: its size clipped to input + padding (count_include_pad) or input
    div = None
    for i in range(n):
        starts = torch.arange(outs[i], device=x.device) * s[i] - p[i]
        ends = torch.clamp(starts + k[i], max=sizes[i] + p[i])
        if count_include_pad:
            size = ends - starts
        else:
            size = torch.clamp(ends, max=sizes[i]) - torch.clamp(starts, min=0)
        shape = [1] * n
        shape[i] = outs[i]
        size = size.reshape(shape)
        div = size if div is None else div * size
    out = total / div.to(total.dtype)
    return out if batched else out.squeeze(0)


# one node in traces (and one ONNX node), as the aten operator PyTorch has for it
@traced_as("aten::adaptive_avg_pool{n}d")
def adaptive_avg_pool(input: Tensor, n: int, output_size: Any) -> Tensor:
    """``F.adaptive_avg_pool{n}d``: windows [floor(i*L/O), ceil((i+1)*L/O))."""
    sizes = input.shape[-n:]
    outs = [sz if o is None else int(o) for sz, o in
            zip(sizes, output_size if isinstance(output_size, (list, tuple))
                else (output_size,) * n)]
    empty = _adaptive_empty(input, n, outs, f"adaptive_avg_pool{n}d")
    if empty is not None:
        return empty
    if all(o == 1 for o in outs):  # one mean over the window dims, as in PyTorch
        return input.mean(tuple(range(-n, 0)), keepdim=True)
    if n <= 2 and input.dim() in (n + 1, n + 2):  # one operator, as in PyTorch
        if n == 1:
            return _ADAPTIVE_AVG_POOL2D(input.unsqueeze(-2), [1, *outs]).squeeze(-2)
        return _ADAPTIVE_AVG_POOL2D(input, outs)
    x = input
    for i in range(n):
        dim = x.dim() - n + i
        length, o = sizes[i], outs[i]
        if length % o == 0:
            shape = list(x.shape)
            shape[dim: dim + 1] = [o, length // o]
            x = x.reshape(shape).mean(dim + 1)
        else:
            parts = [x.narrow(dim, (j * length) // o,
                              -(-((j + 1) * length) // o) - (j * length) // o).mean(
                                  dim, keepdim=True) for j in range(o)]
            x = torch.cat(parts, dim)
    return x


def _adaptive_empty(input: Tensor, n: int, outs: list[int], name: str) -> Tensor | None:
    """Refuse negative output sizes; for an output size of 0, the empty result (still in the
    graph, as PyTorch's is)."""
    if any(o < 0 for o in outs):
        raise RuntimeError(f"{name}: elements of output_size must be greater than or equal to 0 "
                           f"but received {{{', '.join(map(str, outs))}}}")
    if 0 not in outs:
        return None
    return input.reshape(-1)[:0].reshape(*input.shape[:-n], *outs)


def adaptive_max_pool(input: Tensor, n: int, output_size: Any,
                      return_indices: bool = False) -> Any:
    """``F.adaptive_max_pool{n}d``: the maximum of each window [floor(i*L/O), ceil((i+1)*L/O))
    and, with ``return_indices``, its flat index in the input plane (first maximum wins)."""
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(f"adaptive_max_pool{n}d(): Expected {n + 1}D or {n + 2}D tensor, "
                           f"but got: {list(input.shape)}")
    sizes = input.shape[-n:]
    outs = [sz if o is None else int(o) for sz, o in
            zip(sizes, output_size if isinstance(output_size, (list, tuple))
                else (output_size,) * n)]
    if len(outs) != n:
        raise RuntimeError(f"adaptive_max_pool{n}d(): internal error: output_size.size() must "
                           f"be {n}")
    empty = _adaptive_empty(input, n, outs, f"adaptive_max_pool{n}d")
    if empty is not None:
        return (empty, torch.zeros(empty.shape, dtype=torch.int64, device=input.device)) \
            if return_indices else empty
    if n <= 2:  # one operator, as in PyTorch (1-d: the 2-d one on a (..., 1, L) view)
        values, index = _ADAPTIVE_MAX_POOL2D(input if n == 2 else input.unsqueeze(-2),
                                             outs if n == 2 else [1, *outs])
        if n == 1:
            values, index = values.squeeze(-2), index.squeeze(-2)
        return (values, index) if return_indices else values
    x = input
    lead = input.dim() - n
    positions = []  # per dim: (O, K) input position of every window tap
    for i in range(n):
        dim = lead + i
        length, o = sizes[i], outs[i]
        starts = [(j * length) // o for j in range(o)]
        ends = [-(-((j + 1) * length) // o) for j in range(o)]
        width = max(e - s for s, e in zip(starts, ends)) if o else 0
        # windows are padded to a common width by repeating their last element (which cannot
        # change the maximum, nor, coming later, which maximum is first)
        pos = torch.tensor([[min(s + t, e - 1) for t in range(width)]
                            for s, e in zip(starts, ends)], dtype=torch.int64)
        positions.append(pos.reshape(o, width))
        shape = list(x.shape)
        shape[dim: dim + 1] = [o, width]
        x = x.index_select(dim, pos.reshape(-1).to(x.device)).reshape(shape)
        x = x.movedim(dim + 1, -1)
    # x: (*lead, *outs, *widths)
    win = x.reshape(*x.shape[: lead + n], math.prod(x.shape[lead + n:]))
    values, arg = window_max(win, input)
    if not return_indices:
        return values
    widths = [p.shape[1] for p in positions]
    index = torch.zeros_like(arg)
    rem = arg
    taps = []
    for i in reversed(range(n)):
        taps.append(rem % widths[i])
        rem = torch.div(rem, widths[i], rounding_mode="floor")
    taps = taps[::-1]
    for i in range(n):
        shape = [1] * (lead + n)
        shape[lead + i] = outs[i]
        # position of tap t of window j along dim i: positions[i][j, t]
        j = torch.arange(outs[i]).reshape(shape).to(arg.device).expand_as(arg)
        flat_pos = positions[i].reshape(-1).to(arg.device)
        pos = flat_pos.index_select(0, (j * widths[i] + taps[i]).reshape(-1)).reshape(
            arg.shape)
        index = index * sizes[i] + pos
    return values, index


# one node in traces (and one ONNX node), as the aten operator PyTorch has for it
@traced_as("aten::batch_norm")
def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None,
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """``F.batch_norm``: normalise over every dim but 1. In training the batch statistics are
    used and the running ones updated (unbiased variance), as PyTorch does."""
    if input.dim() < 2:
        raise ValueError(f"expected 2D or more input (got {input.dim()}D input)")
    if training and input.shape[1] and input.numel() // input.shape[1] <= 1:
        raise ValueError("Expected more than 1 value per channel when training, got input "
                         f"size {input.shape}")
    # one operator, as in PyTorch: it computes half precision in float32 and, in training,
    # updates the running statistics in place
    return _NATIVE_BATCH_NORM(input, weight, bias, running_mean, running_var, training,
                              momentum, eps)[0]


_NATIVE_BATCH_NORM = torch.ops.aten.native_batch_norm.default


_LEAKY_RELU = torch.ops.aten.leaky_relu.default


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``x`` where positive, ``negative_slope * x`` elsewhere."""
    if inplace:  # recorded as an in-place write, so gradients flow through it
        from torch.nn._functional.activation import leaky_relu_

        return leaky_relu_(input, negative_slope)
    return _LEAKY_RELU(input, negative_slope)
