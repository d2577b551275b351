"""``torch.overrides``: the ``__torch_function__`` protocol, as in PyTorch.

A type that defines ``__torch_function__(cls, func, types, args=(), kwargs=None)`` (a Tensor
subclass, or any tensor-like object) is handed the calls of public ``torch`` functions and
``Tensor`` methods it takes part in; a :class:`TorchFunctionMode` sees every such call made
inside its ``with`` block. ``Tensor`` itself defines the default: run the function with subclass
dispatch off and return tensor results as the subclass, so subclasses survive ops.

Importing this module turns the protocol's checks on for the whole process (they also turn on
when a Tensor subclass keeping ``__torch_function__`` is defined or a mode is entered): a
tensor-like that is not a Tensor subclass is only seen after that.
"""

from __future__ import annotations

import sys
import types
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from . import _torch_function as _tf
from ._core.tensor import Tensor, _disabled_torch_function_impl

__all__ = [
    "TorchFunctionMode",
    "get_default_nowrap_functions",
    "get_ignored_functions",
    "get_overridable_functions",
    "get_testing_overrides",
    "handle_torch_function",
    "has_torch_function",
    "has_torch_function_unary",
    "has_torch_function_variadic",
    "is_tensor_like",
    "is_tensor_method_or_property",
    "resolve_name",
]

handle_torch_function = _tf.handle_torch_function
_disabled_torch_function_impl = _disabled_torch_function_impl
DisableTorchFunctionSubclass = _tf.disable_subclass
DisableTorchFunction = _tf.disable_all


def has_torch_function(relevant_args: Any) -> bool:
    """Whether a call with ``relevant_args`` must go to ``handle_torch_function``: a mode is
    active, or one of them (or of the lists among them) overrides ``__torch_function__``."""
    loc = _tf._local
    if loc.all_disabled:
        return False
    if loc.modes:
        return True
    return not loc.subclass_disabled and bool(_tf.overloaded_args(relevant_args))


def has_torch_function_unary(obj: Any) -> bool:
    """``has_torch_function((obj,))``, for one argument."""
    return has_torch_function((obj,))


def has_torch_function_variadic(*args: Any) -> bool:
    """``has_torch_function(args)``, with the arguments passed separately."""
    return has_torch_function(args)


def is_tensor_like(inp: Any) -> bool:
    """Whether ``inp`` is a Tensor or a tensor-like (its type defines ``__torch_function__``)."""
    return type(inp) is Tensor or hasattr(inp, "__torch_function__")


def get_default_nowrap_functions() -> set[Callable[..., Any]]:
    """The functions whose results the default ``Tensor.__torch_function__`` does not convert
    to the subclass (getters of ``_base`` and ``grad``)."""
    return set(_tf.nowrap_functions())


def is_tensor_method_or_property(func: Callable[..., Any]) -> bool:
    """Whether ``func`` is a method or property getter of ``Tensor``."""
    name = getattr(func, "__name__", None)
    if name is None:
        return False
    attr = Tensor.__dict__.get(name)
    return attr is func or getattr(attr, "__get__", None) == func or (
        isinstance(attr, property) and attr.fget is func)


def _overridable() -> dict[Any, list[Callable[..., Any]]]:
    import torch

    from . import _functions

    _tf.install()
    entries = _tf.originals
    table: dict[Any, list[Callable[..., Any]]] = {
        torch: [v for n, v in vars(_functions).items() if n in _functions.__all__ and
                v in entries],
        Tensor: [v for v in vars(Tensor).values() if callable(v) and v in entries],
    }
    for name in _tf.wrapped_modules:
        module = sys.modules.get(name)
        if module is not None:
            fns = [v for v in vars(module).values() if callable(v) and v in entries]
            if fns:
                table[module] = fns
    return table


