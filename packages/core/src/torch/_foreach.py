"""``torch._foreach_*``: one op over a list of tensors (optimizers, EMA updates, gradient
clipping), PyTorch's multi-tensor functions.

Each is the per-tensor op applied to each tensor in turn (so autograd, modes and every device
see ordinary calls); a backend that has a multi-tensor kernel serves it through the fused
optimizer ops instead. Out-of-place forms return a tuple of new tensors, in-place forms (the
names ending in ``_``) update the given tensors and return the given list, as PyTorch's do.
The second operand of a binary op is a number, a 0-d tensor, a list of tensors or a list of
numbers, matched pairwise. The functions are made from the tables below, one row per op.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import Tensor

__all__: list[str] = []

_NUMBERS = (bool, int, float, complex)


def _check_list(tensors: Any, what: str = "self") -> Sequence[Tensor]:
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"_foreach op: argument '{what}' must be a list or tuple of Tensors, "
                        f"not {type(tensors).__name__}")
    if not tensors:
        raise RuntimeError("Tensor list must have at least one tensor.")
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"_foreach op: expected a list of Tensors for '{what}', found "
                            f"{type(t).__name__}")
    return tensors


def _pair(tensors: Sequence[Tensor], other: Any) -> list[Any]:
    """``other`` matched to ``tensors``: one operand per tensor."""
    if isinstance(other, Tensor):
        if other.dim() != 0:
            raise RuntimeError(f"scalar tensor expected to be 0 dim but it has {other.dim()} "
                               f"dimensions and {other.numel()} elements.")
        return [other] * len(tensors)
    if isinstance(other, _NUMBERS):
        return [other] * len(tensors)
    if not isinstance(other, (list, tuple)):
        raise TypeError(f"_foreach op: the second operand must be a number, a 0-d Tensor or a "
                        f"list, not {type(other).__name__}")
    if other and all(isinstance(o, Tensor) for o in other):
        if len(other) != len(tensors):
            raise RuntimeError(f"Tensor lists must have the same number of tensors, got "
                               f"{len(tensors)} and {len(other)}")
        return list(other)
    if len(other) != len(tensors):
        raise RuntimeError("Tensor list must have same number of elements as scalar list.")
    for o in other:
        if not isinstance(o, _NUMBERS):
            raise TypeError(f"_foreach op: expected a list of numbers or of Tensors, found "
                            f"{type(o).__name__}")
    return list(other)


def _scalars(tensors: Sequence[Tensor], value: Any) -> list[Any]:
    """The ``value``/``scalars`` of addcmul/addcdiv: a number, a list of numbers, or a 1-D
    tensor of them, one per tensor."""
    if isinstance(value, Tensor):
        if value.dim() != 1 or value.numel() != len(tensors):
            raise RuntimeError(f"Expected scalars to be a 1-D tensor of {len(tensors)} "
                               f"elements, got shape {tuple(value.shape)}")
        return value.tolist()
    return _pair(tensors, value)


def _unary(name: str) -> tuple[Callable[..., Any], Callable[..., Any]]:
    def out_of_place(self: Sequence[Tensor]) -> tuple[Tensor, ...]:
        fn = getattr(torch, name)
        return tuple(fn(t) for t in _check_list(self))

    def in_place(self: Sequence[Tensor]) -> Sequence[Tensor]:
        for t in _check_list(self):
            getattr(t, name + "_")()
        return self

    return out_of_place, in_place


def _binary(name: str, scalar_name: str | None, alpha: bool
            ) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """``name(t, o)`` over the pairs; ``scalar_name`` serves a number operand where the op
    itself takes tensors only (maximum with a number is clamp_min)."""

    def op_for(o: Any) -> str:
        return scalar_name if scalar_name is not None and isinstance(o, _NUMBERS) else name

    def fn_for(o: Any) -> Callable[..., Any]:
        return getattr(torch, op_for(o))

    def out_of_place(self: Sequence[Tensor], other: Any, **kwargs: Any) -> tuple[Tensor, ...]:
        self = _check_list(self)
        _check_kwargs(name, kwargs, alpha)
        return tuple(fn_for(o)(t, o, **kwargs) for t, o in zip(self, _pair(self, other)))

    def in_place(self: Sequence[Tensor], other: Any, **kwargs: Any) -> Sequence[Tensor]:
        tensors = _check_list(self)
        _check_kwargs(name, kwargs, alpha)
        for t, o in zip(tensors, _pair(tensors, other)):
            method = getattr(t, op_for(o) + "_", None)
            if method is not None:
                method(o, **kwargs)
            else:  # (maximum/minimum have no in-place method: write the result back)
                t.copy_(fn_for(o)(t, o, **kwargs))
        return self

    return out_of_place, in_place


def _check_kwargs(name: str, kwargs: dict[str, Any], alpha: bool) -> None:
    allowed = {"alpha"} if alpha else set()
    unknown = set(kwargs) - allowed
    if unknown:
        raise TypeError(f"_foreach_{name}() got an unexpected keyword argument "
                        f"'{sorted(unknown)[0]}'")


def _pointwise(name: str) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """addcmul/addcdiv: ``self + value * op(tensor1, tensor2)``."""

    def out_of_place(self: Sequence[Tensor], tensor1: Sequence[Tensor],
                     tensor2: Sequence[Tensor], value: Any = 1) -> tuple[Tensor, ...]:
        fn = getattr(torch, name)
        rows = _rows(self, tensor1, tensor2)
        return tuple(fn(t, a, b, value=v) for (t, a, b), v in zip(rows, _scalars(self, value)))

    def in_place(self: Sequence[Tensor], tensor1: Sequence[Tensor], tensor2: Sequence[Tensor],
                 value: Any = 1) -> Sequence[Tensor]:
        rows = _rows(self, tensor1, tensor2)
        for (t, a, b), v in zip(rows, _scalars(self, value)):
            getattr(t, name + "_")(a, b, value=v)
        return self

    return out_of_place, in_place


def _rows(*lists: Any) -> list[tuple[Tensor, ...]]:
    checked = [_check_list(lst, what) for lst, what in zip(lists, ("self", "tensor1",
                                                                   "tensor2"))]
    for lst in checked[1:]:
        if len(lst) != len(checked[0]):
            raise RuntimeError(f"Tensor lists must have the same number of tensors, got "
                               f"{len(checked[0])} and {len(lst)}")
    return list(zip(*checked))


def _foreach_lerp(self: Sequence[Tensor], tensors1: Sequence[Tensor], weight: Any
                  ) -> tuple[Tensor, ...]:
    """``self + weight * (tensors1 - self)`` for each pair."""
    rows = _rows(self, tensors1)
    return tuple(torch.lerp(t, e, w) for (t, e), w in zip(rows, _pair(self, weight)))


def _foreach_lerp_(self: Sequence[Tensor], tensors1: Sequence[Tensor], weight: Any
                   ) -> Sequence[Tensor]:
    """In-place :func:`_foreach_lerp`."""
    rows = _rows(self, tensors1)
    for (t, e), w in zip(rows, _pair(self, weight)):
        t.lerp_(e, w)
    return self


def _foreach_pow(self: Any, exponent: Any) -> tuple[Tensor, ...]:
    """``self ** exponent`` for each tensor (``self`` may be a number: number ** tensors)."""
    if isinstance(self, _NUMBERS):
        return tuple(torch.pow(self, e) for e in _check_list(exponent, "exponent"))
    self = _check_list(self)
    return tuple(torch.pow(t, e) for t, e in zip(self, _pair(self, exponent)))


def _foreach_pow_(self: Sequence[Tensor], exponent: Any) -> Sequence[Tensor]:
    """In-place :func:`_foreach_pow`."""
    tensors = _check_list(self)
    for t, e in zip(tensors, _pair(tensors, exponent)):
        t.pow_(e)
    return self


def _foreach_norm(self: Sequence[Tensor], ord: Any = 2, dtype: Any = None
                  ) -> tuple[Tensor, ...]:
    """The vector norm of order ``ord`` of each tensor (in ``dtype`` when given)."""
    vector_norm = torch.linalg.vector_norm
    return tuple(vector_norm(t, ord, dtype=dtype) for t in _check_list(self))


def _foreach_powsum(self: Sequence[Tensor], ord: Any = 2, dtype: Any = None
                    ) -> tuple[Tensor, ...]:
    """``sum(|x| ** ord)`` of each tensor (the norm before its root; ``ord`` 0 counts the
    non-zero elements, as the 0-norm does)."""
    out = []
    for t in _check_list(self):
        x = t if dtype is None else t.to(dtype)
        out.append((x != 0).sum().to(x.dtype) if ord == 0 else x.abs().pow(ord).sum())
    return tuple(out)


def _foreach_max(self: Sequence[Tensor]) -> tuple[Tensor, ...]:
    """The largest element of each tensor."""
    return tuple(t.max() for t in _check_list(self))


def _foreach_clone(self: Sequence[Tensor]) -> tuple[Tensor, ...]:
    """A copy of each tensor."""
    return tuple(t.clone() for t in _check_list(self))


def _foreach_copy_(self: Sequence[Tensor], src: Sequence[Tensor], non_blocking: bool = False
                   ) -> Sequence[Tensor]:
    """Copy each tensor of ``src`` into its partner in ``self``."""
    for t, s in _rows(self, src):
        t.copy_(s, non_blocking=non_blocking)
    return self


def _foreach_zero_(self: Sequence[Tensor]) -> Sequence[Tensor]:
    """Fill each tensor with zeros."""
    for t in _check_list(self):
        t.zero_()
    return self


def _foreach_mm(self: Sequence[Tensor], mat2: Sequence[Tensor]) -> tuple[Tensor, ...]:
    """The matrix product of each pair."""
    mm = torch.mm
    return tuple(mm(a, b) for a, b in _rows(self, mat2))


# name -> the per-tensor function (torch.<name>, in place Tensor.<name>_)
_UNARY = ("abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1",
          "floor", "frac", "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal",
          "round", "rsqrt", "sigmoid", "sign", "sin", "sinh", "sqrt", "tan", "tanh", "trunc")
# name -> (the op serving a number operand, or None: the op itself; takes alpha=)
_BINARY: dict[str, tuple[str | None, bool]] = {
    "add": (None, True),
    "sub": (None, True),
    "mul": (None, False),
    "div": (None, False),
    "clamp_min": (None, False),
    "clamp_max": (None, False),
    "maximum": ("clamp_min", False),
    "minimum": ("clamp_max", False),
}
_POINTWISE = ("addcmul", "addcdiv")


def _publish(name: str, fn: Callable[..., Any], doc: str) -> None:
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    fn.__module__ = "torch"
    globals()[name] = fn
    __all__.append(name)


for _op in _UNARY:
    _fns = _unary(_op)
    _publish(f"_foreach_{_op}", _fns[0], f"``torch.{_op}`` of each tensor.")
    _publish(f"_foreach_{_op}_", _fns[1], f"``Tensor.{_op}_`` on each tensor.")
for _op, (_scalar_op, _alpha) in _BINARY.items():
    _fns = _binary(_op, _scalar_op, _alpha)
    _publish(f"_foreach_{_op}", _fns[0], f"``torch.{_op}`` of each tensor with its operand.")
    _publish(f"_foreach_{_op}_", _fns[1], f"In-place ``{_op}`` of each tensor with its operand.")
for _op in _POINTWISE:
    _fns = _pointwise(_op)
    _publish(f"_foreach_{_op}", _fns[0], f"``torch.{_op}`` of each row of the three lists.")
    _publish(f"_foreach_{_op}_", _fns[1], f"In-place ``{_op}`` of each row of the lists.")
__all__ += ["_foreach_clone", "_foreach_copy_", "_foreach_lerp", "_foreach_lerp_",
            "_foreach_max", "_foreach_mm", "_foreach_norm", "_foreach_pow", "_foreach_pow_",
            "_foreach_powsum",
            "_foreach_zero_"]
del _op, _fns, _scalar_op, _alpha
