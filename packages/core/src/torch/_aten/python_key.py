"""What the Python key hands a dispatch mode or a ``__torch_dispatch__`` subclass, as PyTorch's
dispatcher hands it (loaded after every op module):

- the in-place form (``aten::add_.Tensor``...) of every out-of-place aten operator defined
  above (:mod:`.inplace_operators`), so that ``torch.ops`` names the operators a mode sees;
- the arguments of an aten call in PyTorch's normal form (:func:`pytorch_arguments`), which
  the dispatcher applies before a mode or subclass sees them: ``x.sum(0)`` reaches it as
  ``aten.sum.dim_IntList(x, [0])``, not as the facade passed it, ``(x, 0, False, dtype=None)``.
"""

from __future__ import annotations

import re
from typing import Any

from .._core import dispatch as _dispatch
from .._core.schema import Argument
from .._core.tensor import Tensor
from .inplace_operators import define_all

__all__: list[str] = []

# ``int[]``, ``SymInt[2]``, ``Tensor?[]``...: a list argument, with its fixed length if any
_LIST_TYPE = re.compile(r"^(?P<item>[A-Za-z]+\??)\[(?P<size>\d*)\]\??$")
# the item types a single value stands for a whole list of (``kernel_size=2`` is ``[2, 2]``)
_BROADCAST_ITEMS = frozenset(("int", "SymInt", "float", "bool"))
# Arguments Plait's schema gives a default and PyTorch's does not: always handed, as PyTorch's
# dispatcher hands every argument without a default.
_REQUIRED_IN_PYTORCH: dict[str, frozenset[str]] = {
    **dict.fromkeys(("_softmax", "_log_softmax", "_sparse_softmax", "_sparse_log_softmax"),
                    frozenset(("half_to_float",))),
    **dict.fromkeys(("div.Tensor_mode", "div_.Tensor_mode"), frozenset(("rounding_mode",))),
    **dict.fromkeys(("round.decimals", "round_.decimals"), frozenset(("decimals",))),
    **dict.fromkeys(("sum.dim_IntList", "prod.dim_int", "_sparse_sum.dim"),
                    frozenset(("dim",))),
}
# Operators whose pin_memory PyTorch hands as given (not a factory's binding, which parses it
# as a bool)
_PIN_MEMORY_AS_GIVEN = frozenset(("_to_copy",))
_NONE_REQUIRED: frozenset[str] = frozenset()


def _as_pytorch_value(arg: Argument, value: Any, factory: bool = False) -> Any:
    """``value`` as PyTorch's argument parser passes an argument of ``arg``'s type: lists as
    lists (a tuple or ``torch.Size`` becomes one, a single int of an ``int[N]`` becomes N of
    it), a ``float`` argument as a float, a ``factory``'s ``pin_memory`` as False when not
    given."""
    if value is None:
        # the Python binding of every factory parses pin_memory as a bool (False by default)
        return False if factory and arg.name == "pin_memory" and arg.type == "bool?" else None
    listed = _LIST_TYPE.match(arg.type)
    if listed is not None:
        if isinstance(value, tuple):
            return list(value)
        if not isinstance(value, (list, Tensor)) and listed["item"] in _BROADCAST_ITEMS:
            return [value] * int(listed["size"] or 1)
        return value
    if arg.type.rstrip("?") == "float" and value.__class__ is int:
        return float(value)
    return value


def _is_default(arg: Argument, value: Any) -> bool:
    """Whether ``value`` (in PyTorch's form) is ``arg``'s default, as PyTorch compares them: of
    the same kind and equal (``alpha=1.0`` is not the default ``1``; a tensor never is)."""
    if not arg.has_default:
        return False
    default = arg.default
    if default is None or isinstance(value, Tensor):
        return value is None and default is None
    if isinstance(default, str) and not isinstance(value, str):
        # an enum default (``contiguous_format``) against the object (torch.contiguous_format)
        return str(value).rpartition(".")[2] == default
    default = _as_pytorch_value(arg, default)  # (``int[2] stride=1`` is [1, 1])
    if isinstance(default, list):
        return isinstance(value, list) and len(value) == len(default) and all(
            v.__class__ is d.__class__ and v == d for v, d in zip(value, default))
    return value.__class__ is default.__class__ and value == default


def pytorch_arguments(op: _dispatch.Operator, args: tuple[Any, ...],
                      kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The arguments of a call of the aten operator ``op`` as PyTorch's dispatcher hands them
    to a Python-key handler: values in PyTorch's form (:func:`_as_pytorch_value`), positional
    arguments up to the last one that is not its default, keyword-only ones only when not
    their default. A call the schema does not bind, or of another namespace, is handed as
    given."""
    if op.namespace != "aten":
        return args, kwargs
    schema = op.schema
    try:
        bound = schema.bind(args, kwargs)
    except TypeError:
        return args, kwargs
    positional: list[Any] = []
    keywords: dict[str, Any] = {}
    last = 0  # how many positional arguments are handed: up to the last non-default one
    required = _REQUIRED_IN_PYTORCH.get(op.name, _NONE_REQUIRED)
    factory = op.name.partition(".")[0] not in _PIN_MEMORY_AS_GIVEN
    for arg, value in zip(schema.arguments, bound):
        value = _as_pytorch_value(arg, value, factory)
        handed = arg.name in required or not _is_default(arg, value)
        if arg.kwarg_only:
            if handed:
                keywords[arg.name] = value
            continue
        positional.append(value)
        if handed:
            last = len(positional)
    return tuple(positional[:last]), keywords


define_all()
_dispatch.python_key_arguments = pytorch_arguments