def get_overridable_functions() -> dict[Any, list[Callable[..., Any]]]:
    """Namespace (``torch``, ``torch.Tensor``, ``torch.nn.functional``...) -> the functions in
    it that take part in the protocol (a ``defaultdict(list)``, as PyTorch's)."""
    import importlib

    try:  # torch.nn.functional's functions take part once it is loaded (plait-nn)
        importlib.import_module("torch.nn.functional")
    except ImportError:
        pass
    table: defaultdict[Any, list[Callable[..., Any]]] = defaultdict(list)
    for ns, fns in _overridable().items():
        table[ns].extend(fns)
    return table


def _namespace_name(namespace: Any) -> str:
    return "torch.Tensor" if namespace is Tensor else namespace.__name__


def _property_getters() -> dict[Any, str]:
    """The getters of the Tensor properties that take part in the protocol -> their names
    (``"torch.Tensor.T.__get__"``)."""
    return {prop.fget: f"torch.Tensor.{name}.__get__" for name, prop in vars(Tensor).items()
            if isinstance(prop, property) and prop.fget in _tf.originals}


def resolve_name(f: Callable[..., Any]) -> str | None:
    """The public name of an overridable function (``"torch.add"``, ``"torch.Tensor.add"``,
    ``"torch.nn.functional.relu"``), or None for a function that is not one."""
    if getattr(f, "_schema", None) is not None and hasattr(f, "overloadpacket"):
        return str(f)  # an operator overload: aten.add.Tensor
    for namespace, fns in _overridable().items():
        for fn in fns:
            if fn is f:
                return f"{_namespace_name(namespace)}.{getattr(fn, '__name__', '')}"
    return _property_getters().get(f)


def get_ignored_functions() -> set[Callable[..., Any]]:
    """The public functions of ``torch`` that never consult ``__torch_function__``
    (``torch.is_tensor``, ``torch.manual_seed``, ``torch.set_default_dtype``...)."""
    import torch

    ignored: set[Callable[..., Any]] = set()
    for name in dir(torch):
        if name.startswith("_"):
            continue
        try:
            value = getattr(torch, name)
        except (AttributeError, ImportError, RuntimeError):
            continue
        if isinstance(value, types.FunctionType) and value not in _tf.originals:
            ignored.add(value)
    return ignored


def get_testing_overrides() -> dict[Callable[..., Any], Callable[..., Any]]:
    """Each overridable function -> a dummy with its signature that returns -1 (what
    PyTorch gives tests of ``__torch_function__`` implementations)."""
    import inspect

    dummies: dict[Callable[..., Any], Callable[..., Any]] = {}
    for fns in _overridable().values():
        for fn in fns:
            if fn in dummies:
                continue

            def dummy(*args: Any, **kwargs: Any) -> int:
                return -1

            try:
                dummy.__signature__ = inspect.signature(_tf.originals.get(fn, fn))  # type: ignore[attr-defined]
            except (TypeError, ValueError):
                pass
            dummy.__name__ = getattr(fn, "__name__", "dummy")
            dummies[fn] = dummy
    for getter in _property_getters():
        dummies[getter] = lambda self: -1
    return dummies


class TorchFunctionMode:
    """Sees every public ``torch`` call made inside its ``with`` block, through
    ``__torch_function__(func, types, args=(), kwargs=None)``; the mode is off while its
    handler runs, so calling ``func`` inside it runs the function."""

    def __torch_function__(self, func: Callable[..., Any], types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        raise NotImplementedError

    def __enter__(self) -> TorchFunctionMode:
        _tf.push_mode(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _tf.pop_mode()


def _get_current_function_mode() -> TorchFunctionMode | None:
    """The innermost TorchFunctionMode of this thread, or None."""
    stack = _tf._local.modes
    return stack[-1] if stack else None


def _get_current_function_mode_stack() -> list[TorchFunctionMode]:
    """This thread's TorchFunctionModes, outermost first."""
    return _tf.mode_stack()


def _len_torch_function_stack() -> int:
    return len(_tf._local.modes)


@contextmanager
def _pop_mode_temporarily() -> Iterator[TorchFunctionMode]:
    """The innermost mode, off for the block."""
    with _tf._pop_mode_temporarily() as mode:
        yield mode


def _is_torch_function_mode_enabled() -> bool:
    return bool(_tf._local.modes) and not _tf._local.all_disabled


_tf.install()
