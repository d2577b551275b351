"""Derivative formulas: complex numbers as pairs of reals (view_as_real, view_as_complex), the
conjugate (conj_physical), and complex tensors made from real parts (complex, polar).

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


@derivative("aten::complex", args=False, result=False)
def _complex(ctx: Any, grad: Any) -> tuple[Any, ...]:
    # real + i imag: each real part moves its own component
    return (_cv.real(grad) if ctx.needs_input_grad[0] else None,
            _cv.imag(grad) if ctx.needs_input_grad[1] else None)


@derivative("aten::polar", args=False)
def _polar(ctx: Any, grad: Any) -> tuple[Any, ...]:
    # s = r exp(i theta): ds/dr = exp(i theta), ds/dtheta = i s; a real input's gradient is
    # Re(conj(ds/dx) grad). The phasor is taken as sgn(s), zero where r = 0, as PyTorch does.
    s = ctx.result
    need_abs, need_angle = ctx.needs_input_grad[:2]
    return (_cv.real(grad * _cv.conj(s.sgn())) if need_abs else None,
            _cv.real(grad * _cv.conj(s * 1j)) if need_angle else None)
