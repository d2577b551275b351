"""Output metadata of deferred calls, cached: what graph capture asks instead of a fake run.

Capturing a call needs its results' metadata (sizes, strides, dtype, device, which result is an
argument returned again or a view of one). The fake run that computes them costs a full
dispatch per op per call, although the answer depends only on the function, its arguments'
metadata and its other arguments' values. So the first fake run of a call *signature* is
described (:func:`describe`) and kept; later calls with the same signature get fresh fake
tensors built from the description (:func:`rebuild`), as core's eager dispatcher keeps a plan
per call signature (``torch._core.plan``).

A signature (:func:`signature`) holds the function (or Tensor method name), every tensor
argument's dtype, device, sizes, strides, offset and which arguments share storage, the other
arguments by value (hashable ones only: an argument compared by identity makes no signature),
the default dtype and device (factories and type promotion read them), and the devices and
dtypes autocast is enabled for (it changes results' dtypes). A call whose fake
run raises, or whose results cannot be described, is never cached.
"""

from __future__ import annotations

from typing import Any

from torch._core import config as _core_config
from torch._core.storage import UntypedStorage
from torch._core.tensor import Size, Tensor
from torch._subclasses.fake_tensor import FakeTensor, _meta_storage
from torch.amp import autocast_mode as _amp

__all__ = ["PLANS", "describe", "layouts", "rebuild", "signature"]

MAX_PLANS = 8192  # signatures kept (the table is emptied when it fills)
PLANS: dict[Any, Any] = {}


class _NoSignature(Exception):
    """An argument that cannot be keyed by value."""


_VALUE_TYPES = (type(None), bool, int, float, complex, str, bytes, type(Ellipsis))


def signature(func: Any, name: str | None, args: Any, kwargs: Any
              ) -> tuple[Any, list[FakeTensor]] | None:
    """(the call's signature, its tensor arguments in order), or None when it has none."""
    tensors: list[FakeTensor] = []
    storages: dict[int, int] = {}
    try:
        dev = _core_config.get_default_device()
        enabled = _amp._local.enabled  # autocast changes a result's dtype
        found = (func, name, _key(args, tensors, storages), _key(kwargs, tensors, storages),
                 _core_config._default_dtype, dev._type, dev._index,
                 tuple(enabled.items()) if enabled else ())
        hash(found)
    except (_NoSignature, TypeError):
        return None
    return found, tensors


def _key(value: Any, tensors: list[FakeTensor], storages: dict[int, int]) -> Any:
    # (module-level and not a closure: a recursive closure is a reference cycle, which would
    # keep the deferred tensors it saw alive until the garbage collector runs)
    t = type(value)
    if t in _VALUE_TYPES:
        return (t, value) if value == value else (t, "nan")
    if isinstance(value, FakeTensor):
        sid = storages.setdefault(id(value._storage), len(storages))
        tensors.append(value)
        dev = value._device  # by its fields: a device hashes in Python
        return ("T", value._dtype, dev._type, dev._index, value._shape, value._stride,
                value._offset, sid)
    if isinstance(value, Tensor):
        raise _NoSignature  # a real tensor: the fake run fakes it (a constant)
    if t is Size:
        return ("S", tuple(value))
    if t is list or t is tuple:
        return (t, tuple([_key(v, tensors, storages) for v in value]))
    if t is dict:
        return (dict, tuple([(k, _key(v, tensors, storages)) for k, v in value.items()]))
    if t is slice:
        return ("slice", _key(value.start, tensors, storages),
                _key(value.stop, tensors, storages), _key(value.step, tensors, storages))
    try:
        hash(value)
    except TypeError:
        raise _NoSignature from None
    if t.__eq__ is object.__eq__ and not t.__module__.startswith("torch"):
        # compared by identity, and not one of torch's singletons (dtype, layout...): the
        # program's own objects, kept alive by a signature otherwise
        raise _NoSignature
    return ("v", t, value)


def layouts(tensors: list[FakeTensor]) -> list[Any]:
    """The tensors' layouts and dtypes (to see whether a fake run changed an argument's)."""
    return [(t._shape, t._stride, t._offset, t._dtype, t._storage) for t in tensors]


_NEW = "new"


