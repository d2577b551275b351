"""``torch.ops``: attribute access to every defined operator, ``torch.ops.<ns>.<name>``.

``torch.ops.aten`` also answers for the aten operators PyTorch has and Plait does not implement
(the names in ``_core/aten_catalogue.txt``): libraries that override operators on tensor
subclasses name them at import (``{aten._pin_memory.default: ...}``), and must import. Such an
operator is a :class:`MissingOperator`: hashable, named, and raising ``NotImplementedError`` when
called. A name PyTorch does not have raises ``AttributeError``, as in PyTorch.
"""

from __future__ import annotations

import ctypes
import functools
import os
from importlib import resources
from types import ModuleType
from typing import Any

from ._core import dispatch as _dispatch, upcalls


@functools.cache
def _catalogue() -> dict[str, tuple[str, ...]]:
    """PyTorch's aten operator names -> their overload names (read on the first miss)."""
    text = resources.files("torch._core").joinpath("aten_catalogue.txt").read_text()
    rows = (line.split() for line in text.splitlines() if line and not line.startswith("#"))
    return {row[0]: tuple(row[1:]) for row in rows}


class MissingOperator:
    """An aten operator of PyTorch that Plait does not implement: it can be named, compared and
    used as a key; calling it raises ``NotImplementedError``."""

    def __init__(self, name: str, overload: str) -> None:
        self._name = name
        self._overloadname = overload
        plain = name + ("" if overload == "default" else f".{overload}")
        self.name = _dispatch.OperatorName(plain, f"aten::{plain}")  # name() as PyTorch's
        self.__name__ = f"{name}.{overload}"

    @property
    def overloadpacket(self) -> OpOverloadPacket:
        return OpOverloadPacket("aten", self._name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{self.name()} is an operator of PyTorch that Plait does "
                                  "not implement yet")

    def __repr__(self) -> str:
        return f"aten.{self.__name__} (not implemented in Plait)"

    def __str__(self) -> str:
        return f"aten.{self.__name__}"


# PyTorch's class names: ``isinstance(func, torch._ops.OpOverload)`` in __torch_dispatch__
OpOverload = _dispatch.Operator


@functools.cache
def _missing(name: str, overload: str) -> MissingOperator:
    return MissingOperator(name, overload)


