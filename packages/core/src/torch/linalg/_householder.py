"""Householder reflectors: ``torch.geqrf`` (LAPACK's compact QR), and the products of the
reflectors it returns, ``linalg.householder_product`` (LAPACK's orgqr) and ``torch.ormqr``.

``geqrf`` factors a host copy with numpy's LAPACK (``qr(mode="raw")`` is geqrf itself) and, as
in PyTorch, has no derivative (its results require grad; their backward raises). The products
are composites of differentiable ops: reflector ``i`` is ``H_i = I - tau_i v_i v_i^H`` with
``v_i`` column ``i`` of the strictly lower triangle of ``input`` plus a unit diagonal, and
``Q = H_0 H_1 ... H_{k-1}``.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor
from torch._aten.no_data import column_major_strides, has_no_data
from torch._aten.reductions import _structseq

__all__ = ["geqrf", "householder_product", "ormqr"]

_GeqrfResult = _structseq("geqrf", ("a", "tau"))

# c10's names of scalar types, as PyTorch's dtype-mismatch messages print them
_SCALAR_NAMES = {torch.float32: "Float", torch.float64: "Double", torch.complex64: "ComplexFloat",
                 torch.complex128: "ComplexDouble", torch.float16: "Half",
                 torch.bfloat16: "BFloat16", torch.int64: "Long", torch.int32: "Int"}


def _scalar_name(dt: torch.dtype) -> str:
    return _SCALAR_NAMES.get(dt, str(dt).removeprefix("torch."))


def geqrf(input: Tensor, *, out: Any = None) -> Any:
    """The QR factorisation of (*, m, n) matrices in LAPACK's compact form ``(a, tau)``: R on
    and above the diagonal of ``a``, the Householder vectors below it, their scales in ``tau``
    (*, min(m, n)). ``a`` is laid out column-major, as LAPACK writes it."""
    import numpy as np

    if input.dim() < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    if not (input.dtype.is_floating_point or input.dtype.is_complex) or input.dtype in (
            torch.float16, torch.bfloat16):
        raise NotImplementedError(f"\"geqrf_cpu\" not implemented for "
                                  f"'{_scalar_name(input.dtype)}'")
    m, n = input.shape[-2:]
    batch = tuple(input.shape[:-2])
    if has_no_data(input):
        if input.device.type == "meta":  # as PyTorch: geqrf has no meta kernel
            raise NotImplementedError("aten::geqrf: attempted to run this operator with Meta "
                                      "tensors, but there was no fake impl or Meta kernel "
                                      "registered.")
        shape = (*batch, m, n)
        return _GeqrfResult((input.new_empty_strided(shape, column_major_strides(shape)),
                             input.new_empty((*batch, min(m, n)))))
    host = input.detach().cpu().numpy()
    if host.size == 0:
        h = np.zeros((*batch, n, m), dtype=host.dtype)
        tau = np.zeros((*batch, min(m, n)), dtype=host.dtype)
    else:
        flat = host.reshape(-1, m, n)
        parts = [np.linalg.qr(matrix, mode="raw") for matrix in flat]
        h = np.stack([p[0] for p in parts]).reshape(*batch, n, m)
        tau = np.stack([p[1] for p in parts]).reshape(*batch, min(m, n))
    # numpy returns the transpose of LAPACK's column-major matrix: transposing it back gives
    # PyTorch's column-major strides
    a = torch.from_numpy(np.ascontiguousarray(h)).transpose(-2, -1).to(input.device)
    tau_t = torch.from_numpy(np.ascontiguousarray(tau)).to(input.device)
    if input.requires_grad and torch.is_grad_enabled():
        a, tau_t = _NoDerivative.apply(input, a, tau_t)
    result = _GeqrfResult((a, tau_t))
    if out is not None:
        for dst, src in zip(out, result, strict=True):
            dst.resize_(src.shape).copy_(src)
        return _GeqrfResult(tuple(out))
    return result


class _NoDerivative(torch.autograd.Function):
    """geqrf's results in the graph of its input, with PyTorch's backward: there is no
    derivative, and asking for one raises NotImplementedError."""

    @staticmethod
    def forward(ctx: Any, input: Tensor, a: Tensor, tau: Tensor) -> tuple[Tensor, Tensor]:
        return a, tau

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        raise NotImplementedError("the derivative for 'geqrf' is not implemented.")


def _check_reflectors(fn: str, input: Tensor, tau: Tensor) -> None:
    if input.dim() < 2:
        raise RuntimeError(f"{fn}: input must have at least 2 dimensions.")
    if tau.shape[:-1] != input.shape[:-2]:
        raise RuntimeError(f"{fn}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {list(tau.shape[:-1])}")
    if tau.dtype != input.dtype:
        raise RuntimeError(f"{fn}: tau dtype {_scalar_name(tau.dtype)} does not match input "
                           f"dtype {_scalar_name(input.dtype)}")


def _reflectors_applied(input: Tensor, tau: Tensor, target: Tensor,
                        adjoint: bool = False) -> Tensor:
    """``Q target`` (or, with ``adjoint``, ``Q^H target``) for ``Q = H_0 H_1 ... H_{k-1}``, the
    reflectors stored in ``input`` (*, m, n) and ``tau`` (*, k): (*, m, p) -> (*, m, p).
    ``Q^H = H_{k-1}^H ... H_0^H``, and ``H_i^H`` is ``H_i`` with the conjugate scale."""
    m, n = input.shape[-2:]
    # v_i is column i of the strict lower triangle with a unit diagonal  # (*, m, n)
    vectors = input.tril(-1) + torch.eye(m, n, dtype=input.dtype, device=input.device)
    k = tau.shape[-1]
    for i in (range(k) if adjoint else range(k - 1, -1, -1)):
        v = vectors[..., :, i:i + 1]  # (*, m, 1)
        scale = tau[..., i, None, None]  # (*, 1, 1)
        if adjoint:
            scale = scale.conj()
        target = target - scale * v @ (v.mH @ target)
    return target


def _column_major(t: Tensor) -> Tensor:
    """``t`` with column-major matrices, as LAPACK's orgqr/ormqr write them (PyTorch's
    strides)."""
    return t.mT.contiguous().mT


def householder_product(input: Tensor, tau: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The first ``n`` columns of ``H_0 ... H_{k-1}`` for the Householder vectors in the
    columns of ``input`` (*, m, n) (m >= n) and their scales ``tau`` (*, k) (k <= n): the Q of
    :func:`geqrf`'s ``(a, tau)``. Differentiable in both."""
    fn = "torch.linalg.householder_product"
    _check_reflectors(fn, input, tau)
    m, n = input.shape[-2:]
    if m < n:
        raise RuntimeError(f"{fn}: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    if n < tau.shape[-1]:
        raise RuntimeError(f"{fn}: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    eye = torch.eye(m, n, dtype=input.dtype, device=input.device).expand(*input.shape)
    result = _column_major(_reflectors_applied(input, tau, eye))
    if out is not None:
        return out.resize_(result.shape).copy_(result)
    return result


def ormqr(input: Tensor, tau: Tensor, other: Tensor, left: bool = True, transpose: bool = False,
          *, out: Tensor | None = None) -> Tensor:
    """``op(Q) @ other`` (``left``) or ``other @ op(Q)`` for the full (m, m) Q of
    :func:`geqrf`'s ``(input, tau)``, ``op`` the conjugate transpose when ``transpose``.
    Differentiable in all three tensors."""
    fn = "torch.ormqr"
    _check_reflectors(fn, input, tau)
    m = input.shape[-2]
    if left and other.shape[-2] != m:
        raise RuntimeError(f"{fn}: other.shape[-2] must be equal to input.shape[-2]")
    if not left and other.shape[-1] != m:
        raise RuntimeError(f"{fn}: other.shape[-1] must be equal to input.shape[-2]")
    side = -2 if left else -1
    if tau.shape[-1] != min(other.shape[side], input.shape[-1]):
        raise RuntimeError(f"{fn}: tau.shape[-1] must be equal to min(other.shape[{side}], "
                           "input.shape[-1])")
    if other.dtype != input.dtype:
        raise RuntimeError(f"{fn}: Expected input and other to have the same dtype, but "
                           f"input has dtype{_scalar_name(input.dtype)} and other has dtype "
                           f"{_scalar_name(other.dtype)}")
    # other Q = (Q^H other^H)^H and other Q^H = (Q other^H)^H
    if left:
        result = _reflectors_applied(input, tau, other, adjoint=transpose)
    else:
        result = _reflectors_applied(input, tau, other.mH, adjoint=not transpose).mH
    result = _column_major(result)
    if out is not None:
        return out.resize_(result.shape).copy_(result)
    return result

