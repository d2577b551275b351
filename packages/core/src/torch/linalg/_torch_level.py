"""The ``torch.*`` (and Tensor method) forms of linear algebra that PyTorch keeps beside
``torch.linalg``: ``matrix_exp``, ``geqrf``, ``ormqr``, the deprecated ``lu``,
``nuclear_norm`` and ``frobenius_norm``. Each is the ``torch.linalg`` function it stands for,
under PyTorch's top-level signature."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from torch import Tensor
from torch._aten.reductions import _structseq

from . import _householder
from ._composites import matrix_exp as _matrix_exp

__all__ = ["frobenius_norm", "geqrf", "lu", "matrix_exp", "nuclear_norm", "ormqr"]

_LuWithInfo = _structseq("_lu_with_info", ("LU", "pivots", "info"))

geqrf = _householder.geqrf
ormqr = _householder.ormqr


def matrix_exp(input: Tensor) -> Tensor:
    """``torch.matrix_exp``: :func:`torch.linalg.matrix_exp` (differentiable)."""
    return _matrix_exp(input)


def lu(A: Tensor, pivot: bool = True, get_infos: bool = False, out: Any = None) -> Any:
    """``torch.lu`` (deprecated in PyTorch for :func:`torch.linalg.lu_factor_ex`, whose result
    it is): ``(LU, pivots)``, or ``(LU, pivots, infos)`` with ``get_infos``."""
    import torch.linalg as linalg

    warnings.warn("torch.lu is deprecated in favor of torch.linalg.lu_factor / "
                  "torch.linalg.lu_factor_ex and will be removed in a future PyTorch release.",
                  UserWarning, stacklevel=2)
    LU, pivots, info = linalg.lu_factor_ex(A, pivot=pivot)
    result = _LuWithInfo((LU, pivots, info)) if get_infos else (LU, pivots)
    if out is not None:
        for dst, src in zip(out, result, strict=False):
            dst.resize_(src.shape).copy_(src)
        return out
    return result


def nuclear_norm(input: Tensor, dim: Sequence[int] | bool | None = None,
                 keepdim: bool = False, *, out: Tensor | None = None) -> Tensor:
    """``torch.nuclear_norm``: the sum of the singular values over ``dim`` (the last two dims
    when not given): ``linalg.matrix_norm(input, "nuc", dim, keepdim)``, with PyTorch's
    deprecation warning. ``nuclear_norm(input, keepdim)`` is the form without ``dim``."""
    import torch.linalg as linalg

    if isinstance(dim, bool):  # nuclear_norm(input, keepdim): ATen's overload without dim
        dim, keepdim = None, dim
    warnings.warn("at::nuclear_norm is deprecated and it is just left for JIT compatibility. "
                  "It will be removed in a future PyTorch release. Please use "
                  "`linalg.matrix_norm(A, 'nuc', dim, keepdim)` instead", UserWarning,
                  stacklevel=2)
    dims = (-2, -1) if dim is None else tuple(dim)
    return linalg.matrix_norm(input, "nuc", dims, keepdim, out=out)


def frobenius_norm(input: Tensor, dim: Sequence[int] | int, keepdim: bool = False, *,
                   out: Tensor | None = None) -> Tensor:
    """``torch.frobenius_norm``: the 2-norm of the elements over ``dim`` (one or two dims):
    ``linalg.vector_norm(input, 2, dim, keepdim)``, with PyTorch's deprecation warning."""
    import torch.linalg as linalg

    warnings.warn("at::frobenius_norm is deprecated and it is just left for JIT "
                  "compatibility. It will be removed in a future PyTorch release. Please use "
                  "`linalg.vector_norm(A, 2., dim, keepdim)` instead", UserWarning,
                  stacklevel=2)
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dims) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dims)} dimensions "
                           "instead.")
    return linalg.vector_norm(input, 2, dims, keepdim, out=out)


METHODS: dict[str, Any] = {
    "matrix_exp": matrix_exp,
    "geqrf": geqrf,
    "ormqr": ormqr,
    "lu": lu,
}
