"""Derivative formulas: the discrete Fourier transforms (``torch._aten.spectral``).

Each transform is linear, so its gradient is its adjoint applied to the output's gradient
(PyTorch's convention for complex gradients: the conjugate Wirtinger derivative, which for a
linear map is the conjugate-transposed map):

- the adjoint of a c2c transform is the transform in the other direction with the same
  scaling (the DFT matrix's conjugate transpose is the unscaled inverse DFT);
- a onesided r2c transform is a full transform followed by dropping the negative
  frequencies: its adjoint zero-fills them, runs the inverse c2c transform, and keeps the real
  part (the input was real);
- a c2r transform reads each frequency strictly between zero and n / 2 twice (itself and its
  conjugate mirror image) and the others once: its adjoint is the onesided r2c transform of
  the gradient with those frequencies doubled.

Every rule is written in the same three operators, so higher derivatives follow.
"""

from __future__ import annotations

from typing import Any

from ..._aten import complex_views as _cv, shape as _shape, spectral as _spectral
from ..._core.tensor import wrap_dim
from . import derivative


@derivative("aten::_fft_c2c", args=False, result=False)
def _fft_c2c(ctx: Any, grad: Any) -> tuple[Any, ...]:
    dim, normalization, forward = ctx.args[1:4]
    return (_spectral.fft_c2c(grad, dim, normalization, not forward),)


@derivative("aten::_fft_r2c", result=False)
def _fft_r2c(ctx: Any, grad: Any) -> tuple[Any, ...]:
    x, dim, normalization, onesided = ctx.args[:4]
    dims = [wrap_dim(d, x.ndim) for d in dim]
    if onesided:  # the negative frequencies the forward dropped contribute nothing
        grad = _spectral.resize_dim(grad, dims[-1], x.shape[dims[-1]])
    return (_cv.real(_spectral.fft_c2c(grad, dims, normalization, False)),)


@derivative("aten::_fft_c2r", result=False)
def _fft_c2r(ctx: Any, grad: Any) -> tuple[Any, ...]:
    x, dim, normalization, last_dim_size = ctx.args[:4]
    dims = [wrap_dim(d, x.ndim) for d in dim]
    last = dims[-1]
    result = _spectral.fft_r2c(grad, dims, normalization, True)  # n // 2 + 1 frequencies
    # frequencies 1 .. ceil(n / 2) - 1 stand for themselves and their mirror image
    doubled = last_dim_size - result.shape[last]
    if doubled > 0:
        parts = [result.narrow(last, 0, 1), result.narrow(last, 1, doubled) * 2,
                 result.narrow(last, 1 + doubled, result.shape[last] - 1 - doubled)]
        result = _shape.cat(parts, last)
    # the input may hold more (or fewer) entries than the n // 2 + 1 the transform read
    return (_spectral.resize_dim(result, last, x.shape[last]),)
