"""``torch.gradient``: derivatives of sampled values by finite differences, numpy's
``gradient`` with PyTorch's signature (``spacing``, ``dim``, ``edge_order`` keywords).

Interior points take second-order central differences (for unevenly spaced coordinates the
three-point formula of the two neighbouring widths); the two edge points one-sided differences
of order ``edge_order``. Written in differentiable ops along the dim with ``narrow``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._aten.shape import cat
from .._core import config as _config
from .._core.tensor import Tensor, wrap_dim

__all__ = ["gradient"]


def _part(t: Tensor, dim: int, start: int, stop: int) -> Tensor:
    """``t[start:stop]`` along ``dim`` (``stop`` may count from the end)."""
    size = t.shape[dim]
    stop = stop if stop > 0 else size + stop
    return t.narrow(dim, start, stop - start)


def _at(t: Tensor, dim: int, i: int) -> Tensor:
    """Sample ``i`` (from the end when negative) along ``dim``, keeping the dim."""
    i = i % t.shape[dim]
    return t.narrow(dim, i, 1)


def _uniform(f: Tensor, dim: int, h: Any, edge_order: int) -> Tensor:
    """Differences along ``dim`` for samples ``h`` apart."""
    interior = (_part(f, dim, 2, 0) - _part(f, dim, 0, -2)) / (2.0 * h)
    if edge_order == 1:
        first = (_at(f, dim, 1) - _at(f, dim, 0)) / h
        end = (_at(f, dim, -1) - _at(f, dim, -2)) / h
    else:
        first = (-1.5 * _at(f, dim, 0) + 2.0 * _at(f, dim, 1) - 0.5 * _at(f, dim, 2)) / h
        end = (0.5 * _at(f, dim, -3) - 2.0 * _at(f, dim, -2) + 1.5 * _at(f, dim, -1)) / h
    return cat([first, interior, end], dim)


def _coordinates(f: Tensor, dim: int, x: Tensor, edge_order: int) -> Tensor:
    """Differences along ``dim`` for samples at the coordinates ``x`` (1-d)."""
    shape = [1] * f.dim()
    shape[dim] = f.shape[dim] - 1
    h = x.diff().to(f.dtype).reshape(shape)  # the widths between neighbours
    dx1, dx2 = _part(h, dim, 0, -1), _part(h, dim, 1, 0)  # (.., size - 2, ..)
    interior = (-dx2 / (dx1 * (dx1 + dx2)) * _part(f, dim, 0, -2)
                + (dx2 - dx1) / (dx1 * dx2) * _part(f, dim, 1, -1)
                + dx1 / (dx2 * (dx1 + dx2)) * _part(f, dim, 2, 0))
    if edge_order == 1:
        first = (_at(f, dim, 1) - _at(f, dim, 0)) / _at(h, dim, 0)
        end = (_at(f, dim, -1) - _at(f, dim, -2)) / _at(h, dim, -1)
    else:
        a1, a2 = _at(h, dim, 0), _at(h, dim, 1)
        first = (-(2.0 * a1 + a2) / (a1 * (a1 + a2)) * _at(f, dim, 0)
                 + (a1 + a2) / (a1 * a2) * _at(f, dim, 1)
                 - a1 / (a2 * (a1 + a2)) * _at(f, dim, 2))
        b1, b2 = _at(h, dim, -2), _at(h, dim, -1)
        end = (b2 / (b1 * (b1 + b2)) * _at(f, dim, -3)
               - (b1 + b2) / (b1 * b2) * _at(f, dim, -2)
               + (2.0 * b2 + b1) / (b2 * (b1 + b2)) * _at(f, dim, -1))
    return cat([first, interior, end], dim)


def _spacings(input: Tensor, spacing: Any, dims: list[int], dim_given: bool) -> list[Any]:
    if not isinstance(spacing, (list, tuple)):
        return [spacing] * len(dims)
    if len(spacing) != len(dims):
        if dim_given:
            raise RuntimeError(
                "torch.gradient expected spacing to be unspecified, a scalar or it's spacing "
                "and dim arguments to have the same length, but got a spacing argument of "
                f"length {len(spacing)} and a dim argument of length {len(dims)}.")
        raise RuntimeError(
            "torch.gradient expected spacing to be unspecified, a scalar, or a list of length "
            f"equal to 'self.dim() = {input.dim()}', since dim argument was not given, but got "
            f"a list of length {len(spacing)}")
    for s in spacing:
        if isinstance(s, Tensor) and s.dim() != 1:
            raise RuntimeError("torch.gradient expected each element of spacing to have one "
                               f"dimension, but got an element with {s.dim()} dimensions!")
    return list(spacing)


def gradient(input: Tensor, *, spacing: Any = 1, dim: int | Sequence[int] | None = None,
             edge_order: int = 1) -> tuple[Tensor, ...]:
    """The derivative of ``input``'s samples along each dim of ``dim`` (every dim when None),
    one tensor per dim. ``spacing`` is the distance between samples: one scalar for every dim,
    a scalar per dim, or per dim a 1-d tensor of the samples' coordinates. Integer inputs give
    the default floating dtype."""
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    if dim is None:
        dims = list(range(input.dim()))
    elif isinstance(dim, int):
        dims = [wrap_dim(dim, input.dim())]
    else:
        dims = [wrap_dim(d, input.dim()) for d in dim]
    spacings = _spacings(input, spacing, dims, dim is not None)
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least "
                               "edge_order+1")
    f = input if (input.dtype.is_floating_point or input.dtype.is_complex) else input.to(
        _config.get_default_dtype())
    return tuple(_coordinates(f, d, s, edge_order) if isinstance(s, Tensor)
                 else _uniform(f, d, s, edge_order) for d, s in zip(dims, spacings, strict=True))


METHODS: dict[str, Any] = {}
