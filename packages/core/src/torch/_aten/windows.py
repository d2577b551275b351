"""Window functions for spectral analysis: ``hann_window``, ``hamming_window``,
``blackman_window``, ``bartlett_window`` and ``kaiser_window``.

Each is an aten operator with PyTorch's schemas (the plain form and the ``.periodic`` overload
taking the flag), a composite of ``arange`` and elementwise ops computed in the requested
dtype, as PyTorch computes them. A periodic window of length L is the symmetric window of
length L + 1 without its last point (what a DFT of length L wants); lengths 0 and 1 give an
empty window and ``[1.]``.
"""

from __future__ import annotations

import math
from typing import Any

from .._core import config as _config, dispatch as _dispatch, dtype as _dtype
from .._core.alloc import check_dtype, device_of, finish_factory
from .._core.tensor import Tensor
from . import creation as _creation, elementwise as _ew, factories as _fac

__all__ = ["bartlett_window", "blackman_window", "hamming_window", "hann_window",
           "kaiser_window"]

_OPTIONS = ("*, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
            "bool? pin_memory=None")


def _points(name: str, length: int, periodic: bool, dtype: Any, device: Any
            ) -> tuple[Tensor | None, int, _dtype.dtype, Any]:
    """``arange(L)`` in the window's dtype and the length L of the symmetric window it
    computes (one more than asked for a periodic one), or ``None`` for lengths 0 and 1."""
    dt = check_dtype(dtype) or _config.get_default_dtype()
    if not dt.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dt}")
    if length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={length}")
    dev = device_of(device)
    if length <= 1:
        return None, length, dt, dev
    span = length + 1 if periodic else length
    return _creation.arange(span, dtype=dt, device=dev), span, dt, dev


def _finish(window: Tensor, periodic: bool) -> Tensor:
    return window.narrow(0, 0, window.shape[0] - 1) if periodic else window


def _trivial(length: int, dt: _dtype.dtype, dev: Any) -> Tensor:
    return _fac.ones((length,), dtype=dt, device=dev)


def _cosine_sum(name: str, length: int, periodic: bool, coefficients: tuple[float, ...],
                dtype: Any, device: Any) -> Tensor:
    """``sum_k (-1)^k a_k cos(2 pi k n / (L - 1))``: hann, hamming and blackman."""
    n, span, dt, dev = _points(name, length, periodic, dtype, device)
    if n is None:
        return _trivial(length, dt, dev)
    phase = n * (2 * math.pi / (span - 1))
    window = _fac.full((span,), coefficients[0], dtype=dt, device=dev)
    for k, a in enumerate(coefficients[1:], 1):
        window = window + ((-1) ** k * a) * _ew.FUNCTIONS["cos"](phase * k)
    return _finish(window, periodic)


def _hann_kernel(window_length: int, periodic: bool = True, *, dtype: Any = None,
                 layout: Any = None, device: Any = None, pin_memory: Any = None) -> Tensor:
    return _cosine_sum("hann_window", window_length, periodic, (0.5, 0.5), dtype, device)


def _hamming_kernel(window_length: int, periodic: bool = True, alpha: float = 0.54,
                    beta: float = 0.46, *, dtype: Any = None, layout: Any = None,
                    device: Any = None, pin_memory: Any = None) -> Tensor:
    return _cosine_sum("hamming_window", window_length, periodic, (alpha, beta), dtype, device)


def _blackman_kernel(window_length: int, periodic: bool = True, *, dtype: Any = None,
                     layout: Any = None, device: Any = None, pin_memory: Any = None) -> Tensor:
    return _cosine_sum("blackman_window", window_length, periodic, (0.42, 0.5, 0.08), dtype,
                       device)


def _bartlett_kernel(window_length: int, periodic: bool = True, *, dtype: Any = None,
                     layout: Any = None, device: Any = None, pin_memory: Any = None) -> Tensor:
    n, span, dt, dev = _points("bartlett_window", window_length, periodic, dtype, device)
    if n is None:
        return _trivial(window_length, dt, dev)
    ramp = n * (2.0 / (span - 1))  # 0 .. 2: up to 1 in the middle, then back down
    return _finish(1 - _ew.FUNCTIONS["abs"](ramp - 1), periodic)


def _kaiser_kernel(window_length: int, periodic: bool = True, beta: float = 12.0, *,
                   dtype: Any = None, layout: Any = None, device: Any = None,
                   pin_memory: Any = None) -> Tensor:
    n, span, dt, dev = _points("kaiser_window", window_length, periodic, dtype, device)
    if n is None:
        return _trivial(window_length, dt, dev)
    half = (span - 1) / 2
    ratio = (n - half) / half  # -1 .. 1
    # clamped: rounding can take 1 - ratio**2 a hair below zero at the ends
    arg = beta * _ew.FUNCTIONS["sqrt"]((1 - ratio * ratio).clamp(min=0))
    peak = _fac.full((), beta, dtype=dt, device=dev)
    # Tensor.i0 is the special-functions composite (torch._fused.special), bound as a method
    # when the op surface loads: reached at run time, never imported from this layer
    return _finish(arg.i0() / peak.i0(), periodic)


