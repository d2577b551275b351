"""The unpickler ``torch.load(weights_only=True)`` uses: a pickle machine that resolves only an
allowlist of globals (containers, primitive types, dtypes, devices, ``torch.Size``, storage type
tags and the tensor rebuild functions) plus those the user declared safe, and refuses every other
global *before* anything can call it, with a :class:`pickle.UnpicklingError` that says how to
allow it.

Resolving names is not enough: a pickle also *calls* what it resolved (REDUCE, NEWOBJ) and *sets
attributes* on what it built (BUILD, whose slot-state form is a ``setattr`` on any object). So
this machine is Python's own pickle machine with those opcodes replaced, as PyTorch's
weights-only unpickler has its own:

- REDUCE and NEWOBJ call only allowlisted callables; storage classes and ``torch.Tensor`` are
  *tags* (they name a storage type, or a tensor class to ``_rebuild_from_type_v2``) and are never
  called, so a storage only ever comes from a record of the archive, with the record's bytes;
- BUILD sets state only on tensors (their user attributes: see ``torch._utils._set_state``),
  ``OrderedDict``/``Counter`` and instances of user-allowed classes; never on a dtype, a device,
  a storage, a class or a function;
- APPEND(S), SETITEM(S) and ADDITEMS only fill lists, dicts and sets;
- INST, OBJ and EXT (protocol 0/1 object creation, the copyreg extension registry) are refused;
- BYTEARRAY8 reads its bytes before allocating (Python's allocates the length the pickle states).

Modules are never imported on a pickle's behalf.
"""

from __future__ import annotations

import codecs
import collections
import pickle
import struct
import threading
from typing import Any

from . import _quantized, _utils
from ._core import dtype as _dtype, layout as _layout, storage as _storage
from ._core.device import device as _device
from ._core.tensor import Size, Tensor

UNSAFE_MESSAGE = (
    "Weights only load failed. In PyTorch 2.6, we changed the default value of the "
    "`weights_only` argument in `torch.load` from `False` to `True`. Re-running `torch.load` "
    "with `weights_only` set to `False` will likely succeed, but it can result in arbitrary "
    "code execution. Do it only if you got the file from a trusted source."
)

# Python 2 names that protocol 0-2 pickles carry (the C pickler writes ``__builtin__.set``).
_MODULE_RENAMES = {"__builtin__": "builtins", "copy_reg": "copyreg"}

_user_lock = threading.Lock()
_user_globals: dict[str, Any] = {}  # "module.qualname" -> object (add_safe_globals)
_context_globals = threading.local()  # stack of dicts pushed by safe_globals()


def _encode(obj: Any, encoding: str = "utf-8", errors: str = "strict") -> bytes:
    """``_codecs.encode`` as protocol-2 pickles use it for ``bytes``: strings only."""
    if not isinstance(obj, str) or not isinstance(encoding, str):
        raise pickle.UnpicklingError("_codecs.encode is only allowed on str")
    return codecs.encode(obj, encoding, errors)


def _bytearray(*args: Any) -> bytearray:
    if args and not isinstance(args[0], (bytes, str, list)):
        raise pickle.UnpicklingError("bytearray is only allowed from bytes, str or a list")
    return bytearray(*args)


def _get_layout(name: str) -> Any:
    from .serialization import _get_layout as get_layout

    return get_layout(name)


