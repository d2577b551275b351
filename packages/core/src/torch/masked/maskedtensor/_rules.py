"""What an aten operator does to MaskedTensors: one rule per operator name.

- elementwise operators (``Tag.pointwise``) compute on the values and keep the mask; every
  MaskedTensor operand must have the same mask (plain tensors and numbers take any);
- reductions read only the present values (``torch.masked``'s functions) and mark an output
  present where its reduction saw a present value;
- views, copies and reshuffles move the values and the mask alike;
- softmax and log-softmax normalise over the present values.
Any other operator has no rule: the dispatcher raises TypeError naming it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from .. import _ops
from .core import MaskedTensor

Rule = Callable[[Any, tuple[Any, ...], dict[str, Any]], Any]


def _unwrap(value: Any, part: str) -> Any:
    """``value`` with every MaskedTensor (also inside lists) replaced by its values or mask."""
    if isinstance(value, MaskedTensor):
        return value._masked_data if part == "data" else value._masked_mask
    if isinstance(value, (list, tuple)):
        return type(value)(_unwrap(v, part) for v in value)
    return value


def _wrap(data: Any, mask: Any) -> Any:
    if isinstance(data, Tensor):
        return MaskedTensor(data, mask.expand(data.shape) if mask.shape != data.shape else mask)
    if isinstance(data, (list, tuple)):
        return type(data)(_wrap(d, m) for d, m in zip(data, mask))
    return data


def _masks(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Tensor]:
    found: list[Tensor] = []

    def visit(value: Any) -> None:
        if isinstance(value, MaskedTensor):
            found.append(value._masked_mask)
        elif isinstance(value, (list, tuple)):
            for v in value:
                visit(v)

    visit(args)
    visit(tuple(kwargs.values()))
    return found


def _pointwise(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    masks = _masks(args, kwargs)
    first = masks[0]
    for other in masks[1:]:
        if other is not first and not (other.shape == first.shape and torch.equal(other, first)):
            raise ValueError("Input masks must match. If you need support for this, please "
                             "open an issue on Github.")
    result = func(*_unwrap(args, "data"), **_unwrap(kwargs, "data"))
    if func._opname.endswith("_") and isinstance(args[0], MaskedTensor):
        return args[0]  # an in-place op wrote the first operand's values
    return _wrap(result, first)


def _structural(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """A view, copy or reshuffle: the same call on the values and on the mask."""
    return _wrap(func(*_unwrap(args, "data"), **_unwrap(kwargs, "data")),
                 func(*_unwrap(args, "mask"), **_unwrap(kwargs, "mask")))


def _like(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``zeros_like`` and its kind: new values of the source's shape, the source's mask."""
    return _wrap(func(*_unwrap(args, "data"), **kwargs), args[0]._masked_mask)


def _to_copy(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``to(dtype/device)``: the values converted, the mask moved with them."""
    source = args[0]
    data = func(source._masked_data, *args[1:], **kwargs)
    mask = source._masked_mask.to(data.device)
    return MaskedTensor(data, mask)


def _reduction_arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, bool]:
    dim = args[1] if len(args) > 1 else kwargs.get("dim")
    keepdim = args[2] if len(args) > 2 else kwargs.get("keepdim", False)
    return dim, bool(keepdim)


def _reduction(masked: Callable[..., Tensor], takes_dtype: bool = True) -> Rule:
    """An aten reduction as ``torch.masked``'s ``masked``; an output is present where its
    reduction read a present value."""

    def rule(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        source = args[0]
        dim, keepdim = _reduction_arguments(args, kwargs)
        options = {"dtype": kwargs["dtype"]} if takes_dtype and "dtype" in kwargs else {}
        data = masked(source._masked_data, dim, keepdim=keepdim, mask=source._masked_mask,
                      **options)
        dims = _ops._dims(source._masked_data, dim)
        present = torch.any(source._masked_mask, dims, keepdim=keepdim) if dims else \
            source._masked_mask
        return MaskedTensor(data, present.reshape(data.shape))

    return rule


def _all_or_any(identity: bool, reduce: Callable[..., Tensor]) -> Callable[..., Tensor]:
    def masked(data: Tensor, dim: Any, *, keepdim: bool, mask: Tensor) -> Tensor:
        filled = torch.where(mask, data.to(torch.bool), identity)
        return reduce(filled, _ops._dims(data, dim), keepdim=keepdim)

    return masked


def _softmax(masked: Callable[..., Tensor]) -> Rule:
    def rule(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        source, dim = args[0], args[1]
        return MaskedTensor(masked(source._masked_data, dim, mask=source._masked_mask),
                            source._masked_mask)

    return rule


_STRUCTURAL = ("view", "_unsafe_view", "reshape", "t", "transpose", "permute", "select",
               "slice", "squeeze", "unsqueeze", "flatten", "expand", "narrow", "detach",
               "clone", "alias", "contiguous", "lift_fresh", "unbind", "split", "chunk",
               "split_with_sizes", "movedim", "index", "index_select", "flip", "roll", "cat",
               "stack", "repeat", "tile", "diagonal", "unfold", "_reshape_alias", "as_strided",
               "expand_as", "view_as", "reshape_as", "squeeze_", "unsqueeze_", "t_",
               "transpose_")
_LIKE = ("empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like")

RULES: dict[str, Rule] = {
    **dict.fromkeys(_STRUCTURAL, _structural),
    **dict.fromkeys(_LIKE, _like),
    "_to_copy": _to_copy,
    "to": _to_copy,
    "sum": _reduction(_ops.sum),
    "nansum": _reduction(_ops.sum),
    "mean": _reduction(_ops.mean),
    "amax": _reduction(_ops.amax, takes_dtype=False),
    "amin": _reduction(_ops.amin, takes_dtype=False),
    "prod": _reduction(_ops.prod),
    "argmax": _reduction(_ops.argmax, takes_dtype=False),
    "argmin": _reduction(_ops.argmin, takes_dtype=False),
    "logsumexp": _reduction(_ops.logsumexp, takes_dtype=False),
    "all": _reduction(_all_or_any(True, torch.all), takes_dtype=False),
    "any": _reduction(_all_or_any(False, torch.any), takes_dtype=False),
    "_softmax": _softmax(_ops.softmax),
    "softmax": _softmax(_ops.softmax),
    "_log_softmax": _softmax(_ops.log_softmax),
    "log_softmax": _softmax(_ops.log_softmax),
}


def run(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``func(*args, **kwargs)`` with MaskedTensor operands, by its rule; NotImplemented when
    it has none (the dispatcher then raises TypeError naming the operator)."""
    rule = RULES.get(func._opname)
    if rule is None and torch.Tag.pointwise in func.tags:
        rule = _pointwise
    if rule is None:
        return NotImplemented
    with torch._C.DisableTorchFunctionSubclass():
        return rule(func, args, kwargs)
