"""``torch.linalg.ldl_factor(_ex)`` and ``ldl_solve``: the Bunch-Kaufman factorisation
``P A P^T = L D L^T`` (``L D L^H`` for ``hermitian``) of symmetric matrices, in LAPACK's
compact form, and solves with it.

PyTorch calls LAPACK's ``sytrf``/``hetrf`` with the lower triangle; for the sizes where that
runs its unblocked algorithm (up to 64 columns) this is the same algorithm, step for step, on a
host copy: the same pivot choices, the same ``LD`` (``L`` below the diagonal, the 1x1 and 2x2
blocks of ``D`` on it and the subdiagonal) and the same 1-based ``pivots`` (``k`` for a 1x1
block after swapping rows/columns ``k`` and the current one; ``-p`` twice for a 2x2 block after
swapping ``p`` and the block's second row). The upper triangle of ``LD`` is zero and its
matrices are laid out column-major, as PyTorch returns them. Neither function has a
derivative, as in PyTorch.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import Tensor
from torch._aten.no_data import column_major_strides, has_no_data
from torch._aten.reductions import _structseq

__all__ = ["ldl_factor", "ldl_factor_ex", "ldl_solve"]

_LdlFactorEx = _structseq("linalg_ldl_factor_ex", ("LD", "pivots", "info"))
_LdlFactor = _structseq("linalg_ldl_factor", ("LD", "pivots"))

# Bunch and Kaufman's threshold: a 1x1 pivot unless the diagonal is this much smaller than
# the column's largest entry
_ALPHA = (1.0 + math.sqrt(17.0)) / 8.0
_SCALAR_NAMES = {torch.float16: "Half", torch.bfloat16: "BFloat16", torch.int64: "Long",
                 torch.int32: "Int", torch.int16: "Short", torch.int8: "Char",
                 torch.uint8: "Byte", torch.bool: "Bool"}


def _magnitude(x: Any) -> Any:
    """LAPACK's ``cabs1``: ``|re| + |im|`` (``|x|`` for real numbers)."""
    import numpy as np

    return np.abs(x.real) + np.abs(x.imag) if np.iscomplexobj(x) else np.abs(x)


def _factor_one(a: Any, hermitian: bool) -> tuple[Any, Any, int]:
    """LAPACK's unblocked lower ``sytf2``/``hetf2`` on one (n, n) numpy matrix, in place:
    returns ``(a, ipiv, info)``."""
    import numpy as np

    n = a.shape[0]
    ipiv = np.zeros(n, dtype=np.int32)
    info = 0
    herm = hermitian and np.iscomplexobj(a)
    conj = np.conj if herm else (lambda v: v)

    def diagonal_size(i: int) -> float:
        return abs(a[i, i].real) if herm else float(_magnitude(a[i, i]))

    k = 0
    while k < n:
        kstep = 1
        absakk = diagonal_size(k)
        if k < n - 1:
            imax = k + 1 + int(np.argmax(_magnitude(a[k + 1:, k])))
            colmax = float(_magnitude(a[imax, k]))
        else:
            imax, colmax = k, 0.0
        if max(absakk, colmax) == 0.0 or math.isnan(absakk):
            # a zero column: D has a zero (or NaN) pivot here, recorded in info
            info = info or k + 1
            kp = k
            if herm:
                a[k, k] = a[k, k].real
        else:
            if absakk >= _ALPHA * colmax:
                kp = k
            else:
                jmax = k + int(np.argmax(_magnitude(a[imax, k:imax])))
                rowmax = float(_magnitude(a[imax, jmax]))
                if imax < n - 1:
                    below = imax + 1 + int(np.argmax(_magnitude(a[imax + 1:, imax])))
                    rowmax = max(rowmax, float(_magnitude(a[below, imax])))
                if absakk >= _ALPHA * colmax * (colmax / rowmax):
                    kp = k
                elif diagonal_size(imax) >= _ALPHA * rowmax:
                    kp = imax
                else:
                    kp, kstep = imax, 2
            kk = k + kstep - 1
            if kp != kk:
                # swap rows and columns kk and kp of the trailing lower triangle
                a[kp + 1:, [kk, kp]] = a[kp + 1:, [kp, kk]]
                middle = a[kk + 1:kp, kk].copy()
                a[kk + 1:kp, kk] = conj(a[kp, kk + 1:kp])
                a[kp, kk + 1:kp] = conj(middle)
                if herm:
                    a[kp, kk] = np.conj(a[kp, kk])
                a[kk, kk], a[kp, kp] = a[kp, kp], a[kk, kk]
                if kstep == 2:
                    a[k + 1, k], a[kp, k] = a[kp, k], a[k + 1, k]
            if herm:
                a[k, k] = a[k, k].real
                if kstep == 2:
                    a[k + 1, k + 1] = a[k + 1, k + 1].real
            if kstep == 1:
                if k < n - 1:
                    scale = 1.0 / (a[k, k].real if herm else a[k, k])
                    column = a[k + 1:, k].copy()
                    update = scale * np.outer(column, conj(column))
                    a[k + 1:, k + 1:] -= np.tril(update)
                    a[k + 1:, k] = column * scale
                    if herm:
                        diag = np.arange(k + 1, n)
                        a[diag, diag] = a[diag, diag].real
            elif k < n - 2:
                _two_by_two_update(a, k, n, herm)
        if kstep == 1:
            ipiv[k] = kp + 1
        else:
            ipiv[k] = ipiv[k + 1] = -(kp + 1)
        k += kstep
    return a, ipiv, info


