"""The helpers TorchScript code calls for its type system, as they behave in Python:
``annotate`` returns the value, ``isinstance`` checks container element types, the overload
decorators (in ``torch.jit``) return what they mark."""

from __future__ import annotations

import builtins
import types
import typing
from typing import Any

__all__ = ["_unwrap_optional", "annotate", "isinstance"]

def annotate(the_type: Any, the_value: Any) -> Any:
    """Give ``the_value`` a type for the TorchScript compiler; returns the value."""
    return the_value


def isinstance(obj: Any, target_type: Any) -> bool:
    """``isinstance`` that also checks parameterised containers (``List[int]``,
    ``Dict[str, Tensor]``, ``Optional[Tensor]``, ``Tuple[int, int]``) element by element."""
    origin = typing.get_origin(target_type)
    if origin is None:
        return target_type is Any or builtins.isinstance(obj, target_type)
    args = typing.get_args(target_type)
    if origin is typing.Union or origin is types.UnionType:  # Optional[T], T | None
        return any(isinstance(obj, t) for t in args)
    if origin in (list, set, frozenset):
        return builtins.isinstance(obj, origin) and all(isinstance(x, args[0]) for x in obj)
    if origin is dict:
        return builtins.isinstance(obj, dict) and all(
            isinstance(k, args[0]) and isinstance(v, args[1]) for k, v in obj.items())
    if origin is tuple:
        if not builtins.isinstance(obj, tuple):
            return False
        if len(args) == 2 and args[1] is Ellipsis:
            return all(isinstance(x, args[0]) for x in obj)
        return len(obj) == len(args) and all(isinstance(x, t) for x, t in zip(obj, args))
    return builtins.isinstance(obj, origin)


def _unwrap_optional(x: Any) -> Any:
    """``x``, which must not be None."""
    assert x is not None, "Unwrapping null optional"
    return x
