"""Derivative formulas: complex numbers as pairs of reals (view_as_real, view_as_complex) and
the conjugate (conj_physical).

A real view's gradient is the same pairs read back as complex numbers, and the other way round;
the conjugate is its own adjoint (PyTorch's convention for complex gradients: the gradient of
``conj(z)`` is ``conj(grad)``).
"""

from __future__ import annotations

from typing import Any

from ..._aten import complex_views as _cv
from . import derivative


@derivative("aten::view_as_real")
def _view_as_real(ctx: Any, grad: Any) -> tuple[Any, ...]:
    return (_cv.view_as_complex(grad.contiguous()),)


@derivative("aten::view_as_complex")
def _view_as_complex(ctx: Any, grad: Any) -> tuple[Any, ...]:
    return (_cv.view_as_real(grad),)


@derivative("aten::conj_physical")
def _conj_physical(ctx: Any, grad: Any) -> tuple[Any, ...]:
    return (_cv.conj_physical(grad),)