def _two_by_two_update(a: Any, k: int, n: int, herm: bool) -> None:
    """The rank-2 update of the trailing matrix after a 2x2 pivot at rows ``k, k + 1``; the
    two columns become L's."""
    import numpy as np

    if herm:
        size = abs(a[k + 1, k])
        d11 = a[k + 1, k + 1].real / size
        d22 = a[k, k].real / size
        d21 = a[k + 1, k] / size
        scale = 1.0 / (d11 * d22 - 1.0) / size
    else:
        d21 = a[k + 1, k]
        d11 = a[k + 1, k + 1] / d21
        d22 = a[k, k] / d21
        scale = (1.0 / (d11 * d22 - 1.0)) / d21
    for j in range(k + 2, n):
        if herm:
            wk = scale * (d11 * a[j, k] - d21 * a[j, k + 1])
            wkp1 = scale * (d22 * a[j, k + 1] - np.conj(d21) * a[j, k])
            a[j:, j] -= a[j:, k] * np.conj(wk) + a[j:, k + 1] * np.conj(wkp1)
            a[j, j] = a[j, j].real
        else:
            wk = scale * (d11 * a[j, k] - a[j, k + 1])
            wkp1 = scale * (d22 * a[j, k + 1] - a[j, k])
            a[j:, j] -= a[j:, k] * wk + a[j:, k + 1] * wkp1
        a[j, k], a[j, k + 1] = wk, wkp1


def _check_float(fn: str, t: Tensor, kernel: str) -> None:
    if t.dtype in (torch.float16, torch.bfloat16):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_SCALAR_NAMES[t.dtype]}'")
    if not (t.dtype.is_floating_point or t.dtype.is_complex):
        name = _SCALAR_NAMES.get(t.dtype, str(t.dtype))
        raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. Got "
                           f"{name}")


def _column_major(values: Any, device: Any) -> Tensor:
    """A tensor of the numpy matrices ``values`` (*, m, n) with column-major matrices."""
    source = torch.from_numpy(values)
    shape = tuple(source.shape)
    # (strides written out: the same as the meta and fake results', size-1 dims included)
    out = torch.empty_strided(shape, column_major_strides(shape), dtype=source.dtype,
                              device=device)
    return out.copy_(source)


