"""Names: unique identifiers for nodes and globals, and importable paths of functions.

The generated code must read as the program a person would write (``torch.relu(x)``,
``torch.ops.aten.mm.default(a, b)``), so a callable is named by the shortest public path that
leads back to the very same object; one with no such path becomes a global of the generated
code under a name of its own.
"""

from __future__ import annotations

import builtins
import keyword
import re
import sys
from typing import Any

__all__ = ["Namespace", "qualified_name", "snake_case"]

_ILLEGAL_CHAR = re.compile(r"[^0-9a-zA-Z_]+")
_NUMBERED = re.compile(r"(.*)_(\d+)$")
_CAMEL = re.compile(r"(?<=[a-z0-9])([A-Z])")


def snake_case(name: str) -> str:
    """``MyModule`` -> ``my_module`` (how node names are derived from class names)."""
    return _CAMEL.sub(r"_\1", name).lower()


def _operator_path(obj: Any) -> str | None:
    """``torch.ops.aten.add.Tensor`` for an aten operator overload."""
    qual = getattr(obj, "qualname", None)
    if not isinstance(qual, str) or "::" not in qual or not hasattr(obj, "overloadpacket"):
        return None
    namespace, _, name = qual.partition("::")
    base, _, overload = name.partition(".")
    return f"torch.ops.{namespace}.{base}.{overload or 'default'}"


def _resolve(path: str) -> Any:
    head, *rest = path.split(".")
    obj: Any = sys.modules.get(head)
    if obj is None:
        return None
    for part in rest:
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


# Public homes tried first, so that ``torch.relu`` is written rather than the module its
# implementation happens to live in.
_PUBLIC_HOMES = ("torch", "torch.nn.functional", "torch.Tensor", "torch.linalg",
                 "torch.special", "torch.fft", "math", "operator")


def qualified_name(obj: Any) -> str | None:
    """The dotted path that names ``obj`` from an importable module, or None."""
    op_path = _operator_path(obj)
    if op_path is not None:
        return op_path
    name = getattr(obj, "__name__", None)
    if not isinstance(name, str):
        return None
    if getattr(builtins, name, None) is obj:
        return name
    for home in _PUBLIC_HOMES:
        if home in sys.modules or "." not in home:
            if _resolve(f"{home}.{name}") is obj:
                return f"{home}.{name}"
    module = getattr(obj, "__module__", None)
    qual = getattr(obj, "__qualname__", name)
    if isinstance(module, str) and isinstance(qual, str) and "<" not in qual:
        if _resolve(f"{module}.{qual}") is obj:
            return f"{module}.{qual}"
    return None


class Namespace:
    """Hands out identifiers that are unique, legal Python and not a keyword or a builtin.

    ``create_name("add")`` gives ``add``, then ``add_1``, ``add_2``...; a candidate is first
    made an identifier (``layer1.conv`` -> ``layer1_conv``, ``0`` -> ``_0``).
    """

    def __init__(self, reserved: tuple[str, ...] = ()) -> None:
        self._used: set[str] = set(reserved)
        self._next_index: dict[str, int] = {}
        self._by_object: dict[int, str] = {}

    def create_name(self, candidate: str, obj: Any = None) -> str:
        """A fresh identifier from ``candidate``; the same ``obj`` gets the same name."""
        if obj is not None and id(obj) in self._by_object:
            return self._by_object[id(obj)]
        candidate = _ILLEGAL_CHAR.sub("_", candidate) or "_unnamed"
        if candidate[0].isdigit():
            candidate = f"_{candidate}"
        match = _NUMBERED.match(candidate)
        if match is None:
            base, num = candidate, None
        else:
            base, num = match.group(1), int(match.group(2))
        name = candidate if num is None else f"{base}_{num}"
        if num is None:
            num = self._next_index.get(base, 0)
        while name in self._used or self._illegal(name):
            num += 1
            name = f"{base}_{num}"
        self._next_index[base] = num
        self._used.add(name)
        if obj is not None:
            self._by_object[id(obj)] = name
        return name

    def associate(self, name: str, obj: Any) -> None:
        """Record that ``obj`` is called ``name`` (already taken by the caller)."""
        self._used.add(name)
        self._by_object[id(obj)] = name

    def release(self, name: str) -> None:
        """Let ``name`` be handed out again (its node was erased)."""
        self._used.discard(name)

    def used(self, name: str) -> bool:
        return name in self._used

    @staticmethod
    def _illegal(name: str) -> bool:
        return keyword.iskeyword(name) or hasattr(builtins, name) or name == "self"
