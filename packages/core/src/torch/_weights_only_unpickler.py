"""The unpickler ``torch.load(weights_only=True)`` uses: it resolves only an allowlist of
globals (containers, primitive types, dtypes, devices, ``torch.Size``, storage types and the
tensor rebuild functions) plus those the user declared safe, and refuses every other global
*before* anything can call it, with a :class:`pickle.UnpicklingError` that says how to allow it.

This is Python's documented "restricting globals" pattern: ``find_class`` is the only way a
pickle reaches a callable or a class (GLOBAL, STACK_GLOBAL, INST, EXT all go through it), so a
checkpoint can only call what this module hands out. Modules are never imported on a pickle's
behalf.
"""

from __future__ import annotations

import codecs
import collections
import pickle
import threading
from typing import Any

from . import _dtype, _layout, _storage, _utils
from ._device import device as _device
from ._tensor import Size, Tensor

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
        "torch._utils._rebuild_parameter": _utils._rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": _utils._rebuild_parameter_with_state,
        "torch._utils._rebuild_meta_tensor_no_storage": _utils._rebuild_meta_tensor_no_storage,
        "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
    }
    for name, dt in _dtype.DTYPES.items():
        allowed[f"torch.{name}"] = dt
    for name, dt in _dtype.ALIASES.items():
        allowed[f"torch.{name}"] = dt
    for name in ("strided", "sparse_coo"):
        allowed[f"torch.{name}"] = getattr(_layout, name)
    for name, cls in _utils.STORAGE_TYPES.items():
        allowed[f"torch.{name}"] = cls
    return allowed


def _rebuild_from_type_v2(func: Any, new_type: Any, args: tuple[Any, ...], state: Any) -> Any:
    """``_rebuild_from_type_v2`` restricted to allowed rebuild functions and tensor types."""
    if func not in _ALLOWED.values() or not (
            isinstance(new_type, type) and issubclass(new_type, Tensor)):
        raise pickle.UnpicklingError(
            f"_rebuild_from_type_v2 with {func!r} and {new_type!r} is not allowed")
    if state is not None and not isinstance(state, (dict, tuple)):
        raise pickle.UnpicklingError("tensor state must be a dict")
    return _utils._rebuild_from_type_v2(func, new_type, args, state)


_ALLOWED = _builtin_allowlist()
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


class Unpickler(pickle.Unpickler):
    """A pickle reader that resolves only allowed globals (see the module docstring)."""

    def find_class(self, module: str, name: str) -> Any:
        full_name = normalise_name(module, name)
        obj = lookup(full_name)
        if obj is None:
            raise refusal(full_name)
        return obj
