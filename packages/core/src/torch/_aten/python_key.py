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
# dispatcher hands every argument without a default. (The flash attention backward's attn_mask
# reaches PyTorch's dispatcher from its autograd code as an undefined tensor, not the default
# None, so a mode is handed attn_mask=None.)
_REQUIRED_IN_PYTORCH: dict[str, frozenset[str]] = {
    "_scaled_dot_product_flash_attention_for_cpu_backward": frozenset(("attn_mask",)),
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


def _is_default(value: Any, default: Any) -> bool:
    """Whether ``value`` (in PyTorch's form) is the ``default`` (in PyTorch's form too), as
    PyTorch compares them: of the same kind and equal (``alpha=1.0`` is not the default ``1``;
    a tensor never is)."""
    if default is None:
        return value is None
    if value.__class__ is list:
        return default.__class__ is list and len(value) == len(default) and all(
            v.__class__ is d.__class__ and v == d for v, d in zip(value, default))
    if isinstance(value, Tensor):
        return False
    if default.__class__ is str and value.__class__ is not str:
        # an enum default (``contiguous_format``) against the object (torch.contiguous_format)
        return str(value).rpartition(".")[2] == default
    return value.__class__ is default.__class__ and value == default


_NO_DEFAULT: Any = object()
# Per argument: (name, keyword-only, list length (0: any, -1: not a list), a single value
# stands for the list, an int becomes a float, pin_memory of a factory, the default in
# PyTorch's form or _NO_DEFAULT, handed even when default)
_ArgPlan = tuple[str, bool, int, bool, bool, bool, Any, bool]
_PLANS: dict[_dispatch.Operator, tuple[int, tuple[_ArgPlan, ...]] | None] = {}


def _plan_of(op: _dispatch.Operator) -> tuple[int, tuple[_ArgPlan, ...]] | None:
    """How a call of ``op`` is put in PyTorch's form, decided once per operator: (the number
    of positional arguments, one plan per argument), or None for another namespace."""
    if op in _PLANS:
        return _PLANS[op]
    plan = None
    if op.namespace == "aten":
        required = _REQUIRED_IN_PYTORCH.get(op.name, _NONE_REQUIRED)
        factory = op.name.partition(".")[0] not in _PIN_MEMORY_AS_GIVEN
        rows = []
        for arg in op.schema.arguments:
            listed = _LIST_TYPE.match(arg.type)
            default = _NO_DEFAULT
            if arg.has_default:
                default = arg.default if arg.default is None or isinstance(arg.default, str) \
                    else _as_pytorch_value(arg, arg.default)  # (``int[2] stride=1``: [1, 1])
            rows.append((arg.name, arg.kwarg_only,
                         -1 if listed is None else int(listed["size"] or 0),
                         listed is not None and listed["item"] in _BROADCAST_ITEMS,
                         listed is None and arg.type.rstrip("?") == "float",
                         factory and arg.name == "pin_memory" and arg.type == "bool?",
                         default, arg.name in required))
        plan = (sum(not arg.kwarg_only for arg in op.schema.arguments), tuple(rows))
    _PLANS[op] = plan
    return plan


def pytorch_arguments(op: _dispatch.Operator, args: tuple[Any, ...],
                      kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The arguments of a call of the aten operator ``op`` as PyTorch's dispatcher hands them
    to a Python-key handler: values in PyTorch's form (:func:`_as_pytorch_value`), positional
    arguments up to the last one that is not its default, keyword-only ones only when not
    their default. A call the schema does not bind, or of another namespace, is handed as
    given."""
    plan = _PLANS[op] if op in _PLANS else _plan_of(op)
    if plan is None or len(args) > plan[0]:
        return args, kwargs
    n = len(args)
    positional: list[Any] = []
    keywords: dict[str, Any] = {}
    last = 0  # how many positional arguments are handed: up to the last non-default one
    taken = 0  # keyword arguments bound
    for i, (name, kwarg_only, size, broadcast, to_float, pin, default, always) in \
            enumerate(plan[1]):
        if i < n and not kwarg_only:
            value = args[i]
        elif kwargs and name in kwargs:
            value = kwargs[name]
            taken += 1
        elif default is _NO_DEFAULT:
            return args, kwargs  # a required argument missing: the kernel raises
        else:
            value = default
        if size >= 0:
            if isinstance(value, tuple):
                value = list(value)
            elif broadcast and value is not None and not isinstance(value, (list, Tensor)):
                value = [value] * (size or 1)
        elif to_float:
            if value.__class__ is int:
                value = float(value)
        elif pin and value is None:
            value = False
        handed = always or default is _NO_DEFAULT or not _is_default(value, default)
        if kwarg_only:
            if handed:
                keywords[name] = value
        else:
            positional.append(value)
            if handed:
                last = len(positional)
    if kwargs and taken != len(kwargs):
        return args, kwargs  # an unknown keyword: the kernel raises
    return tuple(positional[:last]), keywords


define_all()
_dispatch.python_key_arguments = pytorch_arguments
