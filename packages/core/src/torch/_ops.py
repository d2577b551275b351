"""``torch.ops``: attribute access to every defined operator, ``torch.ops.<ns>.<name>``."""

from __future__ import annotations

from types import ModuleType
from typing import Any

from ._core import dispatch as _dispatch


class OpOverloadPacket:
    """All overloads of ``ns::name``; calling it runs the default overload."""

    def __init__(self, namespace: str, name: str) -> None:
        self._ns = namespace
        self._name = name
        self.__name__ = name

    def _overload(self, overload: str) -> _dispatch.Operator:
        qual = f"{self._ns}::{self._name}" + (f".{overload}" if overload else "")
        op = _dispatch.get(qual)
        if op is None:
            raise AttributeError(f"The underlying op of '{self._ns}.{self._name}' has no "
                                 f"overload name '{overload or 'default'}'")
        return op

    @property
    def default(self) -> _dispatch.Operator:
        return self._overload("")

    def overloads(self) -> list[str]:
        prefix = f"{self._ns}::{self._name}"
        return [("default" if op.qualname == prefix else op.qualname[len(prefix) + 1 :])
                for op in _dispatch.operators(self._ns)
                if op.qualname == prefix or op.qualname.startswith(prefix + ".")]

    def __getattr__(self, overload: str) -> _dispatch.Operator:
        if overload.startswith("__"):
            raise AttributeError(overload)
        return self._overload(overload)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _dispatch.call(self.default, args, kwargs)

    def __repr__(self) -> str:
        return f"<OpOverloadPacket(op='{self._ns}.{self._name}')>"


class _Namespace(ModuleType):
    def __init__(self, name: str) -> None:
        super().__init__(f"torch.ops.{name}")
        self._ns = name

    def __getattr__(self, name: str) -> OpOverloadPacket:
        if name.startswith("__"):
            raise AttributeError(name)
        if self._ns in ("aten", "prims"):
            # core's operators are defined when the op surface loads (on first use)
            from . import _functions  # noqa: F401
        if _dispatch.get(f"{self._ns}::{name}") is None and not any(
            op.qualname.startswith(f"{self._ns}::{name}.") for op in _dispatch.operators(self._ns)
        ):
            raise AttributeError(f"'_OpNamespace' '{self._ns}' object has no attribute '{name}'")
        packet = OpOverloadPacket(self._ns, name)
        return packet


class _Ops(ModuleType):
    """The ``torch.ops`` object; namespaces are created on first access."""

    def __init__(self) -> None:
        super().__init__("torch.ops")
        self._namespaces: dict[str, _Namespace] = {}

    def __getattr__(self, name: str) -> _Namespace:
        if name.startswith("__"):
            raise AttributeError(name)
        ns = self._namespaces.get(name)
        if ns is None:
            ns = self._namespaces[name] = _Namespace(name)
        return ns


ops = _Ops()
