"""The spectral primitives of the GPU backends, ``fft_c2c``, ``fft_r2c`` and ``fft_c2r``:
one-dim passes of :mod:`.render_fft` (direct sums), through device scratch tensors between
passes; one source for plait-backend-xpu and plait-backend-cuda, each passing its
:class:`~.render_launch.LaunchBackend`.

The normalization is applied per pass (``1/sqrt(n_d)`` or ``1/n_d``), which multiplies to
core's ``1/sqrt(n)`` or ``1/n`` over the transformed sizes. Double precision runs only on
devices that have it (the others decline it).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from torch.backends import contract

from . import render_fft
from .render_geometry import merge
from .render_launch import LaunchBackend

_REAL = {"complex64": "f32", "complex128": "f64", "float32": "f32", "float64": "f64"}
_COMPLEX_OF = {"float32": "complex64", "float64": "complex128"}


def _scale(normalization: int, n: int) -> float:
    return (1.0, 1.0 / math.sqrt(n), 1.0 / n)[normalization] if n else 1.0


def _pass(b: LaunchBackend, kind: str, out: Any, a: Any, dim: int, n: int, sign: int,
          scale: float) -> None:
    """One direct DFT along ``dim`` from ``a`` into ``out`` (their other dims alike)."""
    real = _REAL[b.dtype_name(out)]
    accumulator = "f64" if b.has_fp64(out) else "f32"
    # complex tensors count in pairs of scalars
    widths = [2 if b.dtype_name(t).startswith("complex") else 1 for t in (out, a)]
    keep = [k for k in range(out.dim()) if k != dim]
    sizes, (st_out, st_in) = merge([out.shape[k] for k in keep],
                                   [[out.stride(k) * widths[0] for k in keep],
                                    [a.stride(k) * widths[1] for k in keep]])
    if len(sizes) > b.max_rank:
        raise contract.Decline
    n_out, n_in = out.shape[dim], a.shape[dim]
    lines = out.numel() // n_out
    i = out.device.index or 0
    key = ("dft", i, kind, real, len(sizes), accumulator)
    kernel = b.cached_kernel(key, i, lambda: render_fft.render_dft(b.dialect, kind, real,
                                                                    len(sizes), accumulator))
    (out_b, in_b), (off_out, off_in) = b.buffer_args([out, a])
    # buffer_args counts elements; complex elements are two scalars
    b.launch_1d(kernel, lines * n_out, i, [out_b, in_b, lines, n_out, n_in, n,
                                           off_out * widths[0], off_in * widths[1],
                                           out.stride(dim) * widths[0], a.stride(dim) * widths[1],
                                           sign, *sizes, *st_out, *st_in, scale])


def _check(b: LaunchBackend, out: Any, names: Sequence[str]) -> None:
    if "float64" in names or "complex128" in names:
        if not b.has_fp64(out):
            raise contract.Decline  # no double precision on this device
    if out.dim() > b.max_rank:
        raise contract.Decline


def _c2c_passes(b: LaunchBackend, out: Any, a: Any, dims: Sequence[int], normalization: int,
                forward: bool) -> None:
    """c2c passes over ``dims`` from ``a`` into ``out`` (scratch tensors between them)."""
    source = a
    for position, dim in enumerate(dims):
        last = position == len(dims) - 1
        target = out if last else contract.empty(tuple(out.shape), out.dtype, out.device)
        n = source.shape[dim]
        _pass(b, "c2c", target, source, dim, n, -1 if forward else 1, _scale(normalization, n))
        source = target


def kernels(b: LaunchBackend) -> dict[str, Callable[..., None]]:
    """Primitive name -> kernel for the spectral group on backend ``b``."""

    @contract.may_decline
    def fft_c2c(out: Any, a: Any, dims: Sequence[int], normalization: int, forward: bool) -> None:
        """``fft_c2c(Tensor(a!) out, Tensor a, int[] dims, int normalization, bool forward)``."""
        name = b.dtype_name(out)
        if name not in ("complex64", "complex128") or a.dtype != out.dtype or not dims:
            raise contract.Decline
        _check(b, out, [name])
        b.calls["fft_c2c"] += 1
        if out.numel() == 0:
            return
        _c2c_passes(b, out, a, list(dims), normalization, forward)


    @contract.may_decline
    def fft_r2c(out: Any, a: Any, dims: Sequence[int], normalization: int, onesided: bool) -> None:
        """``fft_r2c(Tensor(a!) out, Tensor a, int[] dims, int normalization, bool onesided)`` on
        the device: r2c along ``dims[-1]``, then c2c over the others."""
        name, real = b.dtype_name(out), b.dtype_name(a)
        if _COMPLEX_OF.get(real) != name or not dims:
            raise contract.Decline
        _check(b, out, [name])
        b.calls["fft_r2c"] += 1
        if out.numel() == 0:
            return
        dims = list(dims)
        last = dims[-1]
        first = out if len(dims) == 1 else contract.empty(tuple(out.shape), out.dtype, out.device)
        n = a.shape[last]
        _pass(b, "r2c", first, a, last, n, -1, _scale(normalization, n))
        if len(dims) > 1:
            _c2c_passes(b, out, first, dims[:-1], normalization, True)


    @contract.may_decline
    def fft_c2r(out: Any, a: Any, dims: Sequence[int], normalization: int) -> None:
        """``fft_c2r(Tensor(a!) out, Tensor a, int[] dims, int normalization)``: inverse c2c
        over ``dims[:-1]``, then c2r along ``dims[-1]``."""
        name, spectrum = b.dtype_name(out), b.dtype_name(a)
        if _COMPLEX_OF.get(name) != spectrum or not dims:
            raise contract.Decline
        _check(b, out, [name])
        b.calls["fft_c2r"] += 1
        if out.numel() == 0:
            return
        dims = list(dims)
        source = a
        if len(dims) > 1:
            source = contract.empty(tuple(a.shape), a.dtype, a.device)
            _c2c_passes(b, source, a, dims[:-1], normalization, False)
        last = dims[-1]
        n = out.shape[last]
        _pass(b, "c2r", out, source, last, n, 1, _scale(normalization, n))

    return {"fft_c2c": fft_c2c, "fft_r2c": fft_r2c, "fft_c2r": fft_c2r}
