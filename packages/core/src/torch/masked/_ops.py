"""``torch.masked``'s functions: reductions and normalisations that read only the elements
where a boolean ``mask`` is True.

PyTorch's semantics: a masked-out element counts as the operation's identity (0 for ``sum``,
``-inf`` for ``amax``...), so an output whose reduction saw no element is that identity; the
operations without one (``mean``, ``var``, ``median``) give nan there. ``mask`` broadcasts to
the input (any dtype is read as bool); ``mask=None`` keeps every element. A
:class:`~torch.masked.MaskedTensor` input brings its own mask, and the result is a plain
tensor, as in PyTorch. Each function is one row of a table: its identity and the plain
operation it runs on the input with the identity written into the masked-out places.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import Tensor

__all__ = ["amax", "amin", "argmax", "argmin", "cumprod", "cumsum", "log_softmax",
           "logaddexp", "logsumexp", "mean", "median", "norm", "normalize", "prod", "softmax",
           "softmin", "std", "sum", "var"]

DimArg = int | Sequence[int] | None


def _data_and_mask(input: Any, mask: Any) -> tuple[Tensor, Tensor | None]:
    """The values and the mask (broadcast to the values, bool) a function reads; None: every
    element counts."""
    from .maskedtensor.core import MaskedTensor

    if isinstance(input, MaskedTensor):
        data, own = input.get_data(), input.get_mask()
        mask = own if mask is None else own & _broadcast_mask(data, mask)
        return data, mask
    if not isinstance(input, Tensor):
        raise TypeError(f"torch.masked: expected a Tensor input, got {type(input).__name__}")
    return input, None if mask is None else _broadcast_mask(input, mask)


def _broadcast_mask(input: Tensor, mask: Any) -> Tensor:
    if not isinstance(mask, Tensor):
        mask = torch.as_tensor(mask, device=input.device)
    if mask.dim() > input.dim():
        raise IndexError("_input_mask expected broadcastable mask (got mask dimensionality "
                         "higher than of the input)")
    if mask.dtype is not torch.bool:
        mask = mask.to(torch.bool)
    return mask.expand(input.shape)


def _dims(input: Tensor, dim: DimArg) -> list[int]:
    """The reduced dimensions, wrapped: None and ``()`` reduce every one (PyTorch's reading)."""
    rank = input.dim()
    if dim is None:
        return list(range(rank))
    dims = [dim] if isinstance(dim, int) else list(dim)
    if not dims:
        return list(range(rank))
    bound = max(rank, 1)
    wrapped = []
    for d in dims:
        if not -bound <= d < bound:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-bound}, {bound - 1}], but got {d})")
        wrapped.append(d % bound)
    return wrapped


def _fill(data: Tensor, mask: Tensor | None, value: float | bool) -> Tensor:
    """``data`` with ``value`` in the masked-out places."""
    if mask is None:
        return data
    return torch.where(mask, data, torch.tensor(value, dtype=data.dtype, device=data.device))


def _lowest(dtype: torch.dtype) -> float | bool:
    if dtype is torch.bool:
        return False
    return -math.inf if dtype.is_floating_point or dtype.is_complex else torch.iinfo(dtype).min


def _highest(dtype: torch.dtype) -> float | bool:
    if dtype is torch.bool:
        return True
    return math.inf if dtype.is_floating_point or dtype.is_complex else torch.iinfo(dtype).max


def _reduce_all_or(dims: list[int], rank: int) -> list[int] | None:
    """The ``dim`` argument of a plain reduction: None when every dimension is reduced."""
    return None if len(dims) == rank else dims


def _reduction(name: str, what: str, identity: Callable[[torch.dtype], float | bool],
               reduce: Callable[[Tensor, list[int], bool], Tensor]) -> Callable[..., Tensor]:
    """A masked reduction over ``dim``: the identity in the masked-out places, then
    ``reduce(values, dims, keepdim)``."""

    def masked(input: Any, dim: DimArg = None, *, keepdim: bool = False,
               dtype: torch.dtype | None = None, mask: Any = None) -> Tensor:
        data, m = _data_and_mask(input, mask)
        if dtype is not None:
            data = data.to(dtype)
        return reduce(_fill(data, m, identity(data.dtype)), _dims(data, dim), keepdim)

    masked.__name__ = masked.__qualname__ = name
    masked.__doc__ = f"The {what} of the elements ``mask`` keeps, over ``dim``."
    return masked


