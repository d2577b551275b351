"""``torch._C.DispatchKey``, ``DispatchKeySet`` and ``_ExcludeDispatchKeyGuard``: PyTorch's
names for the layers of its dispatcher, as Python code that registers kernels spells them
(torchvision: ``_ExcludeDispatchKeyGuard(DispatchKeySet(DispatchKey.AutocastCPU) | ...)``
around a kernel that casts its own inputs).

Plait's dispatcher has its own keys (``torch._core.dispatch``: Python, Autocast, Autograd, the
backend's); the guard maps the two layers a program may step over to what turns them off here:
the Autocast keys of a device type switch autocast off for it, the Autograd keys switch grad
mode off. Excluding any other key has no equivalent, and raises.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from typing import Any

__all__ = ["DispatchKey", "DispatchKeySet", "_ExcludeDispatchKeyGuard"]

# The backend component of the per-backend keys (AutocastCPU, AutogradCUDA...): device type.
_BACKENDS = {"CPU": "cpu", "CUDA": "cuda", "XPU": "xpu", "MPS": "mps", "Meta": "meta",
             "PrivateUse1": "privateuseone", "HPU": "hpu", "MTIA": "mtia"}

DispatchKey = enum.Enum("DispatchKey", [
    "Undefined", *_BACKENDS, "BackendSelect", "Python", "PythonTLSSnapshot",
    "PythonDispatcher", "Functionalize", "ADInplaceOrView", "Conjugate", "Negative",
    "ZeroTensor", "SparseCPU", "SparseCUDA", "FuncTorchBatched", "FuncTorchDynamicLayerFrontMode",
    "FuncTorchDynamicLayerBackMode", "Autograd", "AutogradOther", "AutogradFunctionality",
    "AutogradNestedTensor", *(f"Autograd{name}" for name in _BACKENDS if name != "Meta"),
    "AutogradMeta", "AutocastFunctionality", *(f"Autocast{name}" for name in _BACKENDS
                                               if name != "Meta"),
    "CompositeImplicitAutograd", "CompositeExplicitAutograd",
    "CompositeExplicitAutogradNonFunctional",
], module=__name__)
DispatchKey.__module__ = "torch._C"


class DispatchKeySet:
    """A set of dispatch keys: ``DispatchKeySet(key)``, combined with ``|``, ``&`` and ``-``."""

    __module__ = "torch._C"

    def __init__(self, keys: Any = None) -> None:
        if keys is None:
            self._keys: frozenset[Any] = frozenset()
        elif isinstance(keys, DispatchKey):
            self._keys = frozenset((keys,))
        elif isinstance(keys, DispatchKeySet):
            self._keys = keys._keys
        elif isinstance(keys, Iterable):
            self._keys = frozenset(keys)
        else:
            raise TypeError(f"DispatchKeySet(): expected a DispatchKey, got "
                            f"{type(keys).__name__}")

    def __or__(self, other: DispatchKeySet) -> DispatchKeySet:
        return DispatchKeySet(self._keys | other._keys)

    def __and__(self, other: DispatchKeySet) -> DispatchKeySet:
        return DispatchKeySet(self._keys & other._keys)

    def __sub__(self, other: DispatchKeySet) -> DispatchKeySet:
        return DispatchKeySet(self._keys - other._keys)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DispatchKeySet) and self._keys == other._keys

    def __hash__(self) -> int:
        return hash(self._keys)

    def has(self, key: Any) -> bool:
        """Whether ``key`` is in the set."""
        return key in self._keys

    def empty(self) -> bool:
        return not self._keys

    def __iter__(self) -> Any:
        return iter(sorted(self._keys, key=lambda key: key.value))

    def __repr__(self) -> str:
        return f"DispatchKeySet({', '.join(key.name for key in self)})"


def _device_of(key: Any, prefix: str) -> str | None:
    """The device type of a per-backend key with ``prefix`` ("Autocast", "Autograd")."""
    return _BACKENDS.get(key.name[len(prefix):]) if key.name.startswith(prefix) else None


class _ExcludeDispatchKeyGuard:
    """``with _ExcludeDispatchKeyGuard(keys):`` the block's operator calls skip those layers:
    Autocast keys turn autocast off for their device types (all of them for
    ``AutocastFunctionality``), Autograd keys turn grad mode off."""

    __module__ = "torch._C"

    def __init__(self, keys: DispatchKeySet) -> None:
        if not isinstance(keys, DispatchKeySet):
            keys = DispatchKeySet(keys)
        self._autocast: set[str] = set()
        self._all_autocast = False
        self._autograd = False
        for key in keys:
            device_type = _device_of(key, "Autocast")
            if device_type is not None:
                self._autocast.add(device_type)
            elif key is DispatchKey.AutocastFunctionality:
                self._all_autocast = True
            elif key.name.startswith("Autograd"):
                self._autograd = True
            else:
                raise RuntimeError(f"_ExcludeDispatchKeyGuard: excluding {key.name} has no "
                                   "equivalent in Plait's dispatcher (Autocast* and Autograd* "
                                   "keys are supported)")

    def __enter__(self) -> _ExcludeDispatchKeyGuard:
        from .amp import autocast_mode
        from .autograd import grad_mode

        self._restore_autocast = {
            device_type: autocast_mode.is_autocast_enabled(device_type)
            for device_type in (self._autocast if not self._all_autocast
                                else set(autocast_mode._local.enabled))}
        for device_type in self._restore_autocast:
            autocast_mode.set_autocast_enabled(device_type, False)
        self._grad = grad_mode.set_grad_enabled(False) if self._autograd else None
        if self._grad is not None:
            self._grad.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        from .amp import autocast_mode

        if self._grad is not None:
            self._grad.__exit__(*exc)
        for device_type, enabled in self._restore_autocast.items():
            autocast_mode.set_autocast_enabled(device_type, enabled)
