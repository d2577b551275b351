"""``torch.func``: so far only :func:`functional_call` (from plait-nn, since it needs
``torch.nn``); the function transforms (``grad``, ``vmap``...) are not provided."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from torch import Tensor
from torch.nn.modules.module import Module
from torch.nn.utils.stateless import _functional_call

__all__ = ["functional_call"]


def functional_call(module: Module,
                    parameter_and_buffer_dicts: dict[str, Tensor] | Sequence[dict[str, Tensor]],
                    args: Any = None, kwargs: dict[str, Any] | None = None, *,
                    tie_weights: bool = True, strict: bool = False) -> Any:
    """Call ``module(*args, **kwargs)`` with the parameters and buffers named in
    ``parameter_and_buffer_dicts`` (a dict, or a list/tuple of dicts with distinct keys)
    replaced by the given tensors; the module's own are put back afterwards.

    ``args``: a tuple of positional arguments, or a single one. ``tie_weights``: a tensor
    given for one name of tied parameters replaces all of them. ``strict``: the names must be
    exactly the module's parameters and buffers.

    :raises ValueError: a key appears in several dicts, or the argument is not a dict or a
        sequence of dicts.
    """
    if isinstance(parameter_and_buffer_dicts, dict):
        parameters_and_buffers = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, Sequence):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be "
                             "dictionaries")
        seen: dict[str, int] = {}
        for d in parameter_and_buffer_dicts:
            for key in d:
                seen[key] = seen.get(key, 0) + 1
        repeated = [key for key, count in seen.items() if count > 1]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of "
                             "functional call is ambiguous")
        parameters_and_buffers = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of "
                         f"dicts, but got {type(parameter_and_buffer_dicts)}")
    return _functional_call(module, parameters_and_buffers, args, kwargs,
                            tie_weights=tie_weights, strict=strict)
