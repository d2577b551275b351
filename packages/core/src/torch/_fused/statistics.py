"""Small numerical composites programs call from ``torch.*``: covariance and correlation,
histograms, trapezoid integration, Vandermonde matrices, block-diagonal assembly, cartesian
products and combinations, ``heaviside`` and ``renorm``.

Each is written in other ops (so autograd, meta tensors and every backend come for free) and
follows PyTorch 2.13's results and dtypes: ``cov`` of integers is a floating result, ``vander``
of integers or booleans is int64, ``trapezoid`` of integers is floating, ``combinations`` with
too few elements is an empty (0, r) tensor.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections import namedtuple
from typing import Any

from .._aten import shape as _shape
from .._aten.convert import scalar_type_name
from .._aten.creation import linspace
from .._aten.elementwise import where as _where
from .._aten.factories import tensor as _tensor, zeros
from .._aten.reductions import searchsorted
from .._core import config as _config, dtype as _dtype
from .._core.tensor import Tensor

__all__ = ["block_diag", "cartesian_prod", "combinations", "corrcoef", "cov",
           "cumulative_trapezoid", "heaviside", "histogram", "renorm", "trapezoid", "trapz",
           "vander"]

_HistogramResult = namedtuple("histogram", "hist bin_edges")  # type: ignore[misc]
_HistogramResult.__module__ = "torch.return_types"  # PyTorch's home of named result tuples


def _floating(t: Tensor) -> Tensor:
    """``t`` itself when floating or complex, else cast to the default floating dtype."""
    if t.dtype.is_floating_point or t.dtype.is_complex:
        return t
    return t.to(_config.get_default_dtype())


def cov(input: Tensor, *, correction: int = 1, fweights: Tensor | None = None,
        aweights: Tensor | None = None) -> Tensor:
    """The covariance matrix of the variables in ``input``'s rows (observations in columns; a
    1-D input is one variable, giving a 0-d result).

    :param correction: subtracted from the number (or weight) of observations: 1 is the
        unbiased estimate, 0 the maximum-likelihood one.
    :param fweights: integer frequency of each observation.
    :param aweights: importance weight of each observation.
    """
    if input.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.dim()} dimensions")
    x = _floating(input.reshape(1, -1) if input.dim() < 2 else input)  # (variables, obs)
    weights = fweights
    if aweights is not None:
        weights = aweights if weights is None else weights * aweights
    if weights is None:
        mean = x.mean(1, keepdim=True)
        total: Any = x.shape[1]
        norm = total - correction
    else:
        weights = _floating(weights).to(x.dtype)
        total = weights.sum()
        mean = (x * weights).sum(1, keepdim=True) / total
        norm = total - correction
        if correction != 0 and aweights is not None:
            norm = total - correction * (weights * aweights).sum() / total
    if isinstance(norm, Tensor):  # weighted: a tensor, clamped without reading its value
        norm = norm.clamp(min=0)  # (so meta and fake tensors run; no warning, unlike PyTorch)
    elif norm <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.", UserWarning, stacklevel=2)
        norm = 0
    centred = x - mean
    weighted = centred if weights is None else centred * weights
    return (weighted @ centred.transpose(0, 1).conj() / norm).squeeze()


def corrcoef(input: Tensor) -> Tensor:
    """Pearson correlation coefficients of the variables in ``input``'s rows (``cov``
    normalised by the standard deviations, real parts clipped to [-1, 1])."""
    c = cov(input)
    if c.dim() == 0:  # one variable: 1, or NaN when it does not vary, as in PyTorch
        return c / c
    std = c.diagonal().real.sqrt() if c.dtype.is_complex else c.diagonal().sqrt()
    c = c / std[:, None] / std[None, :]
    return c if c.dtype.is_complex else c.clamp(-1, 1)


def histogram(input: Tensor, bins: Any = 100, *, range: tuple[float, float] | None = None,
              weight: Tensor | None = None, density: bool = False, out: Any = None) -> Any:
    """``(hist, bin_edges)`` of the values of floating ``input``: ``bins`` equal bins over
    ``range`` (default: the data's minimum to maximum, widened by 0.5 each way when they are
    equal) or the given increasing edges. A bin holds edges[i] <= x < edges[i + 1], the last
    one its right edge too; values outside are not counted. ``weight`` weighs each value;
    ``density`` divides by the total and the bin widths."""
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"histogramdd" not implemented for '
                                  f"'{scalar_type_name(input.dtype)}'")
    values = input.reshape(-1)
    if isinstance(bins, Tensor):
        edges = bins.to(input.dtype)
    else:
        low, high = range if range is not None else (
            (values.min().item(), values.max().item()) if values.numel() else (0.0, 0.0))
        if low == high:
            low, high = low - 0.5, high + 0.5
        edges = linspace(low, high, bins + 1, dtype=input.dtype, device=input.device)
    count = edges.shape[0] - 1
    index = searchsorted(edges, values, right=True) - 1
    index = _where(values == edges[-1], count - 1, index)  # the last bin is closed
    inside = (index >= 0) & (index < count) & (values <= edges[-1])
    weights = weight.reshape(-1).to(input.dtype) if weight is not None else \
        values.new_ones(values.shape)
    hist = values.new_zeros((count,)).index_add(0, index[inside], weights[inside])
    if density:
        hist = hist / (hist.sum() * edges.diff())
    if out is not None:
        out[0].copy_(hist)
        out[1].copy_(edges)
        return _HistogramResult(out[0], out[1])
    return _HistogramResult(hist, edges)


def _spacing(y: Tensor, x: Tensor | None, dx: Any, dim: int) -> Any:
    """The widths between neighbouring samples of ``y`` along ``dim``: a tensor broadcasting
    against ``y``'s pairs when ``x`` is given, else the scalar ``dx`` (default 1)."""
    if x is None:
        return 1 if dx is None else dx
    if x.dim() == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError(f"trapezoid: There must be one `x` value for each sample point "
                               f"(got {x.shape[0]} x values and {y.shape[dim]} samples)")
        shape = [1] * y.dim()
        shape[dim] = x.shape[0] - 1
        return x.diff().reshape(shape)
    return x.diff(dim=dim)