def ldl_factor_ex(A: Tensor, *, hermitian: bool = False, check_errors: bool = False,
                  out: Any = None) -> Any:
    """``(LD, pivots, info)``: the compact LDL factorisation of the symmetric (``hermitian``:
    Hermitian) matrices ``A`` (*, n, n), read from their lower triangles. ``info`` is 0, or the
    1-based index of D's first zero pivot."""
    import numpy as np

    fn = "torch.linalg.ldl_factor_ex"
    if A.dim() < 2:
        raise RuntimeError(f"{fn}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{fn}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    _check_float(fn, A, "ldl_factor_kernel_cpu")
    n = A.shape[-1]
    batch = tuple(A.shape[:-2])
    if has_no_data(A):  # meta or fake: the layouts only
        shape = (*batch, n, n)
        return _LdlFactorEx((A.new_empty_strided(shape, column_major_strides(shape)),
                             A.new_empty((*batch, n), dtype=torch.int32),
                             A.new_empty(batch, dtype=torch.int32)))
    host = np.array(A.detach().cpu().numpy(), copy=True).reshape(-1, n, n)
    factors, pivots, infos = [], [], []
    for matrix in host:
        ld, ipiv, info = _factor_one(np.tril(matrix), hermitian)
        factors.append(np.tril(ld))
        pivots.append(ipiv)
        infos.append(info)
    ld = np.stack(factors).reshape(*batch, n, n) if factors else host.reshape(*batch, n, n)
    piv = (np.stack(pivots) if pivots else np.zeros((0, n), np.int32)).reshape(*batch, n)
    info = np.array(infos, dtype=np.int32).reshape(batch)
    if check_errors and info.any():
        raise torch.linalg.LinAlgError(
            f"{fn}: The factorization could not be completed because the input is singular "
            f"(D has a zero pivot at position {int(info.flat[np.flatnonzero(info)[0]])}).")
    result = _LdlFactorEx((_column_major(ld, A.device),
                           torch.from_numpy(piv).to(A.device),
                           torch.from_numpy(info).to(A.device)))
    if out is not None:
        for dst, src in zip(out, result, strict=True):
            dst.resize_(src.shape).copy_(src)
        return _LdlFactorEx(tuple(out))
    return result


def ldl_factor(A: Tensor, *, hermitian: bool = False, out: Any = None) -> Any:
    """``(LD, pivots)`` of :func:`ldl_factor_ex`; a singular ``D`` raises ``LinAlgError``
    (PyTorch reports an internal error there)."""
    LD, pivots, info = ldl_factor_ex(A, hermitian=hermitian)
    if not has_no_data(info) and bool(info.ne(0).any()):
        raise torch.linalg.LinAlgError(
            "torch.linalg.ldl_factor: The factorization could not be completed because the "
            f"input is singular (D has a zero pivot at position {int(info.max())}).")
    result = _LdlFactor((LD, pivots))
    if out is not None:
        for dst, src in zip(out, result, strict=True):
            dst.resize_(src.shape).copy_(src)
        return _LdlFactor(tuple(out))
    return result


def _solve_one(ld: Any, ipiv: Any, b: Any, hermitian: bool) -> Any:
    """LAPACK's lower ``sytrs``/``hetrs``: ``A X = B`` from one factorisation, in place on ``b``
    (n, k)."""
    import numpy as np

    n = ld.shape[0]
    herm = hermitian and np.iscomplexobj(ld)
    conj = np.conj if herm else (lambda v: v)
    k = 0
    while k < n:  # L D Y = P B, forwards
        if ipiv[k] > 0:
            kp = ipiv[k] - 1
            b[[k, kp]] = b[[kp, k]]
            b[k + 1:] -= np.outer(ld[k + 1:, k], b[k])
            b[k] /= ld[k, k].real if herm else ld[k, k]
            k += 1
        else:
            kp = -ipiv[k] - 1
            b[[k + 1, kp]] = b[[kp, k + 1]]
            b[k + 2:] -= np.outer(ld[k + 2:, k], b[k]) + np.outer(ld[k + 2:, k + 1], b[k + 1])
            off = ld[k + 1, k]
            akm1 = ld[k, k] / conj(off)
            ak = ld[k + 1, k + 1] / off
            denom = akm1 * ak - 1.0
            bkm1, bk = b[k] / conj(off), b[k + 1] / off
            b[k], b[k + 1] = (ak * bkm1 - bk) / denom, (akm1 * bk - bkm1) / denom
            k += 2
    k = n - 1
    while k >= 0:  # L^T X = Y (L^H for hermitian), backwards
        if ipiv[k] > 0:
            b[k] -= conj(ld[k + 1:, k]) @ b[k + 1:]
            kp = ipiv[k] - 1
            b[[k, kp]] = b[[kp, k]]
            k -= 1
        else:
            b[k] -= conj(ld[k + 1:, k]) @ b[k + 1:]
            b[k - 1] -= conj(ld[k + 1:, k - 1]) @ b[k + 1:]
            kp = -ipiv[k] - 1
            b[[k, kp]] = b[[kp, k]]
            k -= 2
    return b


def ldl_solve(LD: Tensor, pivots: Tensor, B: Tensor, *, hermitian: bool = False,
              out: Tensor | None = None) -> Tensor:
    """The solution ``X`` of ``A X = B`` from ``A``'s :func:`ldl_factor` ``(LD, pivots)``; ``B``
    is (*, n, k), batch dims broadcasting."""
    import numpy as np

    fn = "torch.linalg.ldl_solve"
    if B.dim() < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of [-{B.dim()}, "
                         f"{B.dim() - 1}], but got -2)")
    if LD.dim() < 2 or LD.shape[-1] != LD.shape[-2]:
        raise RuntimeError(f"{fn}: LD must be batches of square matrices")
    if pivots.dtype != torch.int32:
        raise RuntimeError(f"{fn}: Expected LU_pivots to be integer tensor, but got {pivots.dtype}")
    if LD.dtype != B.dtype:
        raise RuntimeError(f"{fn}: Expected LD and B to have the same dtype, but found LD of "
                           f"type {LD.dtype} and B of type {B.dtype} instead")
    n = LD.shape[-1]
    if B.shape[-2] != n:
        raise RuntimeError(f"{fn}: Incompatible shapes of A and B for the equation AX = B "
                           f"({n}x{n} and {B.shape[-2]}x{B.shape[-1]})")
    batch = torch.broadcast_shapes(LD.shape[:-2], pivots.shape[:-1], B.shape[:-2])
    if has_no_data(LD) or has_no_data(B):  # meta or fake: the layout only
        shape = (*batch, n, B.shape[-1])
        return B.new_empty_strided(shape, column_major_strides(shape))
    ld = np.broadcast_to(LD.detach().cpu().numpy(), (*batch, n, n)).reshape(-1, n, n)
    piv = np.broadcast_to(pivots.cpu().numpy(), (*batch, n)).reshape(-1, n)
    rhs = np.array(np.broadcast_to(B.detach().cpu().numpy(), (*batch, *B.shape[-2:])),
                   copy=True).reshape(-1, n, B.shape[-1])
    for i in range(rhs.shape[0]):
        _solve_one(ld[i], piv[i], rhs[i], hermitian)
    result = _column_major(rhs.reshape(*batch, n, B.shape[-1]), B.device)
    if out is not None:
        return out.resize_(result.shape).copy_(result)
    return result