def _builtin_allowlist() -> dict[str, Any]:
    allowed: dict[str, Any] = {
        "collections.OrderedDict": collections.OrderedDict,
        "collections.Counter": collections.Counter,
        "builtins.set": set,
        "builtins.complex": complex,
        "builtins.bytearray": _bytearray,
        "_codecs.encode": _encode,
        "torch.Size": Size,
        "torch.device": _device,
        "torch.Tensor": Tensor,
        "torch.UntypedStorage": _storage.UntypedStorage,
        "torch.storage.UntypedStorage": _storage.UntypedStorage,
        "torch.TypedStorage": _utils.TypedStorage,
        "torch.storage.TypedStorage": _utils.TypedStorage,
        "torch.serialization._get_layout": _get_layout,
        "torch._utils._rebuild_tensor": _utils._rebuild_tensor,
        "torch._utils._rebuild_tensor_v2": _utils._rebuild_tensor_v2,
        "torch._utils._rebuild_tensor_v3": _utils._rebuild_tensor_v3,
        "torch._utils._rebuild_parameter": _utils._rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": _utils._rebuild_parameter_with_state,
        "torch._utils._rebuild_meta_tensor_no_storage": _utils._rebuild_meta_tensor_no_storage,
        "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
        "torch._utils._rebuild_sparse_tensor": _utils._rebuild_sparse_tensor,
        "torch._utils._rebuild_qtensor": _utils._rebuild_qtensor,
    }
    for name, dt in _dtype.DTYPES.items():
        allowed[f"torch.{name}"] = dt
    for name, dt in _dtype.ALIASES.items():
        allowed[f"torch.{name}"] = dt
    for name, scheme in _quantized.QSCHEMES.items():
        allowed[f"torch.{name}"] = scheme
    for dt in _quantized.QUANTIZED_DTYPES:  # (a dynamic quantized Linear saves its dtype)
        allowed[repr(dt)] = dt
    for name in ("strided", "sparse_coo"):
        allowed[f"torch.{name}"] = getattr(_layout, name)
    for name, cls in _utils.STORAGE_TYPES.items():
        allowed[f"torch.{name}"] = cls
    return allowed


def _rebuild_from_type_v2(func: Any, new_type: Any, args: tuple[Any, ...], state: Any) -> Any:
    """``_rebuild_from_type_v2`` restricted to the tensor rebuild functions and tensor types."""
    if func not in _TENSOR_REBUILDERS or not (
            isinstance(new_type, type) and issubclass(new_type, Tensor)):
        raise pickle.UnpicklingError(
            f"_rebuild_from_type_v2 with {_utils.shown(func)} and {_utils.shown(new_type)} is "
            f"not allowed")
    if state is not None and not isinstance(state, (dict, tuple)):
        raise pickle.UnpicklingError("tensor state must be a dict")
    return _utils._rebuild_from_type_v2(func, new_type, args, state)


_ALLOWED = _builtin_allowlist()
_TENSOR_REBUILDERS = (
    _utils._rebuild_tensor, _utils._rebuild_tensor_v2, _utils._rebuild_tensor_v3,
    _utils._rebuild_parameter, _utils._rebuild_parameter_with_state,
    _utils._rebuild_meta_tensor_no_storage,
)
# Allowed names that are tags, never called: a storage is made from an archive record only,
# a tensor by a rebuild function only (torch.Tensor(n) would hand out uninitialised memory).
_TAGS = frozenset(id(obj) for obj in (
    Tensor, _storage.UntypedStorage, _utils.TypedStorage, *_utils.STORAGE_TYPES.values()))
_TORCH_LAZY = {"torch.nn.parameter.Parameter", "torch.nn.Parameter"}


def _qualified_name(obj: Any) -> str:
    return f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', obj.__name__)}"


def add_user_globals(entries: list[Any]) -> None:
    """Register ``entries`` (objects, or ``(object, "module.name")`` pairs) as safe."""
    with _user_lock:
        _user_globals.update(_entries_to_dict(entries))


