"""Reference kernel of the convolution group: one N-d convolution, plain or transposed.

Both directions loop over the kernel's offsets (a few to a few dozen) and do one batched
matrix product per offset over strided windows of the input, so no im2col buffer is built and
numpy's matmul does the arithmetic. Floats accumulate in float64 (complex in complex128),
integers in int64 with wrap-around into the output's width.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

import numpy as np

from .._core import dtype as _dtype
from .._core.tensor import Tensor
from .common import load, np_view, store


def _accumulator(dt: _dtype.dtype) -> np.dtype:
    if dt.is_complex:
        return np.dtype(np.complex128)
    if dt._category <= _dtype.INT:  # integers (and bool) compute exactly, then wrap
        return np.dtype(np.int64)
    return np.dtype(np.float64)


def _grouped(x: np.ndarray, groups: int) -> np.ndarray:
    """(N, G*C, *S) -> (N, G, C, *S)."""
    return x.reshape(x.shape[:1] + (groups, x.shape[1] // groups) + x.shape[2:])


def convolution(out: Tensor, input: Tensor, weight: Tensor, stride: Sequence[int],
                padding: Sequence[int], dilation: Sequence[int], transposed: bool,
                groups: int) -> None:
    """The ``convolution`` primitive (semantics in ``torch/_prims.py``)."""
    acc = _accumulator(out._dtype)
    nd = out.ndim - 2
    spatial_out = tuple(out._shape[2:])
    spatial_in = tuple(input._shape[2:])
    kernel = tuple(weight._shape[2:])
    if out.numel() == 0:
        return
    x = _grouped(np.asarray(load(input), dtype=acc), groups)  # (N, G, Ci, *S)
    w = np.asarray(load(weight), dtype=acc)
    n, g = x.shape[0], groups
    if not transposed:
        w = w.reshape((g, w.shape[0] // g) + w.shape[1:])  # (G, Co, Ci, *K)
        co = w.shape[1]
        # zero-pad the input so that every window lies inside it
        pads = [(0, 0)] * 3
        for d in range(nd):
            need = (spatial_out[d] - 1) * stride[d] + (kernel[d] - 1) * dilation[d] + 1
            pads.append((padding[d], max(0, need - spatial_in[d] - padding[d])))
        xp = np.pad(x, pads)
        result = np.zeros((n, g, co, int(np.prod(spatial_out, dtype=np.int64))), acc)
        for k in itertools.product(*(range(s) for s in kernel)):
            window = xp[(slice(None),) * 3 + tuple(
                slice(k[d] * dilation[d], k[d] * dilation[d] + (spatial_out[d] - 1) * stride[d]
                      + 1, stride[d]) for d in range(nd))]
            window = window.reshape(window.shape[:3] + (result.shape[3],))  # (N, G, Ci, P)
            result += np.matmul(w[(Ellipsis,) + k], window)  # (G, Co, Ci) @ -> (N, G, Co, P)
        result = result.reshape((n, g * co) + spatial_out)
    else:
        w = w.reshape((g, w.shape[0] // g) + w.shape[1:])  # (G, Ci, Co, *K)
        co = w.shape[2]
        # scatter into a buffer holding every position a contribution can land on, then cut
        # the padding off (and extend with zeros up to the output's size)
        span = [max((spatial_in[d] - 1) * stride[d] + (kernel[d] - 1) * dilation[d] + 1,
                    padding[d] + spatial_out[d]) for d in range(nd)]
        buf = np.zeros((n, g, co) + tuple(span), acc)
        flat_in = x.reshape(x.shape[:3] + (int(np.prod(spatial_in, dtype=np.int64)),))
        for k in itertools.product(*(range(s) for s in kernel)):
            wk = np.swapaxes(w[(Ellipsis,) + k], 1, 2)  # (G, Co, Ci)
            part = np.matmul(wk, flat_in).reshape((n, g, co) + spatial_in)
            buf[(slice(None),) * 3 + tuple(
                slice(k[d] * dilation[d], k[d] * dilation[d] + (spatial_in[d] - 1) * stride[d]
                      + 1, stride[d]) for d in range(nd))] += part
        result = buf[(slice(None),) * 3 + tuple(
            slice(padding[d], padding[d] + spatial_out[d]) for d in range(nd))]
        result = result.reshape((n, g * co) + spatial_out)
    if acc == np.int64:
        view = np_view(out)
        if out._dtype is _dtype.bool_:
            view[...] = result != 0
        else:
            view[...] = result.astype(view.dtype, casting="unsafe")  # wraps, as PyTorch's
        return
    store(out, result.astype(np.complex128 if acc == np.complex128 else np.float64))


KERNELS: dict[str, Callable[..., None]] = {"convolution": convolution}
