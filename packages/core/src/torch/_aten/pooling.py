"""Pooling as PyTorch's ``aten::`` operators: ``max_pool2d_with_indices``, ``avg_pool2d``,
``adaptive_max_pool2d``, ``_adaptive_avg_pool2d`` and their backward operators
(``F.max_pool2d`` / ``max_pool1d``, ``F.avg_pool2d`` / ``avg_pool1d``,
``F.adaptive_max_pool2d`` / ``adaptive_max_pool1d``, ``F.adaptive_avg_pool2d`` /
``adaptive_avg_pool1d`` to sizes other than 1: the 1-d forms are the 2-d operators on an
unsqueezed input, as in PyTorch).

The kernels are composites over shape ops (windows by ``unfold``, padding by
``constant_pad_nd``), reductions and gathers, so every backend and the meta device serve them.
A max window picks its first maximum, or its last NaN when it holds one, as PyTorch's kernels
do; the index is the flat position in the input plane. The backward operators send each
output gradient to the input positions it read: the max ones add into the recorded index
(``scatter_add``), the average one spreads ``grad / divisor`` over each window. Derivatives:
``torch.autograd._formulas.pooling``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .._core import dispatch as _dispatch, dtype as _dtype
from .._core.tensor import Tensor
from . import factories as _fac, shape as _shape
from .nn_layout import ATEN as _LAYOUT
from .no_data import has_no_data

__all__: list[str] = []  # F.max_pool2d / F.avg_pool2d come from plait-nn

_SPATIAL = 2  # the operators here pool the last two dims

# the padding a max window never picks, per non-floating dtype (floating types pad with -inf)
_LOWEST = {_dtype.int8: -(2 ** 7), _dtype.int16: -(2 ** 15), _dtype.int32: -(2 ** 31),
           _dtype.int64: -(2 ** 63), _dtype.uint8: 0, _dtype.bool_: False}


def _arange(n: int, like: Tensor) -> Tensor:
    return _fac.tensor(list(range(n)), dtype=_dtype.int64, device=like.device)


def _pair(value: Any, name: str) -> list[int]:
    values = [int(v) for v in value] if isinstance(value, (list, tuple)) else [int(value)]
    if len(values) == 1:
        values = values * _SPATIAL
    if len(values) != _SPATIAL:
        raise RuntimeError(f"{name} must either be a single int, or a tuple of two ints")
    return values


def out_size(size: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    """A pooled dim's length: windows of span d*(k-1)+1 every s on the input padded by p (with
    ``ceil_mode`` a last partial window, if it starts inside the input or the left padding)."""
    num = size + 2 * p - (d * (k - 1) + 1)
    out = (-(-num // s) if ceil_mode else num // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _geometry(name: str, self: Tensor, kernel_size: Any, stride: Any, padding: Any,
              dilation: Any, ceil_mode: bool) -> tuple[list[int], ...]:
    """(kernel, stride, padding, dilation, output sizes) of a 2-d pooling call, checked."""
    if self.dim() not in (3, 4):
        raise RuntimeError(f"{name}: Expected 3D or 4D input tensor, but got "
                           f"{list(self.shape)}")
    k = _pair(kernel_size, "kernel_size")
    s = k if stride is None or (isinstance(stride, (list, tuple)) and not stride) else \
        _pair(stride, "stride")
    p, d = _pair(padding, "padding"), _pair(dilation, "dilation")
    if 0 in s:
        raise RuntimeError("stride should not be zero")
    if min(k) <= 0 or min(s) <= 0 or min(d) <= 0 or min(p) < 0:
        raise RuntimeError(f"{name}: kernel size, stride and dilation must be positive and "
                           f"padding non-negative, but got kernel_size={k}, stride={s}, "
                           f"padding={p}, dilation={d}")
    for ki, pi, di in zip(k, p, d):
        if pi > (di * (ki - 1) + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={pi}, kernel_size={ki} and dilation={di}")
    sizes = list(self.shape[-_SPATIAL:])
    outs = [out_size(*args, ceil_mode) for args in zip(sizes, k, s, p, d)]
    if min(outs) <= 0:
        plane = list(self.shape[-3:-_SPATIAL]) + outs
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, self.shape[-3:]))}). "
                           f"Calculated output size: ({'x'.join(map(str, plane))}). Output "
                           "size is too small")
    return k, s, p, d, outs


def _padded(x: Tensor, k: Sequence[int], s: Sequence[int], p: Sequence[int],
            d: Sequence[int], outs: Sequence[int], fill: Any) -> Tensor:
    """``x`` padded with ``fill`` over its last two dims: p before, whatever the last window
    needs after."""
    sizes = x.shape[-_SPATIAL:]
    pads: list[int] = []
    for sz, ki, si, pi, di, o in reversed(list(zip(sizes, k, s, p, d, outs))):
        pads += [pi, max((o - 1) * si + di * (ki - 1) + 1 - sz - pi, 0)]
    return _LAYOUT["constant_pad_nd"](x, pads, fill) if any(pads) else x


def _tap(padded: Tensor, t: int, k: Sequence[int], s: Sequence[int], d: Sequence[int],
         outs: Sequence[int]) -> Tensor:
    """(*lead, *outs): tap ``t`` (row-major in the kernel) of every window, a strided view."""
    u, v = divmod(t, k[1])
    return padded[..., u * d[0]:u * d[0] + (outs[0] - 1) * s[0] + 1:s[0],
                  v * d[1]:v * d[1] + (outs[1] - 1) * s[1] + 1:s[1]]


def _windows(x: Tensor, k: Sequence[int], s: Sequence[int], p: Sequence[int],
             d: Sequence[int], outs: Sequence[int], fill: Any) -> Tensor:
    """(*lead, *outs, kH*kW): the taps of every window over the last two dims of ``x``, padded
    with ``fill`` (p before, whatever the last window needs after)."""
    x = _padded(x, k, s, p, d, outs, fill)
    lead = x.dim() - _SPATIAL
    for i in range(_SPATIAL):
        x = x.unfold(lead + i, d[i] * (k[i] - 1) + 1, s[i])  # appends the window dim
        if d[i] > 1:
            x = x[..., ::d[i]]
    x = x[(Ellipsis, slice(0, outs[0]), slice(0, outs[1]), slice(None), slice(None))]
    return x.reshape(*x.shape[:lead + _SPATIAL], k[0] * k[1])


def _window_argmax(win: Tensor, source: Tensor) -> Tensor:
    """Per window (last dim) the tap PyTorch's max pooling picks: the first maximum, or the
    last NaN where the window holds one. The NaN search runs when ``source`` (the input the
    windows read) holds a NaN, or has no values to ask (meta, fake: the NaN-aware path gives
    the same result without one)."""
    arg = win.argmax(-1, keepdim=True)
    if win.is_floating_point() and (has_no_data(source) or bool(source.isnan().any())):
        nan = win.isnan()
        last_nan = (win.shape[-1] - 1) - nan.flip(-1).to(_dtype.uint8).argmax(-1, True)
        arg = last_nan.where(nan.any(-1, keepdim=True), arg)
    return arg


def _max_pool2d_with_indices(self: Tensor, kernel_size: Sequence[int],
                             stride: Sequence[int] = (), padding: Any = 0, dilation: Any = 1,
                             ceil_mode: bool = False) -> tuple[Tensor, Tensor]:
    k, s, p, d, outs = _geometry("max_pool2d", self, kernel_size, stride, padding, dilation,
                                 ceil_mode)
    fill = -math.inf if self.is_floating_point() else _LOWEST.get(self.dtype, 0)
    if self.is_floating_point() and (has_no_data(self) or bool(self.isnan().any())):
        win = _windows(self, k, s, p, d, outs, fill)
        arg = _window_argmax(win, self)
        values, tap = win.gather(-1, arg).squeeze(-1), arg.squeeze(-1)
    else:  # no NaN: the first maximum, tap by tap over strided views (no window copies)
        padded = _padded(self, k, s, p, d, outs, fill)
        values = _tap(padded, 0, k, s, d, outs).clone()
        tap = _fac.zeros(values.shape, dtype=_dtype.int64, device=self.device)
        for t in range(1, k[0] * k[1]):
            view = _tap(padded, t, k, s, d, outs)
            greater = view > values
            values = view.where(greater, values)
            tap = tap.masked_fill(greater, t)
    # flat input-plane position = the window's origin + the tap's offset in it (two small
    # tables: one pass over the output for each, not a division per element)
    width = self.shape[-1]
    origin = _fac.tensor([[(i * s[0] - p[0]) * width + j * s[1] - p[1] for j in range(outs[1])]
                          for i in range(outs[0])], dtype=_dtype.int64, device=self.device)
    offset = _fac.tensor([(t // k[1]) * d[0] * width + (t % k[1]) * d[1]
                          for t in range(k[0] * k[1])], dtype=_dtype.int64, device=self.device)
    return values, origin + offset.index_select(0, tap.reshape(-1)).reshape(tap.shape)


def _scatter_to_plane(name: str, grad_output: Tensor, self: Tensor, indices: Tensor) -> Tensor:
    """Each output gradient added into the input position ``indices`` names."""
    if list(grad_output.shape) != list(indices.shape):
        raise RuntimeError(f"{name}: expected grad_output and indices of one shape, but got "
                           f"{list(grad_output.shape)} and {list(indices.shape)}")
    lead = list(self.shape[:-_SPATIAL])
    plane = math.prod(self.shape[-_SPATIAL:])
    out = _fac.zeros((*lead, plane), dtype=grad_output.dtype, device=grad_output.device)
    pooled = math.prod(indices.shape[-_SPATIAL:])
    out = out.scatter_add(-1, indices.reshape(*lead, pooled),
                          grad_output.reshape(*lead, pooled))
    return out.reshape(self.shape)


def _max_pool2d_with_indices_backward(grad_output: Tensor, self: Tensor,
                                      kernel_size: Sequence[int], stride: Sequence[int],
                                      padding: Any, dilation: Any, ceil_mode: bool,
                                      indices: Tensor) -> Tensor:
    return _scatter_to_plane("max_pool2d_with_indices_backward", grad_output, self, indices)


def _avg_divisor(self: Tensor, k: Sequence[int], s: Sequence[int], p: Sequence[int],
                 outs: Sequence[int], count_include_pad: bool,
                 divisor_override: int | None) -> Any:
    """Each window's divisor, (oH, oW): its size clipped to the padded input
    (``count_include_pad``) or to the input, or the override."""
    if divisor_override is not None:
        if divisor_override == 0:
            raise RuntimeError("divisor must be not zero")
        return divisor_override
    sizes = self.shape[-_SPATIAL:]
    counts = []
    for i in range(_SPATIAL):
        starts = [j * s[i] - p[i] for j in range(outs[i])]
        ends = [min(a + k[i], sizes[i] + p[i]) for a in starts]
        if not count_include_pad:
            starts, ends = [max(a, 0) for a in starts], [min(e, sizes[i]) for e in ends]
        counts.append([e - a for a, e in zip(starts, ends)])
    return _fac.tensor([[a * b for b in counts[1]] for a in counts[0]], dtype=self.dtype,
                       device=self.device)


def _avg_pool2d(self: Tensor, kernel_size: Sequence[int], stride: Sequence[int] = (),
                padding: Any = 0, ceil_mode: bool = False, count_include_pad: bool = True,
                divisor_override: int | None = None) -> Tensor:
    k, s, p, _d, outs = _geometry("avg_pool2d", self, kernel_size, stride, padding, 1,
                                  ceil_mode)
    total = _windows(self, k, s, p, (1, 1), outs, 0).sum(-1)
    return total / _avg_divisor(self, k, s, p, outs, count_include_pad, divisor_override)


def _avg_pool2d_backward(grad_output: Tensor, self: Tensor, kernel_size: Sequence[int],
                         stride: Sequence[int], padding: Any, ceil_mode: bool,
                         count_include_pad: bool, divisor_override: int | None) -> Tensor:
    k, s, p, _d, outs = _geometry("avg_pool2d_backward", self, kernel_size, stride, padding,
                                  1, ceil_mode)
    share = grad_output / _avg_divisor(self, k, s, p, outs, count_include_pad,
                                       divisor_override)
    sizes = list(self.shape[-_SPATIAL:])
    # the padded plane every window lies in; each tap of the windows is one strided slice
    padded = [max((o - 1) * si + ki, sz + pi) for o, si, ki, sz, pi in
              zip(outs, s, k, sizes, p)]
    lead = list(self.shape[:-_SPATIAL])
    out = _fac.zeros((*lead, *padded), dtype=share.dtype, device=share.device)
    for a in range(k[0]):
        for b in range(k[1]):
            out[..., a:a + (outs[0] - 1) * s[0] + 1:s[0],
                b:b + (outs[1] - 1) * s[1] + 1:s[1]] += share
    return out[..., p[0]:p[0] + sizes[0], p[1]:p[1] + sizes[1]].contiguous()


def adaptive_bounds(size: int, out: int) -> list[tuple[int, int]]:
    """Adaptive pooling's windows along a dim: [floor(i*L/O), ceil((i+1)*L/O))."""
    return [((j * size) // out, -(-((j + 1) * size) // out)) for j in range(out)]


def _adaptive_max_pool2d(self: Tensor, output_size: Sequence[int]) -> tuple[Tensor, Tensor]:
    if self.dim() not in (3, 4):
        raise RuntimeError(f"adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: "
                           f"{list(self.shape)}")
    outs = [int(o) for o in output_size]
    if len(outs) != _SPATIAL:
        raise RuntimeError("adaptive_max_pool2d(): internal error: output_size.size() must "
                           "be 2")
    if min(outs) < 0:
        raise RuntimeError(f"adaptive_max_pool2d: elements of output_size must be greater "
                           f"than or equal to 0 but received {{{', '.join(map(str, outs))}}}")
    lead = list(self.shape[:-_SPATIAL])
    if 0 in outs:
        return (_fac.empty((*lead, *outs), dtype=self.dtype, device=self.device),
                _fac.empty((*lead, *outs), dtype=_dtype.int64, device=self.device))
    x = self
    taps = []  # per dim: (O, width) the input position of every tap, windows padded to one
    for i, (size, o) in enumerate(zip(self.shape[-_SPATIAL:], outs)):
        bounds = adaptive_bounds(size, o)
        width = max(e - a for a, e in bounds)
        # a window is padded by repeating its last element: it cannot change the maximum,
        # nor (coming later) which maximum is first
        pos = [[min(a + t, e - 1) for t in range(width)] for a, e in bounds]
        taps.append(pos)
        dim = len(lead) + 2 * i  # (each earlier dim became two: windows, taps)
        index = _fac.tensor([v for row in pos for v in row], dtype=_dtype.int64,
                            device=self.device)
        shape = list(x.shape)
        shape[dim:dim + 1] = [o, width]
        x = x.index_select(dim, index).reshape(shape)
    # x: (*lead, oH, wH, oW, wW) -> (*lead, oH, oW, wH * wW)
    n = len(lead)
    x = x.permute(*range(n), n, n + 2, n + 1, n + 3)
    win = x.reshape(*lead, outs[0], outs[1], len(taps[0][0]) * len(taps[1][0]))
    arg = _window_argmax(win, self)
    values = win.gather(-1, arg).squeeze(-1)
    width_w = len(taps[1][0])
    rows = _fac.tensor(taps[0], dtype=_dtype.int64, device=self.device)  # (oH, wH)
    cols = _fac.tensor(taps[1], dtype=_dtype.int64, device=self.device)  # (oW, wW)
    tap = arg.squeeze(-1)
    row = rows.reshape(-1).index_select(
        0, ((_arange(outs[0], self) * rows.shape[1]).reshape(outs[0], 1)
            + tap // width_w).reshape(-1)).reshape(tap.shape)
    col = cols.reshape(-1).index_select(
        0, (_arange(outs[1], self) * width_w
            + tap % width_w).reshape(-1)).reshape(tap.shape)
    return values, row * self.shape[-1] + col


def _adaptive_max_pool2d_backward(grad_output: Tensor, self: Tensor, indices: Tensor) -> Tensor:
    return _scatter_to_plane("adaptive_max_pool2d_backward", grad_output, self, indices)


def _check_adaptive(name: str, self: Tensor, output_size: Sequence[int]) -> list[int]:
    if self.dim() not in (3, 4):
        raise RuntimeError(f"{name}(): Expected 3D or 4D tensor, but got: {list(self.shape)}")
    outs = [int(o) for o in output_size]
    if len(outs) != _SPATIAL or min(outs) < 0:
        raise RuntimeError(f"{name}: output_size must be 2 sizes, each greater than or equal "
                           f"to 0, but received {outs}")
    return outs


def _adaptive_avg_pool2d(self: Tensor, output_size: Sequence[int]) -> Tensor:
    outs = _check_adaptive("adaptive_avg_pool2d", self, output_size)
    if 0 in outs:
        return _fac.empty((*self.shape[:-_SPATIAL], *outs), dtype=self.dtype,
                          device=self.device)
    x = self
    for i, o in enumerate(outs):
        dim = self.dim() - _SPATIAL + i
        length = x.shape[dim]
        if length % o == 0:  # equal windows: one mean over a reshaped dim
            shape = list(x.shape)
            shape[dim:dim + 1] = [o, length // o]
            x = x.reshape(shape).mean(dim + 1)
        else:
            x = _shape.cat([x.narrow(dim, a, e - a).mean(dim, keepdim=True)
                            for a, e in adaptive_bounds(length, o)], dim)
    return x if x is not self else self.clone()


def _averaging(size: int, out: int, like: Tensor) -> Tensor:
    """(out, size): row j averages the window [floor(j*L/O), ceil((j+1)*L/O))."""
    rows = [[0.0] * size for _ in range(out)]
    for j, (a, e) in enumerate(adaptive_bounds(size, out)):
        for t in range(a, e):
            rows[j][t] = 1.0 / (e - a)
    return _fac.tensor(rows, dtype=like.dtype, device=like.device)


def _adaptive_avg_pool2d_backward(grad_output: Tensor, self: Tensor) -> Tensor:
    """Each output gradient spread evenly over its window: the transposed averaging
    matrices, columns then rows."""
    _check_adaptive("adaptive_avg_pool2d_backward", self, grad_output.shape[-_SPATIAL:])
    if grad_output.numel() == 0 or self.numel() == 0:
        return _fac.zeros(self.shape, dtype=grad_output.dtype, device=grad_output.device)
    g = grad_output
    for dim in (-1, -2):
        g = (g.movedim(dim, -1) @ _averaging(self.shape[dim], g.shape[dim], g)).movedim(-1, dim)
    return g.contiguous()


_TABLE: dict[str, tuple[Any, ...]] = {
    "_adaptive_avg_pool2d": ("_adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> "
                             "Tensor", _adaptive_avg_pool2d),
    "_adaptive_avg_pool2d_backward": ("_adaptive_avg_pool2d_backward(Tensor grad_output, "
                                      "Tensor self) -> Tensor",
                                      _adaptive_avg_pool2d_backward),
    "max_pool2d_with_indices": (
        "max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], "
        "int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)",
        _max_pool2d_with_indices),
    "max_pool2d_with_indices_backward": (
        "max_pool2d_with_indices_backward(Tensor grad_output, Tensor self, int[2] kernel_size, "
        "int[2] stride, int[2] padding, int[2] dilation, bool ceil_mode, Tensor indices) -> "
        "Tensor", _max_pool2d_with_indices_backward),
    "avg_pool2d": (
        "avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
        "bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> "
        "Tensor", _avg_pool2d),
    "avg_pool2d_backward": (
        "avg_pool2d_backward(Tensor grad_output, Tensor self, int[2] kernel_size, "
        "int[2] stride, int[2] padding, bool ceil_mode, bool count_include_pad, "
        "int? divisor_override) -> Tensor", _avg_pool2d_backward),
    "adaptive_max_pool2d": (
        "adaptive_max_pool2d(Tensor self, int[2] output_size) -> (Tensor, Tensor)",
        _adaptive_max_pool2d),
    "adaptive_max_pool2d_backward": (
        "adaptive_max_pool2d_backward(Tensor grad_output, Tensor self, Tensor indices) -> "
        "Tensor", _adaptive_max_pool2d_backward),
}

ATEN: dict[str, _dispatch.Operator] = _dispatch.define_aten(_TABLE)