def _prod(x: Tensor, dims: list[int], keepdim: bool) -> Tensor:
    # torch.prod takes one dimension: the reduced ones, innermost first
    for d in sorted(dims, reverse=True):
        x = torch.prod(x, d, keepdim=True)
    if not keepdim:
        x = x.reshape([n for i, n in enumerate(x.shape) if i not in dims])
    return x


sum = _reduction("sum", "sum", lambda dtype: False if dtype is torch.bool else 0,
                 lambda x, dims, keepdim: torch.sum(x, dims, keepdim=keepdim))
prod = _reduction("prod", "product", lambda dtype: True if dtype is torch.bool else 1, _prod)
amax = _reduction("amax", "maximum", _lowest,
                  lambda x, dims, keepdim: torch.amax(x, dims, keepdim=keepdim))
amin = _reduction("amin", "minimum", _highest,
                  lambda x, dims, keepdim: torch.amin(x, dims, keepdim=keepdim))
logsumexp = _reduction("logsumexp", "log of the summed exponentials", lambda dtype: -math.inf,
                       lambda x, dims, keepdim: torch.logsumexp(x, dims, keepdim=keepdim))


def _arg(identity: Callable[[torch.dtype], float | bool], name: str) -> Callable[..., Tensor]:
    def masked(input: Any, dim: int | None = None, *, keepdim: bool = False,
               dtype: torch.dtype | None = None, mask: Any = None) -> Tensor:
        data, m = _data_and_mask(input, mask)
        index = getattr(torch, name)(_fill(data, m, identity(data.dtype)), dim, keepdim=keepdim)
        # PyTorch's masked argmax/argmin answer in the input's dtype unless told otherwise
        return index.to(data.dtype if dtype is None else dtype)

    masked.__name__ = masked.__qualname__ = name
    masked.__doc__ = (f"The index of the {'largest' if name == 'argmax' else 'smallest'} "
                      f"element ``mask`` keeps, along ``dim`` (flattened when None).")
    return masked


argmax = _arg(_lowest, "argmax")
argmin = _arg(_highest, "argmin")


def _count(data: Tensor, m: Tensor | None, dims: list[int], keepdim: bool) -> Tensor:
    """How many elements each output reads, in ``data``'s dtype."""
    if m is None:
        n = 1
        for d in dims:
            n *= data.shape[d]
        return torch.full(torch.sum(data, dims, keepdim=keepdim).shape, n, dtype=data.dtype,
                          device=data.device)
    return torch.sum(m, dims, keepdim=keepdim).to(data.dtype)


def _floating(fn: str, data: Tensor, dtype: torch.dtype | None) -> Tensor:
    if dtype is not None:
        data = data.to(dtype)
    if not (data.dtype.is_floating_point or data.dtype.is_complex):
        raise ValueError(f"{fn}(): Could not infer output dtype. Input dtype must be either a "
                         f"floating point or complex dtype. Got: {data.dtype}")
    return data


def mean(input: Any, dim: DimArg = None, *, keepdim: bool = False,
         dtype: torch.dtype | None = None, mask: Any = None) -> Tensor:
    """The mean of the elements ``mask`` keeps, over ``dim`` (nan where none is kept)."""
    data, m = _data_and_mask(input, mask)
    data = _floating("mean", data, dtype)
    dims = _dims(data, dim)
    return torch.sum(_fill(data, m, 0), dims, keepdim=keepdim) / _count(data, m, dims, keepdim)


def var(input: Any, dim: DimArg = None, unbiased: bool | None = None, *,
        correction: int | float | None = None, keepdim: bool = False,
        dtype: torch.dtype | None = None, mask: Any = None) -> Tensor:
    """The variance of the elements ``mask`` keeps, over ``dim``: the summed squared
    deviations over ``count - correction`` (``correction`` 1 by default, 0 when
    ``unbiased=False``); nan where that count is not positive and nothing deviates."""
    data, m = _data_and_mask(input, mask)
    data = _floating("var", data, dtype)
    if correction is None:
        correction = 0 if unbiased is False else 1
    dims = _dims(data, dim)
    count = _count(data, m, dims, True)
    centre = torch.sum(_fill(data, m, 0), dims, keepdim=True) / count
    deviation = data - centre
    squares = deviation * deviation.conj() if data.dtype.is_complex else deviation * deviation
    total = torch.sum(_fill(squares, m, 0), dims, keepdim=keepdim)
    if not keepdim:
        count = count.reshape(total.shape)
    return total / torch.clamp(count - correction, min=0)


