"""Spellings PyTorch has for ops implemented elsewhere: the in-place methods of a few
out-of-place ops (``Tensor.sinc_``, ``i0_``, ``gcd_``, ``lcm_``, ``ldexp_``,
``conj_physical_``; each also a ``torch.*`` function), the ``torch.*`` functions of some Tensor
methods (``torch.fill_``, ``torch.zero_``, ``torch.is_signed``...), the ``unsafe_`` splits
(the same views as ``chunk``/``split``: Plait's views are always tracked), ``adjoint``,
``split_with_sizes``, ``fill`` and ``nonzero_static``. One row per name."""

from __future__ import annotations

from typing import Any

from ._aten import complex_views, indexing, shape
from ._aten.arith import inplace_method
from ._core.tensor import Tensor
from ._fused import float_parts, integer_math, special

# in-place method (and torch function) -> the out-of-place op it writes back
INPLACE_FORMS: dict[str, Any] = {
    "i0_": special.i0,
    "sinc_": special.sinc,
    "gcd_": integer_math.gcd,
    "lcm_": integer_math.lcm,
    "ldexp_": float_parts.ldexp,
}

# torch function -> the Tensor method it calls on its first argument
FUNCTION_FORMS: tuple[str, ...] = (
    "fill_", "zero_", "detach_", "index_put_", "addmv_", "resize_as_", "is_signed",
    "is_inference", "is_neg", "get_device",
)


def _function_form(method: str) -> Any:
    def fn(input: Tensor, *args: Any, **kwargs: Any) -> Any:
        return getattr(input, method)(*args, **kwargs)

    fn.__name__ = fn.__qualname__ = method
    fn.__doc__ = f"``input.{method}(...)``."
    return fn


def conj_physical_(self: Tensor) -> Tensor:
    """Conjugate ``self`` in place (nothing to do for a real tensor)."""
    if self.dtype.is_complex:
        self.copy_(complex_views.conj_physical(self))
    return self


def adjoint(input: Tensor) -> Tensor:
    """The conjugate transpose of the last two dims, as a view (``input.mH``)."""
    return input.mH


def split_with_sizes(input: Tensor, split_sizes: Any, dim: int = 0) -> Any:
    """``input`` cut along ``dim`` into pieces of the given sizes (views)."""
    return input.split(list(split_sizes), dim)


def unsafe_split(input: Tensor, split_size: int, dim: int = 0) -> Any:
    """``torch.split`` (PyTorch's unsafe form skips view tracking; these views are tracked)."""
    return input.split(split_size, dim)


def unsafe_split_with_sizes(input: Tensor, split_sizes: Any, dim: int = 0) -> Any:
    """``torch.split`` with sizes (tracked views, as :func:`unsafe_split`)."""
    return input.split(list(split_sizes), dim)


def unsafe_chunk(input: Tensor, chunks: int, dim: int = 0) -> Any:
    """``torch.chunk`` (tracked views, as :func:`unsafe_split`)."""
    return input.chunk(chunks, dim)


def fill(input: Tensor, value: Any) -> Tensor:
    """A new tensor like ``input`` filled with ``value`` (a number or a 0-d tensor)."""
    return input.clone().fill_(value)


def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:
    """The indices of the nonzero elements as a ``(size, input.dim())`` int64 tensor: the first
    ``size`` of them, padded with ``fill_value`` rows when there are fewer."""
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be a non-negative int, but got {size}")
    found = indexing.nonzero(input)[:size]
    missing = size - found.shape[0]
    if missing == 0:
        return found
    return shape.cat([found, found.new_full((missing, found.shape[1]), fill_value)], 0)


for _name, _op in INPLACE_FORMS.items():
    globals()[_name] = inplace_method(_op, _name)
for _name in FUNCTION_FORMS:
    globals()[_name] = _function_form(_name)
del _name

METHODS: dict[str, Any] = {
    **{name: globals()[name] for name in INPLACE_FORMS},
    "conj_physical_": conj_physical_,
    "adjoint": adjoint,
    "split_with_sizes": split_with_sizes,
    "unsafe_split": unsafe_split,
    "unsafe_split_with_sizes": unsafe_split_with_sizes,
    "unsafe_chunk": unsafe_chunk,
    "nonzero_static": nonzero_static,
}

__all__ = [*INPLACE_FORMS, *FUNCTION_FORMS, "adjoint", "conj_physical_", "fill",
           "nonzero_static", "split_with_sizes", "unsafe_chunk", "unsafe_split",
           "unsafe_split_with_sizes"]
