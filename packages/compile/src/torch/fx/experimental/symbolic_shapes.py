"""``torch.fx.experimental.symbolic_shapes``: the shape environment and the questions code
asks about symbolic sizes (the names libraries import from here).

The environment and the symbolic scalars are core's (``ShapeEnv``, ``torch.SymInt``...); this
module gives them PyTorch's import path and adds the helpers that ask without guarding
(``hint_int``, ``free_symbols``, ``statically_known_true``) beside those that guard
(``guard_int``, ``guard_bool``).
"""

from __future__ import annotations

from typing import Any

import torch
from torch._core.symbolic import ShapeEnv, guard_bool, guard_float, guard_int

__all__ = ["GuardOnDataDependentSymNode", "ShapeEnv", "definitely_false", "definitely_true",
           "free_symbols",
           "guard_bool", "guard_float", "guard_int", "guard_or_false", "guard_or_true",
           "guard_size_oblivious",
           "has_free_symbols", "hint_int", "is_concrete_bool", "is_concrete_int",
           "statically_known_true"]

_SYMBOLIC = (torch.SymInt, torch.SymFloat, torch.SymBool)


class GuardOnDataDependentSymNode(RuntimeError):
    """A trace (``torch.export``) reached Python control flow on a tensor's values, which
    the example inputs' metadata cannot decide (``if x.sum() > 0:``)."""


def _nodes(value: Any) -> list[Any]:
    """The expression nodes inside ``value`` (a symbolic scalar, a tensor's sizes and
    strides, or a list/tuple of those)."""
    if isinstance(value, _SYMBOLIC):
        return [value.node]
    if isinstance(value, torch.Tensor):
        return [n for s in (*value.shape, *value.stride()) for n in _nodes(s)]
    if isinstance(value, (list, tuple)):
        return [n for v in value for n in _nodes(v)]
    return []


def free_symbols(value: Any) -> set[str]:
    """The names of the symbols ``value`` depends on."""
    return {name for node in _nodes(value) for name in node.free_symbols}


def has_free_symbols(value: Any) -> bool:
    """Whether ``value`` depends on any symbol."""
    return bool(free_symbols(value))


def is_concrete_int(a: Any) -> bool:
    """Whether ``a`` is an int, or a SymInt that is a constant."""
    if isinstance(a, torch.SymInt):
        return a.node.op == "constant"
    return isinstance(a, int) and not isinstance(a, bool)


def is_concrete_bool(a: Any) -> bool:
    """Whether ``a`` is a bool, or a SymBool that is a constant."""
    if isinstance(a, torch.SymBool):
        return a.node.op == "constant"
    return isinstance(a, bool)


def hint_int(a: Any) -> int:
    """The value ``a`` has for the sizes the trace started from, without a guard."""
    return int(a.node.hint) if isinstance(a, _SYMBOLIC) else int(a)


# comparisons of an expression with itself: their value whatever the symbols are
_SELF_COMPARISON = {"eq": True, "le": True, "ge": True, "ne": False, "lt": False, "gt": False}


def _known_value(node: Any) -> bool | None:
    """The value of a bool expression when it holds whatever the symbols are (a constant, or
    a comparison of one expression with itself: ``s0 == s0``), else None."""
    if node.op == "constant":
        return bool(node.hint)
    if node.op in _SELF_COMPARISON and len(node.args) == 2 and \
            str(node.args[0]) == str(node.args[1]):
        return _SELF_COMPARISON[node.op]
    return None


def statically_known_true(x: Any) -> bool:
    """True only when ``x`` is true whatever the symbols are; never guards."""
    if isinstance(x, torch.SymBool):
        return _known_value(x.node) is True
    return bool(x)


def definitely_true(a: Any) -> bool:
    """As :func:`statically_known_true`."""
    return statically_known_true(a)


def definitely_false(a: Any) -> bool:
    """True only when ``a`` is false whatever the symbols are; never guards."""
    if isinstance(a, torch.SymBool):
        return _known_value(a.node) is False
    return not bool(a)


def guard_size_oblivious(expr: Any) -> bool:
    """Decide ``expr`` (recording a guard); sizes are not treated specially here."""
    return guard_bool(expr)


def guard_or_false(a: Any) -> bool:
    """``a``'s value, guarded (every symbol here has a value, so none is data-dependent)."""
    return bool(guard_bool(a)) if isinstance(a, torch.SymBool) else bool(a)


def guard_or_true(a: Any) -> bool:
    """``a``'s value, guarded (every symbol here has a value, so none is data-dependent)."""
    return bool(guard_bool(a)) if isinstance(a, torch.SymBool) else bool(a)