def std(input: Any, dim: DimArg = None, unbiased: bool | None = None, *,
        correction: int | float | None = None, keepdim: bool = False,
        dtype: torch.dtype | None = None, mask: Any = None) -> Tensor:
    """The standard deviation: the square root of :func:`var` with the same arguments."""
    return torch.sqrt(var(input, dim, unbiased, correction=correction, keepdim=keepdim,
                          dtype=dtype, mask=mask))


def median(input: Any, dim: int = -1, *, keepdim: bool = False,
           dtype: torch.dtype | None = None, mask: Any = None) -> Tensor:
    """The median of the elements ``mask`` keeps along ``dim`` (the lower of the two middle
    ones; nan where none is kept)."""
    data, m = _data_and_mask(input, mask)
    data = _floating("median", data, dtype)
    (d,) = _dims(data, dim)
    return torch.nanmedian(_fill(data, m, math.nan), d, keepdim=keepdim).values


def norm(input: Any, ord: float = 2.0, dim: DimArg = None, *, keepdim: bool = False,
         dtype: torch.dtype | None = None, mask: Any = None) -> Tensor:
    """The vector ``ord``-norm of the elements ``mask`` keeps, over ``dim`` (``-inf``: the
    smallest magnitude; 0 where none is kept, inf for ``-inf``)."""
    data, m = _data_and_mask(input, mask)
    data = _floating("norm", data, dtype)
    filled = _fill(data, m, math.inf if ord == -math.inf else 0)
    dims = _dims(data, dim)
    return torch.linalg.vector_norm(filled, ord, _reduce_all_or(dims, data.dim()),
                                    keepdim=keepdim)


def _along(identity: Callable[[torch.dtype], float | bool], name: str,
           run: Callable[[Tensor, int], Tensor]) -> Callable[..., Tensor]:
    """A masked operation along one dimension that keeps the input's shape."""

    def masked(input: Any, dim: int, *, dtype: torch.dtype | None = None,
               mask: Any = None) -> Tensor:
        data, m = _data_and_mask(input, mask)
        if dtype is not None:
            data = data.to(dtype)
        (d,) = _dims(data, dim)
        return run(_fill(data, m, identity(data.dtype)), d)

    masked.__name__ = masked.__qualname__ = name
    return masked


cumsum = _along(lambda dtype: 0, "cumsum", lambda x, d: torch.cumsum(x, d))
cumsum.__doc__ = "The running sum along ``dim``; masked-out elements add nothing."
cumprod = _along(lambda dtype: 1, "cumprod", lambda x, d: torch.cumprod(x, d))
cumprod.__doc__ = "The running product along ``dim``; masked-out elements multiply by one."
softmax = _along(_lowest, "softmax", lambda x, d: torch.softmax(x, d))
softmax.__doc__ = ("Softmax along ``dim`` over the kept elements: 0 in the masked-out places, "
                   "nan where a slice keeps none.")
log_softmax = _along(_lowest, "log_softmax", lambda x, d: torch.log_softmax(x, d))
log_softmax.__doc__ = ("Log-softmax along ``dim`` over the kept elements: -inf in the "
                       "masked-out places, nan where a slice keeps none.")
softmin = _along(_highest, "softmin", lambda x, d: torch.softmax(-x, d))
softmin.__doc__ = ("Softmin along ``dim`` over the kept elements: 0 in the masked-out places, "
                   "nan where a slice keeps none.")


def normalize(input: Any, ord: float, dim: int, *, eps: float = 1e-12,
              dtype: torch.dtype | None = None, mask: Any = None) -> Tensor:
    """The kept elements divided by their ``ord``-norm along ``dim`` (at least ``eps``); 0 in
    the masked-out places."""
    data, m = _data_and_mask(input, mask)
    data = _floating("normalize", data, dtype)
    scale = norm(data, ord, dim, keepdim=True, mask=m)
    return _fill(data, m, 0) / torch.clamp(scale, min=eps)


def logaddexp(input: Any, other: Any, *, dtype: torch.dtype | None = None,
              input_mask: Any = None, other_mask: Any = None) -> Tensor:
    """``log(exp(input) + exp(other))`` where a masked-out element of either side adds
    nothing (counts as ``-inf``)."""
    a, am = _data_and_mask(input, input_mask)
    b, bm = _data_and_mask(other, other_mask)
    if dtype is not None:
        a, b = a.to(dtype), b.to(dtype)
    return torch.logaddexp(_fill(a, am, -math.inf), _fill(b, bm, -math.inf))
