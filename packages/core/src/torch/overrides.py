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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from . import _torch_function as _tf
from ._core.tensor import Tensor, _disabled_torch_function_impl

__all__ = [
    "TorchFunctionMode",
    "get_default_nowrap_functions",
    "get_overridable_functions",
    "handle_torch_function",
    "has_torch_function",
    "has_torch_function_unary",
    "has_torch_function_variadic",
    "is_tensor_like",
    "is_tensor_method_or_property",
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
    it that take part in the protocol."""
    return {ns: list(fns) for ns, fns in _overridable().items()}


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
