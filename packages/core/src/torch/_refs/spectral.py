"""Reference kernels of the spectral group: discrete Fourier transforms with numpy.fft.

``numpy.fft`` is imported by the first transform, not with the other reference kernels: most
programs never take one. numpy computes float32/complex64 in single precision, as PyTorch's
CPU kernels do. Every kernel runs the unscaled transform and scales once afterwards, so the
three normalizations share one code path.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._core.tensor import Tensor
from .common import np_view, store


def _numpy_fft() -> Any:
    from numpy import fft  # (loads pocketfft's extension: only when a transform runs)

    return fft


def _scaled(values: np.ndarray, signal: Sequence[int], normalization: int) -> np.ndarray:
    """``values`` times 1 (normalization 0), 1/sqrt(n) (1) or 1/n (2); n = prod(signal)."""
    if normalization == 0:
        return values
    n = math.prod(signal)
    scale = 1.0 / math.sqrt(n) if normalization == 1 else 1.0 / n
    return values * values.real.dtype.type(scale)


def fft_c2c(out: Tensor, a: Tensor, dims: Sequence[int], normalization: int,
            forward: bool) -> None:
    """Complex-to-complex transform of ``a`` over ``dims`` (``torch._core.prims``)."""
    if out.numel() == 0:
        return
    fft = _numpy_fft()
    axes = list(dims)
    x = np_view(a)
    # norm="forward" leaves numpy's inverse unscaled, like its default forward transform;
    # one axis takes numpy's 1-d entry point (fftn's loop over axes costs more than a small
    # transform)
    if len(axes) == 1:
        values = (fft.fft(x, axis=axes[0]) if forward
                  else fft.ifft(x, axis=axes[0], norm="forward"))
    else:
        values = fft.fftn(x, axes=axes) if forward else fft.ifftn(x, axes=axes, norm="forward")
    store(out, _scaled(values, [a._shape[d] for d in axes], normalization))


def fft_r2c(out: Tensor, a: Tensor, dims: Sequence[int], normalization: int,
            onesided: bool) -> None:
    """Real-to-complex forward transform of ``a`` over ``dims``; with ``onesided`` only the
    first n // 2 + 1 frequencies along ``dims[-1]``."""
    if out.numel() == 0:
        return
    fft = _numpy_fft()
    axes = list(dims)
    x = np_view(a)
    if len(axes) == 1:
        values = fft.rfft(x, axis=axes[0]) if onesided else fft.fft(x, axis=axes[0])
    else:
        values = fft.rfftn(x, axes=axes) if onesided else fft.fftn(x, axes=axes)
    store(out, _scaled(values, [a._shape[d] for d in axes], normalization))


def fft_c2r(out: Tensor, a: Tensor, dims: Sequence[int], normalization: int) -> None:
    """Inverse transform of the onesided Hermitian spectrum ``a`` over ``dims`` into the real
    ``out`` (whose sizes along ``dims`` are the signal's)."""
    if out.numel() == 0:
        return
    fft = _numpy_fft()
    axes = list(dims)
    signal = [out._shape[d] for d in axes]
    if len(axes) == 1:
        values = fft.irfft(np_view(a), n=signal[0], axis=axes[0], norm="forward")
    else:
        values = fft.irfftn(np_view(a), s=signal, axes=axes, norm="forward")
    store(out, _scaled(values, signal, normalization))


KERNELS: dict[str, Callable[..., None]] = {
    "fft_c2c": fft_c2c, "fft_r2c": fft_r2c, "fft_c2r": fft_c2r,
}
