"""``torch.signal.windows``: SciPy-style window functions (``sym=True`` gives the symmetric
window, ``sym=False`` the periodic one: the symmetric window one point longer, without its
last point).

Composites of public ops (``arange``, ``cos``, ``exp``, ``i0``...) computed in the requested
dtype; the argument checks and their messages are PyTorch's (``ValueError``/``TypeError``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import torch
from torch import Tensor

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]

_NUTTALL = (0.3635819, 0.4891775, 0.1365995, 0.0106411)


def _window(name: str, M: int, sym: bool, dtype: Any, layout: Any, device: Any,
            requires_grad: bool, values: Callable[[Tensor, int], Tensor]) -> Tensor:
    """The checks every window shares, then ``values(n, L)`` over ``n = arange(L)`` for the
    symmetric length L (one more than M for a periodic window), cut to M."""
    if dtype is None:
        dtype = torch.get_default_dtype()
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout not in (None, torch.strided):
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (torch.float32, torch.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    if M <= 1:
        window = torch.ones(M, dtype=dtype, device=device)
    else:
        length = M if sym else M + 1
        window = values(torch.arange(length, dtype=dtype, device=device), length)[:M]
    return window.requires_grad_(requires_grad) if requires_grad else window


def general_cosine(M: int, *, a: Iterable[float], sym: bool = True, dtype: Any = None,
                   layout: Any = torch.strided, device: Any = None,
                   requires_grad: bool = False) -> Tensor:
    """``sum_k (-1)^k a[k] cos(2 pi k n / (L - 1))``."""
    if not isinstance(a, (list, tuple)):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")

    def values(n: Tensor, length: int) -> Tensor:
        phase = n * (2 * math.pi / (length - 1))
        return sum((-1) ** k * c * torch.cos(phase * k) for k, c in enumerate(a))

    return _window("general_cosine", M, sym, dtype, layout, device, requires_grad, values)


def general_hamming(M: int, *, alpha: float = 0.54, sym: bool = True, dtype: Any = None,
                    layout: Any = torch.strided, device: Any = None,
                    requires_grad: bool = False) -> Tensor:
    """``alpha - (1 - alpha) cos(2 pi n / (L - 1))``."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def hamming(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = torch.strided,
            device: Any = None, requires_grad: bool = False) -> Tensor:
    """The Hamming window (``general_hamming`` with alpha 0.54)."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def hann(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = torch.strided,
         device: Any = None, requires_grad: bool = False) -> Tensor:
    """The Hann window (``general_hamming`` with alpha 0.5)."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = torch.strided,
             device: Any = None, requires_grad: bool = False) -> Tensor:
    """The Blackman window (``general_cosine`` with 0.42, 0.5, 0.08)."""
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def nuttall(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = torch.strided,
            device: Any = None, requires_grad: bool = False) -> Tensor:
    """Nuttall's minimum 4-term Blackman-Harris window."""
    return general_cosine(M, a=list(_NUTTALL), sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def bartlett(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = torch.strided,
             device: Any = None, requires_grad: bool = False) -> Tensor:
    """The triangular window ``1 - |2 n / (L - 1) - 1|``."""
    return _window("bartlett", M, sym, dtype, layout, device, requires_grad,
                   lambda n, length: 1 - torch.abs(n * (2.0 / (length - 1)) - 1))


def cosine(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = torch.strided,
           device: Any = None, requires_grad: bool = False) -> Tensor:
    """The sine window ``sin(pi (n + 0.5) / L)``."""
    return _window("cosine", M, sym, dtype, layout, device, requires_grad,
                   lambda n, length: torch.sin((n + 0.5) * (math.pi / length)))


def exponential(M: int, *, center: float | None = None, tau: float = 1.0, sym: bool = True,
                dtype: Any = None, layout: Any = torch.strided, device: Any = None,
                requires_grad: bool = False) -> Tensor:
    """The Poisson window ``exp(-|n - center| / tau)`` (centre: the middle by default)."""
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")

    def values(n: Tensor, length: int) -> Tensor:
        middle = (length - 1) / 2 if center is None else center
        return torch.exp(-torch.abs(n - middle) / tau)

    return _window("exponential", M, sym, dtype, layout, device, requires_grad, values)


def gaussian(M: int, *, std: float = 1.0, sym: bool = True, dtype: Any = None,
             layout: Any = torch.strided, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """``exp(-((n - (L - 1) / 2) / std)^2 / 2)``."""
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")

    def values(n: Tensor, length: int) -> Tensor:
        return torch.exp(-(((n - (length - 1) / 2) / std) ** 2) / 2)

    return _window("gaussian", M, sym, dtype, layout, device, requires_grad, values)


def kaiser(M: int, *, beta: float = 12.0, sym: bool = True, dtype: Any = None,
           layout: Any = torch.strided, device: Any = None,
           requires_grad: bool = False) -> Tensor:
    """``I0(beta sqrt(1 - (2 n / (L - 1) - 1)^2)) / I0(beta)``."""
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")

    def values(n: Tensor, length: int) -> Tensor:
        ratio = n * (2.0 / (length - 1)) - 1
        arg = beta * torch.sqrt((1 - ratio * ratio).clamp(min=0))
        return torch.i0(arg) / torch.i0(torch.tensor(beta, dtype=n.dtype, device=n.device))

    return _window("kaiser", M, sym, dtype, layout, device, requires_grad, values)