def describe(out: Any, tensors: list[FakeTensor]) -> Any:
    """How to build ``out`` again from the tensor arguments, or None."""
    state = _Describe(tensors)
    try:
        return state.one(out)
    except _NoSignature:
        return None


class _Describe:
    """:func:`describe`'s walk over a result (an object, not a recursive closure: see _key)."""

    def __init__(self, tensors: list[FakeTensor]) -> None:
        self.tensors = tensors
        self.arg_of = {id(t): i for i, t in enumerate(tensors)}
        self.storage_of: dict[int, int] = {}
        for i, t in enumerate(tensors):
            self.storage_of.setdefault(id(t._storage), i)
        self.made: dict[int, int] = {}  # id(storage) of a result -> its index among results
        self.count = 0

    def one(self, value: Any) -> Any:
        if isinstance(value, FakeTensor):
            return self.tensor(value)
        t = type(value)
        if t in _VALUE_TYPES or t is Size or not isinstance(value, (list, tuple, Tensor)):
            return ("c", value)
        if t is list or t is tuple:
            return (t, tuple(self.one(v) for v in value))
        raise _NoSignature

    def tensor(self, value: FakeTensor) -> Any:
        tensors = self.tensors
        k = self.arg_of.get(id(value))
        if k is not None:
            return ("arg", k)
        if type(value) is not FakeTensor or value.__dict__.keys() - {"fake_mode"}:
            raise _NoSignature
        base = value._base
        base_ref: Any = None
        if base is not None:
            k = self.arg_of.get(id(base))
            if k is not None:
                base_ref = ("arg", k)
            else:  # a view of a view argument: their common base
                k = next((i for i, t in enumerate(tensors) if t._base is base), None)
                if k is None:
                    raise _NoSignature  # a view of something other than an argument
                base_ref = ("argbase", k)
        sid = id(value._storage)
        alias = self.storage_of.get(sid)
        if alias is not None:
            storage: Any = ("arg", alias)
            vc = "arg" if value._vc is tensors[alias]._vc else None
        elif sid in self.made:
            storage, vc = ("out", self.made[sid]), None
        else:
            storage, vc = (_NEW, value._storage._nbytes), None
        index = self.count
        self.count += 1
        self.made.setdefault(sid, index)
        return ("T", value._shape, value._stride, value._offset, value._dtype, value._device,
                storage, vc, base_ref)


_META_TEMPLATE: list[Any] = []


def _storage(nbytes: int) -> Any:
    """A new meta storage of ``nbytes`` (no allocation: meta storages hold no data)."""
    if not _META_TEMPLATE:
        _META_TEMPLATE.append(_meta_storage(0))
    template = _META_TEMPLATE[0]
    return UntypedStorage._from_handle(template._handle, nbytes, template._device,
                                       template._runtime)


def rebuild(description: Any, tensors: list[FakeTensor], mode: Any) -> Any:
    """Fresh fake results as :func:`describe` saw them, over this call's ``tensors``."""
    return _rebuild(description, tensors, mode, [])


def _rebuild(d: Any, tensors: list[FakeTensor], mode: Any, made: list[FakeTensor]) -> Any:
    kind = d[0]
    if kind == "T":
        _, shape, stride, offset, dtype, device, storage, vc, base_ref = d
        if storage[0] == "arg":
            source = tensors[storage[1]]
            store = source._storage
            counter = source._vc if vc == "arg" else None
        elif storage[0] == "out":
            store, counter = made[storage[1]]._storage, None
        else:
            store, counter = _storage(storage[1]), None
        if base_ref is None:
            base = None
        elif base_ref[0] == "arg":
            base = tensors[base_ref[1]]
        else:
            base = tensors[base_ref[1]]._base
        fake = FakeTensor._make(store, shape, stride, offset, dtype, device, counter, base)
        fake.fake_mode = mode
        made.append(fake)
        return fake
    if kind == "arg":
        return tensors[d[1]]
    if kind == "c":
        return d[1]
    items = [_rebuild(v, tensors, mode, made) for v in d[1]]
    return items if kind is list else tuple(items)


def store(found: Any, description: Any) -> None:
    """Keep ``description`` for the signature ``found``."""
    if len(PLANS) >= MAX_PLANS:
        PLANS.clear()
    PLANS[found] = description