class OpOverloadPacket:
    """All overloads of ``ns::name``; calling it runs the default overload."""

    def __init__(self, namespace: str, name: str) -> None:
        self._ns = namespace
        self._name = name
        self.__name__ = name
        # overload -> (the dispatcher's definitions count, operator): generated graph code
        # looks ``torch.ops.aten.add.Tensor`` up at each call
        self._looked_up: dict[str, tuple[int, Any]] = {}

    def _overload(self, overload: str) -> _dispatch.Operator:
        qual = f"{self._ns}::{self._name}" + (f".{overload}" if overload else "")
        op = _dispatch.get(qual)
        if op is None and self._ns == "aten" and (overload or "default") in _catalogue().get(
                self._name, ()):
            return _missing(self._name, overload or "default")
        if op is None:
            raise AttributeError(f"The underlying op of '{self._ns}.{self._name}' has no "
                                 f"overload name '{overload or 'default'}'")
        return op

    @property
    def default(self) -> _dispatch.Operator:
        return self._overload("")

    def overloads(self) -> list[str]:
        prefix = f"{self._ns}::{self._name}"
        own = [("default" if op.qualname == prefix else op.qualname[len(prefix) + 1 :])
               for op in _dispatch.operators(self._ns)
               if op.qualname == prefix or op.qualname.startswith(prefix + ".")]
        if self._ns != "aten":
            return own
        return own + [o for o in _catalogue().get(self._name, ()) if o not in own]

    def __getattr__(self, overload: str) -> _dispatch.Operator:
        if overload.startswith("__"):
            raise AttributeError(overload)
        hit = self._looked_up.get(overload)
        if hit is not None and hit[0] == _dispatch.definitions:
            return hit[1]
        op = self._overload(overload)
        self._looked_up[overload] = (_dispatch.definitions, op)
        return op

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        qual = f"{self._ns}::{self._name}"
        op = _dispatch.get(qual)
        if op is not None:
            # the default overload when the arguments fit it (``aten.sum(x)``), else the one
            # they fit (``aten.sum(x, [0])`` is sum.dim_IntList), as PyTorch resolves them
            try:
                op.schema.bind(args, kwargs)
            except TypeError:
                op = None
        return _dispatch.call(op or self._resolve(args, kwargs), args, kwargs)

    def _resolve(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> _dispatch.Operator:
        """The overload whose schema the arguments fit (a packet without a default overload,
        such as ``aten.add``, is called as PyTorch resolves it: ``Tensor`` before ``Scalar``)."""
        from . import _functions  # noqa: F401  (core's operators are defined on first use)

        candidates = [op for op in _dispatch.operators(self._ns)
                      if op.qualname.startswith(f"{self._ns}::{self._name}.")]
        # strictly first; then a Python number may stand for a tensor (a wrapped scalar)
        for strict in (True, False):
            for op in candidates:
                try:
                    bound = op.schema.bind(args, kwargs)
                except TypeError:
                    continue
                if all(_fits(arg.type, value, strict)
                       for arg, value in zip(op.schema.arguments, bound)):
                    return op
        raise TypeError(f"{self._ns}.{self._name}: no overload takes these arguments "
                        f"(overloads: {', '.join(self.overloads())})")

    def __repr__(self) -> str:
        return f"<OpOverloadPacket(op='{self._ns}.{self._name}')>"

    def __str__(self) -> str:
        return f"{self._ns}.{self._name}"


class _Namespace(ModuleType):
    def __init__(self, name: str) -> None:
        super().__init__(f"torch.ops.{name}")
        self._ns = name
        self._looked_up: dict[str, tuple[int, OpOverloadPacket]] = {}  # (as the packet's)

    def __getattr__(self, name: str) -> OpOverloadPacket:
        if name.startswith("__"):
            raise AttributeError(name)
        hit = self._looked_up.get(name)
        if hit is not None and hit[0] == _dispatch.definitions:
            return hit[1]
        packet = self._find(name)
        self._looked_up[name] = (_dispatch.definitions, packet)
        return packet

    def _find(self, name: str) -> OpOverloadPacket:
        if self._ns in ("aten", "prims"):
            # core's operators are defined when the op surface loads (on first use)
            from . import _functions  # noqa: F401
        # the catalogue (a dict) before the scan of every operator: generated graph code
        # looks ``torch.ops.aten.<name>`` up at each call
        if _dispatch.get(f"{self._ns}::{name}") is None and not (
            self._ns == "aten" and name in _catalogue()) and not any(
            op.qualname.startswith(f"{self._ns}::{name}.") for op in _dispatch.operators(self._ns)
        ):
            raise AttributeError(f"'_OpNamespace' '{self._ns}' object has no attribute '{name}'")
        return _packet(self._ns, name)  # (cached by definitions count: a library's goes away)


def _fits(schema_type: str, value: Any, strict: bool = True) -> bool:
    """Whether ``value`` can be passed as an argument of ``schema_type`` (tensors where the
    schema takes tensors, numbers where it takes numbers; not ``strict``, a number where it
    takes a tensor)."""
    from ._core.tensor import Tensor

    optional = schema_type.endswith("?")
    base = schema_type.rstrip("?")
    if value is None:
        return optional or base in ("Tensor[]",)
    if base == "Tensor":
        return isinstance(value, Tensor) or (not strict and isinstance(value, (int, float)))
    if base in ("Scalar", "float", "int", "bool", "SymInt"):
        return not isinstance(value, Tensor)
    return True


@functools.cache
def _packet(namespace: str, name: str) -> OpOverloadPacket:
    """The one packet of ``namespace::name`` (packets compare and hash by identity)."""
    return OpOverloadPacket(namespace, name)


upcalls.install(op_packet=_packet)


class _Ops(ModuleType):
    """The ``torch.ops`` object; namespaces are created on first access."""

    def __init__(self) -> None:
        super().__init__("torch.ops")
        self._namespaces: dict[str, _Namespace] = {}
        self.loaded_libraries: set[str] = set()

    def load_library(self, path: str | os.PathLike[str]) -> None:
        """Load the shared library at ``path`` into the process (``ctypes.CDLL``), as PyTorch
        does for a library of custom operators; an ``OSError`` if it cannot be loaded.

        Plait's operators are registered from Python (``torch.library``): a library built
        against PyTorch's C++ dispatcher (libtorch, libc10) does not load here, and the
        OSError lets a package that loads one optionally (torchvision's ``_C``) go on
        without it, as it does when its build does not match PyTorch's."""
        resolved = os.path.realpath(os.fspath(path))
        ctypes.CDLL(resolved)
        self.loaded_libraries.add(resolved)

    def __getattr__(self, name: str) -> _Namespace:
        if name.startswith("__"):
            raise AttributeError(name)
        ns = self._namespaces.get(name)
        if ns is None:
            ns = self._namespaces[name] = _Namespace(name)
        return ns


ops = _Ops()