def _entries_to_dict(entries: list[Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for entry in entries:
        if isinstance(entry, tuple):
            if len(entry) != 2 or not isinstance(entry[1], str):
                raise ValueError("a safe global given as a tuple must be (object, 'module.name')")
            out[entry[1]] = entry[0]
        else:
            out[_qualified_name(entry)] = entry
    return out


def user_globals() -> list[Any]:
    """The objects (or ``(object, name)`` pairs) registered with ``add_safe_globals``."""
    with _user_lock:
        return [obj if _qualified_name(obj) == name else (obj, name)
                for name, obj in _user_globals.items()]


def clear_user_globals() -> None:
    with _user_lock:
        _user_globals.clear()


def push_context(entries: list[Any]) -> None:
    stack = getattr(_context_globals, "stack", None)
    if stack is None:
        stack = _context_globals.stack = []
    stack.append(_entries_to_dict(entries))


def pop_context() -> None:
    _context_globals.stack.pop()


def lookup(full_name: str) -> Any:
    """The object an allowed global names, or ``None`` when it is not allowed."""
    obj = _ALLOWED.get(full_name)
    if obj is not None:
        return obj
    for scope in reversed(getattr(_context_globals, "stack", None) or []):
        if full_name in scope:
            return scope[full_name]
    with _user_lock:
        if full_name in _user_globals:
            return _user_globals[full_name]
    if full_name in _TORCH_LAZY:
        param = _utils._parameter_class()
        if param is not None:
            return param
    return None


def normalise_name(module: str, name: str) -> str:
    return f"{_MODULE_RENAMES.get(module, module)}.{name}"


def refusal(full_name: str) -> pickle.UnpicklingError:
    """The error for a global that is not allowed: what happened and how to allow it."""
    short = full_name.rpartition(".")[2]
    return pickle.UnpicklingError(
        f"{UNSAFE_MESSAGE}\n\n"
        f"Unsupported global: GLOBAL {full_name} was not an allowed global by default. Please "
        f"use `torch.serialization.add_safe_globals([{short}])` or the "
        f"`torch.serialization.safe_globals([{short}])` context manager to allowlist this "
        f"global if you trust this class/function (it was not imported or called).\n\n"
        f"Check the documentation of torch.load to learn more about types accepted by default "
        f"with weights_only https://pytorch.org/docs/stable/generated/torch.load.html.")


def _may_call(func: Any) -> bool:
    """Whether a pickle may call ``func`` (it reached the stack through ``find_class``, so it is
    allowed; tags are not callables)."""
    return callable(func) and id(func) not in _TAGS


def _user_types() -> tuple[type, ...]:
    scopes = [*(getattr(_context_globals, "stack", None) or []), _user_globals]
    return tuple(obj for scope in scopes for obj in scope.values() if isinstance(obj, type))


def _build(inst: Any, state: Any) -> None:
    """The BUILD opcode: set ``state`` on ``inst`` where that is safe (module docstring)."""
    if isinstance(inst, Tensor):
        _utils._set_state(inst, state)
    elif type(inst) in (collections.OrderedDict, collections.Counter):
        if not isinstance(state, dict):
            raise pickle.UnpicklingError(f"invalid state for {type(inst).__name__}: "
                                         f"{_utils.shown(state)}")
        inst.__dict__.update(state)
    elif isinstance(inst, _user_types()) and not isinstance(inst, type):
        setstate = getattr(inst, "__setstate__", None)
        if setstate is not None:
            setstate(state)
            return
        dict_state, slot_state = state if isinstance(state, tuple) else (state, None)
        if dict_state:
            inst.__dict__.update(dict_state)
        for key, value in (slot_state or {}).items():
            setattr(inst, key, value)
    else:
        raise pickle.UnpicklingError(
            f"Can only build Tensor, Parameter, OrderedDict or types allowlisted via "
            f"add_safe_globals, but got {type(inst).__name__}")


def _refuse_opcode(self: Unpickler) -> None:
    raise pickle.UnpicklingError("Unsupported operand in weights-only checkpoint: the pickle "
                                 "uses INST, OBJ or EXT, which torch.save never writes")


class Unpickler(pickle._Unpickler):  # type: ignore[name-defined,misc]
    """A pickle machine that resolves only allowed globals and calls, builds and fills only
    what is safe (see the module docstring)."""

    dispatch = dict(pickle._Unpickler.dispatch)  # type: ignore[attr-defined]

    def find_class(self, module: str, name: str) -> Any:
        if not isinstance(module, str) or not isinstance(name, str):
            raise pickle.UnpicklingError("STACK_GLOBAL requires str")
        full_name = normalise_name(module, name)
        obj = lookup(full_name)
        if obj is None:
            raise refusal(full_name)
        return obj

    def load_reduce(self) -> None:
        stack = self.stack
        args = stack.pop()
        func = stack[-1]
        if not _may_call(func) or not isinstance(args, tuple):
            raise pickle.UnpicklingError(f"the checkpoint calls {_utils.shown(func)}, which is "
                                         f"not allowed (only allowlisted functions and classes "
                                         f"are)")
        stack[-1] = func(*args)

    def load_newobj(self) -> None:
        args = self.stack.pop()
        cls = self.stack.pop()
        self.append(self._new(cls, args, {}))

    def load_newobj_ex(self) -> None:
        kwargs = self.stack.pop()
        args = self.stack.pop()
        cls = self.stack.pop()
        if not isinstance(kwargs, dict):
            raise pickle.UnpicklingError("NEWOBJ_EX keyword arguments must be a dict")
        self.append(self._new(cls, args, kwargs))

    @staticmethod
    def _new(cls: Any, args: Any, kwargs: dict[str, Any]) -> Any:
        if not isinstance(cls, type) or not _may_call(cls) or not isinstance(args, tuple):
            raise pickle.UnpicklingError(f"the checkpoint creates {_utils.shown(cls)}, which is "
                                         f"not allowed")
        if issubclass(cls, Tensor):  # nn.Parameter: through its constructor, as PyTorch
            return cls(*args, **kwargs)
        return cls.__new__(cls, *args, **kwargs)

    def load_build(self) -> None:
        state = self.stack.pop()
        _build(self.stack[-1], state)

    def load_append(self) -> None:
        value = self.stack.pop()
        self._list().append(value)

    def _list(self) -> list[Any]:
        target = self.stack[-1]
        if not isinstance(target, list):
            raise pickle.UnpicklingError(f"can only append to a list, not "
                                         f"{type(target).__name__}")
        return target

    def load_appends(self) -> None:
        items = self.pop_mark()
        self._list().extend(items)

    def load_setitem(self) -> None:
        value = self.stack.pop()
        key = self.stack.pop()
        self._dict()[key] = value

    def load_setitems(self) -> None:
        items = self.pop_mark()
        target = self._dict()
        if len(items) % 2:
            raise pickle.UnpicklingError("SETITEMS needs key/value pairs")
        for i in range(0, len(items), 2):
            target[items[i]] = items[i + 1]

    def _dict(self) -> dict[Any, Any]:
        target = self.stack[-1]
        if not isinstance(target, dict):
            raise pickle.UnpicklingError(f"can only set items of a dict, not "
                                         f"{type(target).__name__}")
        return target

    def load_additems(self) -> None:
        items = self.pop_mark()
        target = self.stack[-1]
        if not isinstance(target, set):
            raise pickle.UnpicklingError(f"can only add items to a set, not "
                                         f"{type(target).__name__}")
        target.update(items)

    def load_bytearray8(self) -> None:
        # Python's machine allocates the length the pickle states before reading: a few bytes
        # could ask for terabytes. Read first (never more than the pickle holds), then copy.
        (size,) = struct.unpack("<Q", self.read(8))
        data = self.read(size)
        if len(data) != size:
            raise pickle.UnpicklingError("BYTEARRAY8 runs past the end of the pickle")
        self.append(bytearray(data))

    for _op, _method in (
            (pickle.BYTEARRAY8, load_bytearray8), (pickle.REDUCE, load_reduce),
            (pickle.NEWOBJ, load_newobj),
            (pickle.NEWOBJ_EX, load_newobj_ex), (pickle.BUILD, load_build),
            (pickle.APPEND, load_append), (pickle.APPENDS, load_appends),
            (pickle.SETITEM, load_setitem), (pickle.SETITEMS, load_setitems),
            (pickle.ADDITEMS, load_additems), (pickle.INST, _refuse_opcode),
            (pickle.OBJ, _refuse_opcode), (pickle.EXT1, _refuse_opcode),
            (pickle.EXT2, _refuse_opcode), (pickle.EXT4, _refuse_opcode)):
        dispatch[_op[0]] = _method
    del _op, _method
