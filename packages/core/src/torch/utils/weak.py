"""``torch.utils.weak``: weak references and weak-keyed dictionaries that compare by identity.

A tensor cannot be a key of ``weakref.WeakKeyDictionary``: its ``==`` is elementwise and its
hash is its identity, so lookups must compare by identity too. :class:`WeakIdRef` is a weak
reference that hashes and compares as the identity of its referent (while it lives), and
:class:`WeakIdKeyDictionary` a dictionary whose keys are held through such references: an
entry goes away when its key object is collected.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from typing import Any

from torch._core.tensor import Tensor

__all__ = ["TensorWeakRef", "WeakIdKeyDictionary", "WeakIdRef", "WeakTensorKeyDictionary"]


class WeakIdRef(weakref.ref):  # type: ignore[type-arg]
    """A weak reference to ``key`` that hashes and compares by the referent's identity.

    Two references are equal when they refer to the same live object (or are the same
    reference); the hash is taken from the object when the reference is made, so it stays
    valid after the object dies (a dead entry can still be found and removed)."""

    __slots__ = ("_id",)

    def __new__(cls, key: Any, callback: Callable[[Any], Any] | None = None) -> WeakIdRef:
        return super().__new__(cls, key, callback)

    def __init__(self, key: Any, callback: Callable[[Any], Any] | None = None) -> None:
        super().__init__(key, callback)
        self._id = id(key)

    def __hash__(self) -> int:
        return self._id

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, WeakIdRef):
            return NotImplemented
        a, b = self(), other()
        if a is not None and b is not None:
            return a is b
        return self is other

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal


class _IdKey:
    """A lookup key standing for a live object: equal to the :class:`WeakIdRef` of the same
    object, without making a weak reference (``key in d`` on objects that cannot be weakly
    referenced then answers False instead of raising)."""

    __slots__ = ("obj",)

    def __init__(self, obj: Any) -> None:
        self.obj = obj

    def __hash__(self) -> int:
        return id(self.obj)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, WeakIdRef):
            return other() is self.obj
        return isinstance(other, _IdKey) and other.obj is self.obj


class WeakIdKeyDictionary(MutableMapping[Any, Any]):
    """A mapping from objects, compared by identity and held weakly, to values: an entry is
    dropped when its key object is garbage-collected (``weakref.WeakKeyDictionary`` with
    identity in place of ``==``, so tensors can be keys)."""

    def __init__(self, dict: Mapping[Any, Any] | None = None,
                 ref_type: type[WeakIdRef] = WeakIdRef) -> None:
        self.data: dict[Any, Any] = {}
        self.ref_type = ref_type
        self_ref = weakref.ref(self)

        def remove(k: WeakIdRef) -> None:
            owner = self_ref()
            if owner is not None:
                owner.data.pop(k, None)

        self._remove = remove
        if dict is not None:
            self.update(dict)

    def __getitem__(self, key: Any) -> Any:
        return self.data[_IdKey(key)]

    def __setitem__(self, key: Any, value: Any) -> None:
        self.data[self.ref_type(key, self._remove)] = value

    def __delitem__(self, key: Any) -> None:
        del self.data[_IdKey(key)]

    def __contains__(self, key: object) -> bool:
        return _IdKey(key) in self.data

    def __len__(self) -> int:
        return sum(1 for ref in list(self.data) if ref() is not None)

    def __iter__(self) -> Iterator[Any]:
        for ref in list(self.data):
            obj = ref()
            if obj is not None:
                yield obj

    def __repr__(self) -> str:
        return f"<{type(self).__name__} at {id(self):#x}>"

    def get(self, key: Any, default: Any = None) -> Any:
        """The value of ``key``, or ``default``."""
        return self.data.get(_IdKey(key), default)

    def copy(self) -> WeakIdKeyDictionary:
        """A new dictionary with the same (weakly held) keys and values."""
        new = type(self)(ref_type=self.ref_type)
        for key, value in self.items():
            new[key] = value
        return new

    __copy__ = copy

    def keyrefs(self) -> list[WeakIdRef]:
        """The weak references to the keys."""
        return list(self.data)


WeakTensorKeyDictionary = WeakIdKeyDictionary


class TensorWeakRef:
    """A weak reference to a tensor whose call answers the tensor, or None once it is
    collected."""

    __slots__ = ("ref",)

    def __init__(self, tensor: Tensor) -> None:
        if not isinstance(tensor, Tensor):
            raise TypeError(f"TensorWeakRef expects a Tensor, got {type(tensor).__name__}")
        self.ref = weakref.ref(tensor)

    def __call__(self) -> Tensor | None:
        return self.ref()
