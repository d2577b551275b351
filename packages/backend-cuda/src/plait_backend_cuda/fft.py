"""The cuda spectral primitives ``fft_c2c``, ``fft_r2c`` and ``fft_c2r``: one-dim passes of
:mod:`.render_fft` (direct sums), through device scratch tensors between passes.

The normalization is applied per pass (``1/sqrt(n_d)`` or ``1/n_d``), which multiplies to
core's ``1/sqrt(n)`` or ``1/n`` over the transformed sizes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from torch.backends import contract

from ._render import render_fft
from .kernels import (
    CALLS,
    DIALECT,
    MAX_RANK,
    buffer_args,
    cached_kernel,
    dtype_name,
    launch_1d,
    merge,
)

_REAL = {"complex64": "f32", "complex128": "f64", "float32": "f32", "float64": "f64"}
_COMPLEX_OF = {"float32": "complex64", "float64": "complex128"}


def _scale(normalization: int, n: int) -> float:
    return (1.0, 1.0 / math.sqrt(n), 1.0 / n)[normalization] if n else 1.0


def _pass(kind: str, out: Any, a: Any, dim: int, n: int, sign: int, scale: float) -> None:
    """One direct DFT along ``dim`` from ``a`` into ``out`` (their other dims alike)."""
    real = _REAL[dtype_name(out)]
    accumulator = "f64"
    # complex tensors count in pairs of scalars
    widths = [2 if dtype_name(t).startswith("complex") else 1 for t in (out, a)]
    keep = [k for k in range(out.dim()) if k != dim]
    sizes, (st_out, st_in) = merge([out.shape[k] for k in keep],
                                   [[out.stride(k) * widths[0] for k in keep],
                                    [a.stride(k) * widths[1] for k in keep]])
    if len(sizes) > MAX_RANK:
        raise contract.Decline
    n_out, n_in = out.shape[dim], a.shape[dim]
    lines = out.numel() // n_out
    i = out.device.index or 0
    key = ("dft", i, kind, real, len(sizes), accumulator)
    kernel = cached_kernel(key, i, lambda: render_fft.render_dft(DIALECT, kind, real,
                                                                  len(sizes), accumulator))
    (out_b, in_b), (off_out, off_in) = buffer_args([out, a])
    # buffer_args counts elements; complex elements are two scalars
    launch_1d(kernel, lines * n_out, [out_b, in_b, lines, n_out, n_in, n,
                                      off_out * widths[0], off_in * widths[1],
                                      out.stride(dim) * widths[0], a.stride(dim) * widths[1],
                                      sign, *sizes, *st_out, *st_in, scale])


def _check(out: Any, names: Sequence[str]) -> None:
    if out.dim() > MAX_RANK:
        raise contract.Decline


def _c2c_passes(out: Any, a: Any, dims: Sequence[int], normalization: int,
                forward: bool) -> None:
    """c2c passes over ``dims`` from ``a`` into ``out`` (scratch tensors between them)."""
    source = a
    for position, dim in enumerate(dims):
        last = position == len(dims) - 1
        target = out if last else contract.empty(tuple(out.shape), out.dtype, out.device)
        n = source.shape[dim]
        _pass("c2c", target, source, dim, n, -1 if forward else 1, _scale(normalization, n))
        source = target


@contract.may_decline
def fft_c2c(out: Any, a: Any, dims: Sequence[int], normalization: int, forward: bool) -> None:
    """``fft_c2c(Tensor(a!) out, Tensor a, int[] dims, int normalization, bool forward)`` on
    cuda."""
    name = dtype_name(out)
    if name not in ("complex64", "complex128") or a.dtype != out.dtype or not dims:
        raise contract.Decline
    _check(out, [name])
    CALLS["fft_c2c"] += 1
    if out.numel() == 0:
        return
    _c2c_passes(out, a, list(dims), normalization, forward)


@contract.may_decline
def fft_r2c(out: Any, a: Any, dims: Sequence[int], normalization: int, onesided: bool) -> None:
    """``fft_r2c(Tensor(a!) out, Tensor a, int[] dims, int normalization, bool onesided)`` on
    cuda: r2c along ``dims[-1]``, then c2c over the others."""
    name, real = dtype_name(out), dtype_name(a)
    if _COMPLEX_OF.get(real) != name or not dims:
        raise contract.Decline
    _check(out, [name])
    CALLS["fft_r2c"] += 1
    if out.numel() == 0:
        return
    dims = list(dims)
    last = dims[-1]
    first = out if len(dims) == 1 else contract.empty(tuple(out.shape), out.dtype, out.device)
    n = a.shape[last]
    _pass("r2c", first, a, last, n, -1, _scale(normalization, n))
    if len(dims) > 1:
        _c2c_passes(out, first, dims[:-1], normalization, True)


@contract.may_decline
def fft_c2r(out: Any, a: Any, dims: Sequence[int], normalization: int) -> None:
    """``fft_c2r(Tensor(a!) out, Tensor a, int[] dims, int normalization)`` on cuda: inverse
    c2c over ``dims[:-1]``, then c2r along ``dims[-1]``."""
    name, spectrum = dtype_name(out), dtype_name(a)
    if _COMPLEX_OF.get(name) != spectrum or not dims:
        raise contract.Decline
    _check(out, [name])
    CALLS["fft_c2r"] += 1
    if out.numel() == 0:
        return
    dims = list(dims)
    source = a
    if len(dims) > 1:
        source = contract.empty(tuple(a.shape), a.dtype, a.device)
        _c2c_passes(source, a, dims[:-1], normalization, False)
    last = dims[-1]
    n = out.shape[last]
    _pass("c2r", out, source, last, n, 1, _scale(normalization, n))


def kernels() -> dict[str, Callable[..., None]]:
    """Primitive name -> kernel for the spectral group."""
    return {"fft_c2c": fft_c2c, "fft_r2c": fft_r2c, "fft_c2r": fft_c2r}
