"""Grad modes: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``.

Each is a context manager and a decorator, and thread-local (a thread starts with grad enabled
and inference mode off). They flip the switches in :mod:`torch._core.config`. They live in core
because grad mode is dispatcher state that the op library reads and sets too;
:mod:`torch.autograd.grad_mode` and ``torch.*`` re-export these same classes.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from . import config as _config

__all__ = ["enable_grad", "inference_mode", "no_grad", "set_grad_enabled"]


class _DecoratorContextManager:
    """A context manager that also decorates functions (and generators) with itself."""

    def __call__(self, func: Callable[..., Any]) -> Callable[..., Any]:
        if inspect.isclass(func):
            raise RuntimeError(f"{type(self).__name__} cannot decorate a class")
        if inspect.isgeneratorfunction(func):
            @functools.wraps(func)
            def generator(*args: Any, **kwargs: Any) -> Any:
                gen = func(*args, **kwargs)
                with self.clone():
                    response = gen.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with self.clone():
                            gen.close()
                        raise
                    try:
                        with self.clone():
                            response = gen.send(request)
                    except StopIteration as stop:
                        return stop.value

            return generator

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self.clone():
                return func(*args, **kwargs)

        return wrapper

    def clone(self) -> _DecoratorContextManager:
        return type(self)()

    def __enter__(self) -> None:
        raise NotImplementedError

    def __exit__(self, *exc: object) -> None:
        raise NotImplementedError


class _NoParamDecorator(_DecoratorContextManager):
    """Also usable bare: ``@torch.no_grad`` as well as ``@torch.no_grad()``."""

    def __new__(cls, orig_func: Callable[..., Any] | None = None) -> Any:
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamDecorator):
    """Operations inside record no graph (results have ``requires_grad=False``)."""

    def __init__(self, orig_func: Any = None) -> None:
        self._prev: list[bool] = []

    def __enter__(self) -> None:
        self._prev.append(_config.set_grad_state(False))

    def __exit__(self, *exc: object) -> None:
        _config.set_grad_state(self._prev.pop())


class enable_grad(_NoParamDecorator):
    """Re-enable graph recording inside a ``no_grad`` region."""

    def __init__(self, orig_func: Any = None) -> None:
        self._prev: list[bool] = []

    def __enter__(self) -> None:
        self._prev.append(_config.set_grad_state(True))

    def __exit__(self, *exc: object) -> None:
        _config.set_grad_state(self._prev.pop())


class set_grad_enabled(_DecoratorContextManager):
    """Set grad mode to ``mode``: at once when called, and for a ``with`` block or a decorated
    function (restoring the previous mode after)."""

    def __init__(self, mode: bool) -> None:
        if not isinstance(mode, bool):
            raise TypeError(f"set_grad_enabled expects a bool, got {type(mode).__name__}")
        self.mode = mode
        self.prev = _config.set_grad_state(mode)

    def __call__(self, func: Callable[..., Any]) -> Callable[..., Any]:
        _config.set_grad_state(self.prev)  # as a decorator it only applies inside the function
        return super().__call__(func)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        _config.set_grad_state(self.prev)

    def clone(self) -> set_grad_enabled:
        return set_grad_enabled(self.mode)


class inference_mode(_DecoratorContextManager):
    """Like ``no_grad``, and tensors created inside are inference tensors: they cannot be saved
    for backward or updated in place outside inference mode later."""

    def __init__(self, mode: bool = True) -> None:
        if not isinstance(mode, bool):
            raise TypeError(f"inference_mode expects a bool, got {type(mode).__name__}")
        self.mode = mode
        self._prev: list[tuple[bool, bool]] = []

    def __new__(cls, mode: Any = True) -> Any:
        if callable(mode) and not isinstance(mode, bool):  # bare @torch.inference_mode
            return cls()(mode)
        return super().__new__(cls)

    def __enter__(self) -> None:
        grad = _config.set_grad_state(not self.mode) if self.mode else _config.is_grad_enabled()
        self._prev.append((grad, _config.set_inference_state(self.mode)))

    def __exit__(self, *exc: object) -> None:
        grad, inference = self._prev.pop()
        _config.set_inference_state(inference)
        _config.set_grad_state(grad)

    def clone(self) -> inference_mode:
        return inference_mode(self.mode)


# PyTorch's public home of these classes (their repr and pickled references name it).
for _cls in (no_grad, enable_grad, set_grad_enabled, inference_mode):
    _cls.__module__ = "torch.autograd.grad_mode"
del _cls