def _pairs(y: Tensor, dim: int) -> Tensor:
    """y[i] + y[i + 1] along ``dim`` (one fewer element there)."""
    count = y.shape[dim]
    return y.narrow(dim, 1, count - 1) + y.narrow(dim, 0, count - 1)


def trapezoid(y: Tensor, x: Tensor | None = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """The trapezoidal rule along ``dim``: sample spacing from ``x`` (sample positions) or the
    constant ``dx`` (default 1)."""
    if x is not None and dx is not None:
        raise TypeError("trapezoid() received an invalid combination of arguments: x and dx "
                        "cannot both be given")
    dim = dim % max(y.dim(), 1)
    if y.shape[dim] == 0:
        return _floating(y).sum(dim) * 0
    return (_pairs(y, dim) * _spacing(y, x, dx, dim) * 0.5).sum(dim)


def trapz(y: Tensor, x: Tensor | None = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """``trapezoid`` under its older name."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y: Tensor, x: Tensor | None = None, *, dx: Any = None,
                         dim: int = -1) -> Tensor:
    """The running trapezoidal integral along ``dim`` (one element fewer than ``y`` there)."""
    if x is not None and dx is not None:
        raise TypeError("cumulative_trapezoid() received an invalid combination of arguments: "
                        "x and dx cannot both be given")
    dim = dim % max(y.dim(), 1)
    if y.shape[dim] == 0:
        return _floating(y) * 0
    return (_pairs(y, dim) * _spacing(y, x, dx, dim) * 0.5).cumsum(dim)


def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:
    """The Vandermonde matrix of the 1-D ``x``: column j holds x ** (N - 1 - j) (x ** j when
    ``increasing``); integers and booleans give int64."""
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    columns = x.shape[0] if N is None else N
    if columns < 0:
        raise RuntimeError("N must be non-negative.")
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        x = x.to(_dtype.int64)
    if columns == 0:
        return x.new_empty((x.shape[0], 0))
    ones = x.new_ones((x.shape[0], 1))
    if columns == 1:
        powers = ones
    else:  # cumulative products: (n, N-1) holding x, x**2, ...
        powers = _shape.cat([ones, x[:, None].expand(x.shape[0], columns - 1).cumprod(1)], 1)
    return powers if increasing else powers.flip(1)


def block_diag(*tensors: Tensor) -> Tensor:
    """The block-diagonal matrix of ``tensors`` (0-d ones are 1x1 blocks, 1-d ones rows)."""
    blocks = [t.reshape(1, -1) if t.dim() < 2 else t for t in tensors]
    if any(t.dim() > 2 for t in blocks):
        bad = next(i for i, t in enumerate(tensors) if t.dim() > 2)
        raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. "
                           f"Input {bad} has {tensors[bad].dim()} dimensions")
    if not blocks:
        return zeros(1, 0)
    dtype = blocks[0].dtype
    for t in blocks[1:]:
        dtype = _dtype.promote_types(dtype, t.dtype)
    width = sum(t.shape[1] for t in blocks)
    rows, left = [], 0
    for t in blocks:
        right = width - left - t.shape[1]
        pieces = [t.new_zeros((t.shape[0], left), dtype=dtype), t.to(dtype),
                  t.new_zeros((t.shape[0], right), dtype=dtype)]
        rows.append(_shape.cat(pieces, 1))
        left += t.shape[1]
    return _shape.cat(rows, 0)


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """Every combination of one element from each 1-D tensor, (count, len(tensors)) in row-major
    order (a single tensor comes back as it is)."""
    if len(tensors) == 1:
        return tensors[0]
    if any(t.dtype != tensors[0].dtype for t in tensors):
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    grids = _shape.meshgrid(*tensors, indexing="ij")
    return _shape.stack([g.reshape(-1) for g in grids], 1)


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """The length-``r`` combinations of the 1-D ``input``'s elements, one per row, in
    lexicographic order of positions (``r == 0`` gives an empty 1-D tensor)."""
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return input.new_empty((0,))
    choose = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    positions = list(choose(range(input.shape[0]), r))
    if not positions:
        return input.new_empty((0, r))
    return input[_tensor(positions, dtype=_dtype.int64, device=input.device)]


def heaviside(input: Tensor, values: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The Heaviside step of ``input``: 0 below zero, 1 above, ``values`` at zero."""
    if input.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    if input.dtype.is_complex:
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    step = (input > 0).to(input.dtype)
    result = _where(input == 0, values, step)
    return result if out is None else out.copy_(result)


def renorm(input: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    """``input`` with each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm`` scaled
    down to norm ``maxnorm`` (by maxnorm / (norm + 1e-7), as PyTorch)."""
    if p <= 0:
        raise RuntimeError(f"renorm: non-positive-norm not supported, got p={p}")
    dim = dim % max(input.dim(), 1)
    others = tuple(d for d in range(input.dim()) if d != dim)
    size = input.abs()
    if math.isinf(p):
        norm = size.amax(others, keepdim=True)
    else:
        norm = size.pow(p).sum(others, keepdim=True).pow(1.0 / p)
    factor = _where(norm > maxnorm, maxnorm / (norm + 1e-7), norm.new_ones(()))
    return input * factor


METHODS = {"cov": cov, "corrcoef": corrcoef, "heaviside": heaviside, "histogram": histogram,
           "renorm": renorm}