def _define() -> dict[str, _dispatch.Operator]:
    rows: dict[str, tuple[Any, ...]] = {}
    for name, kernel, extra in (
            ("hann_window", _hann_kernel, ""), ("blackman_window", _blackman_kernel, ""),
            ("bartlett_window", _bartlett_kernel, ""),
            ("hamming_window", _hamming_kernel, ""),
            ("kaiser_window", _kaiser_kernel, ", float beta")):
        rows[name] = (f"{name}(int window_length, {_OPTIONS}) -> Tensor", kernel,
                      _dispatch.COMPOSITE_IMPLICIT)
        rows[f"{name}.periodic"] = (f"{name}.periodic(int window_length, bool periodic, "
                                    f"{_OPTIONS}) -> Tensor", kernel,
                                    _dispatch.COMPOSITE_IMPLICIT)
        if extra:
            rows[f"{name}.beta"] = (f"{name}.beta(int window_length, bool periodic{extra}, "
                                    f"{_OPTIONS}) -> Tensor", kernel,
                                    _dispatch.COMPOSITE_IMPLICIT)
    for overload in ("alpha", "alpha_beta"):
        params = ", float alpha" + (", float beta" if overload == "alpha_beta" else "")
        rows[f"hamming_window.periodic_{overload}"] = (
            f"hamming_window.periodic_{overload}(int window_length, bool periodic{params}, "
            f"{_OPTIONS}) -> Tensor", _hamming_kernel, _dispatch.COMPOSITE_IMPLICIT)
    return _dispatch.define_aten(rows)


ATEN = _define()


def _check_length(name: str, window_length: Any) -> int:
    if not isinstance(window_length, int) or isinstance(window_length, bool):
        raise TypeError(f"{name}(): argument 'window_length' (position 1) must be int, not "
                        f"{type(window_length).__name__}")
    return window_length


def hann_window(window_length: int, periodic: bool = True, *, dtype: Any = None,
                layout: Any = None, device: Any = None, requires_grad: bool = False,
                pin_memory: bool = False) -> Tensor:
    """The Hann window ``0.5 - 0.5 cos(2 pi n / (L - 1))`` (periodic: of length L + 1 without
    its last point)."""
    n = _check_length("hann_window", window_length)
    t = ATEN["hann_window.periodic"](n, periodic, dtype=dtype, device=device)
    return finish_factory(t, requires_grad)


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54,
                   beta: float = 0.46, *, dtype: Any = None, layout: Any = None,
                   device: Any = None, requires_grad: bool = False,
                   pin_memory: bool = False) -> Tensor:
    """The Hamming window ``alpha - beta cos(2 pi n / (L - 1))``."""
    n = _check_length("hamming_window", window_length)
    t = ATEN["hamming_window.periodic_alpha_beta"](n, periodic, alpha, beta, dtype=dtype,
                                                   device=device)
    return finish_factory(t, requires_grad)


def blackman_window(window_length: int, periodic: bool = True, *, dtype: Any = None,
                    layout: Any = None, device: Any = None, requires_grad: bool = False,
                    pin_memory: bool = False) -> Tensor:
    """The Blackman window ``0.42 - 0.5 cos(2 pi n / (L - 1)) + 0.08 cos(4 pi n / (L - 1))``."""
    n = _check_length("blackman_window", window_length)
    t = ATEN["blackman_window.periodic"](n, periodic, dtype=dtype, device=device)
    return finish_factory(t, requires_grad)


def bartlett_window(window_length: int, periodic: bool = True, *, dtype: Any = None,
                    layout: Any = None, device: Any = None, requires_grad: bool = False,
                    pin_memory: bool = False) -> Tensor:
    """The Bartlett (triangular) window ``1 - |2 n / (L - 1) - 1|``."""
    n = _check_length("bartlett_window", window_length)
    t = ATEN["bartlett_window.periodic"](n, periodic, dtype=dtype, device=device)
    return finish_factory(t, requires_grad)


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *,
                  dtype: Any = None, layout: Any = None, device: Any = None,
                  requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """The Kaiser window ``I0(beta sqrt(1 - (2 n / (L - 1) - 1)^2)) / I0(beta)``."""
    n = _check_length("kaiser_window", window_length)
    t = ATEN["kaiser_window.beta"](n, periodic, float(beta), dtype=dtype, device=device)
    return finish_factory(t, requires_grad)
