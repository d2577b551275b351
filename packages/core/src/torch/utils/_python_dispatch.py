"""``torch.utils._python_dispatch``: ``TorchDispatchMode`` and helpers, as in PyTorch.

A dispatch mode sees every aten operator call made inside its ``with`` block, below autograd,
through ``__torch_dispatch__(func, types, args=(), kwargs=None)`` where ``func`` is the
operator overload (``torch.ops.aten.add.Tensor``). The mode is off while its handler runs, so
calling ``func`` inside it runs the operator (and the ops a composite kernel is written in are
not seen again). Modes nest: the innermost handles a call first and sees what its handler
calls reach the mode outside it. Tensor subclasses take part the same way by defining
``__torch_dispatch__`` as a classmethod (see ``Tensor._make_wrapper_subclass``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from torch._core import dispatch as _dispatch
from torch._core.tensor import Tensor

__all__ = [
    "TorchDispatchMode",
    "is_in_torch_dispatch_mode",
    "is_traceable_wrapper_subclass",
    "is_traceable_wrapper_subclass_type",
    "return_and_correct_aliasing",
    "transform_subclass",
]


class TorchDispatchMode:
    """Base class of dispatch modes: override ``__torch_dispatch__``; enter with ``with``."""

    def __torch_dispatch__(self, func: Any, types: tuple[type, ...], args: tuple[Any, ...] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        raise NotImplementedError

    def __enter__(self) -> TorchDispatchMode:
        _dispatch.push_mode(self)
        return self

    def __exit__(self, *exc: object) -> None:
        stack = _dispatch.mode_stack()
        if not stack or stack[-1] is not self:
            raise RuntimeError(f"{type(self).__name__} exited out of order: it is not the "
                               "innermost active dispatch mode")
        _dispatch.pop_mode()

    @classmethod
    def is_infra_mode(cls) -> bool:
        """Whether the mode is PyTorch infrastructure (fake tensors, tracing); user modes are
        not."""
        return False

    @classmethod
    def push(cls, *args: Any, **kwargs: Any) -> TorchDispatchMode:
        """Deprecated in PyTorch: ``with Mode(...)`` instead; kept for old code."""
        return cls(*args, **kwargs)


def _get_current_dispatch_mode() -> TorchDispatchMode | None:
    """The innermost dispatch mode of this thread, or None."""
    stack = _dispatch.mode_stack()
    return stack[-1] if stack else None


def _get_current_dispatch_mode_stack() -> list[TorchDispatchMode]:
    """This thread's dispatch modes, outermost first (a copy)."""
    return list(_dispatch.mode_stack())


def _len_torch_dispatch_stack() -> int:
    return len(_dispatch.mode_stack())


def _push_mode(mode: TorchDispatchMode) -> None:
    _dispatch.push_mode(mode)


def _pop_mode() -> TorchDispatchMode:
    return _dispatch.pop_mode()


@contextmanager
def _pop_mode_temporarily() -> Iterator[TorchDispatchMode]:
    """The innermost dispatch mode, off for the block."""
    mode = _dispatch.pop_mode()
    try:
        yield mode
    finally:
        _dispatch.push_mode(mode)


@contextmanager
def _disable_current_modes() -> Iterator[list[TorchDispatchMode]]:
    """Every dispatch mode of this thread off for the block (yields them, outermost first)."""
    popped = []
    while _dispatch.mode_stack():
        popped.append(_dispatch.pop_mode())
    popped.reverse()
    try:
        yield popped
    finally:
        for mode in popped:
            _dispatch.push_mode(mode)


def is_in_torch_dispatch_mode() -> bool:
    """Whether a dispatch mode is active on this thread."""
    return bool(_dispatch.mode_stack())


def return_and_correct_aliasing(func: Callable[..., Any], args: Any, kwargs: Any,
                                out: Any) -> Any:
    """PyTorch's helper for wrapper subclasses, called on the result of ``func`` that a
    ``__torch_dispatch__`` built from its inner tensors: the result of an operator that
    returns a written argument (``add_``, ``out=``) is that argument itself, and the result
    of a view shares the storage of the tensor it views (``Tensor(a) self -> Tensor(a)``), as
    the operator's schema says."""
    schema = getattr(func, "_schema", None)
    if schema is None:
        return out
    bound = _bind_by_name(schema, args, kwargs or {})
    returns = schema.returns
    outs = list(out) if isinstance(out, (tuple, list)) and len(returns) > 1 else [out]
    written = False
    for i, ret in enumerate(returns[: len(outs)]):
        info = ret.alias_info
        if info is None or not info.before_set:
            continue
        source = next((bound[a.name] for a in schema.arguments
                       if a.alias_info is not None and a.name in bound
                       and a.alias_info.before_set & info.before_set), None)
        if not isinstance(source, Tensor):
            continue
        if info.is_write:
            outs[i] = source  # the written argument is the result
            written = True
        elif isinstance(outs[i], Tensor) and outs[i] is not source:
            outs[i]._storage = source._storage  # a view: the viewed tensor's storage
    if not written:
        return out
    return outs[0] if len(outs) == 1 and not isinstance(out, (tuple, list)) else type(out)(outs)


def _bind_by_name(schema: Any, args: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The call's arguments by schema name (the ones given)."""
    bound = dict(zip((a.name for a in schema.arguments), args))
    bound.update(kwargs)
    return bound


def is_traceable_wrapper_subclass_type(cls: type) -> bool:
    """Whether ``cls`` is a Tensor subclass that says how to take itself apart and put itself
    back together (``__tensor_flatten__`` and ``__tensor_unflatten__``), as the compiler's
    tracing of wrapper subclasses requires."""
    return (isinstance(cls, type) and issubclass(cls, Tensor) and cls is not Tensor
            and hasattr(cls, "__tensor_flatten__") and hasattr(cls, "__tensor_unflatten__"))


def is_traceable_wrapper_subclass(t: object) -> bool:
    """Whether ``t`` is an instance of a :func:`is_traceable_wrapper_subclass_type` class."""
    return isinstance(t, Tensor) and is_traceable_wrapper_subclass_type(type(t))


def transform_subclass(t: Any, callback: Callable[[str, Tensor], Tensor],
                       outer_size: Any = None, outer_stride: Any = None) -> Any:
    """A new instance of traceable wrapper subclass ``t`` whose inner tensors are
    ``callback(name, inner)`` of ``t``'s (its ``__tensor_flatten__`` names them)."""
    names, context = t.__tensor_flatten__()
    inner = {name: callback(name, getattr(t, name)) for name in names}
    size = t.size() if outer_size is None else outer_size
    stride = t.stride() if outer_stride is None else outer_stride
    return type(t).__tensor_unflatten__(inner, context, size, stride)
