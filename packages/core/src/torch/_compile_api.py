"""``torch.compile``: argument checks in core, the work in plait-compile (docs/architecture.md).

Core validates the arguments with PyTorch's rules and messages, handles the decorator form and
``disable=True``, and then hands off to ``torch._dynamo.optimize``, which the ``plait-compile``
distribution provides. ``torch._dynamo`` is imported inside the call, never at ``import torch``,
so ``import torch`` stays fast and works without plait-compile.

Choices where PyTorch leaves room (recorded in packages/compile/README.md too):

- Supported Python versions are those plait-compile supports, 3.10 to 3.13
  (:data:`SUPPORTED_PYTHON`). PyTorch rejects 3.14 and later the same way.
- ``mode`` is checked for every backend, not only for ``inductor``, and in the decorator form
  it is checked when the decorator is made, not when it is applied.
- ``disable=True`` returns the model unchanged after the checks above, without importing
  ``torch._dynamo``: it works without plait-compile installed.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # (typing is too costly to import on every `import torch`)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar, overload

    _F = TypeVar("_F", bound=Callable[..., Any])

__all__ = ["MODES", "SUPPORTED_PYTHON", "compile"]

# the values of torch.compile(mode=...); None means "default"
MODES: tuple[str, ...] = (
    "default",
    "lite",  # PyTorch 2.13's: fewer optimisations for a faster compile
    "reduce-overhead",
    "max-autotune",
    "max-autotune-no-cudagraphs",
)

# (oldest, newest) (major, minor) that plait-compile supports
SUPPORTED_PYTHON: tuple[tuple[int, int], tuple[int, int]] = ((3, 10), (3, 13))

_COMPILE_DISTRIBUTION = "plait-compile"


def _check_python() -> None:
    oldest, newest = SUPPORTED_PYTHON
    current = sys.version_info[:2]
    if not oldest <= current <= newest:
        raise RuntimeError(
            f"torch.compile is not supported on Python {current[0]}.{current[1]}: "
            f"{_COMPILE_DISTRIBUTION} supports Python {oldest[0]}.{oldest[1]} to "
            f"{newest[0]}.{newest[1]}. Use one of those, or run the model without torch.compile."
        )


def _check_mode_and_options(mode: str | None, options: dict[str, Any] | None) -> None:
    if mode is not None and options is not None:
        raise RuntimeError(
            "Either mode or options can be specified, but both can't be specified at the same time."
        )
    if mode is not None and mode not in MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(MODES)}")
    if options is not None and not isinstance(options, dict):
        raise TypeError(f"torch.compile options must be a dict, got {type(options).__name__}")


def _import_dynamo() -> Any:
    try:
        import torch._dynamo as dynamo
    except ModuleNotFoundError as error:
        if error.name != "torch._dynamo":
            raise  # plait-compile is there but something it needs is not: keep that message
        raise ImportError(
            f"torch.compile needs the {_COMPILE_DISTRIBUTION} distribution: "
            f"pip install {_COMPILE_DISTRIBUTION}",
            name="torch._dynamo",
        ) from error
    return dynamo


if TYPE_CHECKING:  # the two call forms, for type checkers
    @overload
    def compile(
        model: _F,
        *,
        fullgraph: bool = ...,
        dynamic: bool | None = ...,
        backend: str | Callable[..., Any] = ...,
        mode: str | None = ...,
        options: dict[str, Any] | None = ...,
        disable: bool = ...,
    ) -> _F: ...

    @overload
    def compile(
        model: None = ...,
        *,
        fullgraph: bool = ...,
        dynamic: bool | None = ...,
        backend: str | Callable[..., Any] = ...,
        mode: str | None = ...,
        options: dict[str, Any] | None = ...,
        disable: bool = ...,
    ) -> Callable[[_F], _F]: ...


def compile(
    model: Callable[..., Any] | None = None,
    *,
    fullgraph: bool = False,
    dynamic: bool | None = None,
    backend: str | Callable[..., Any] = "inductor",
    mode: str | None = None,
    options: dict[str, Any] | None = None,
    disable: bool = False,
) -> Any:
    """Optimize a function or module with plait-compile, with PyTorch's ``torch.compile`` API.

    Works as a call (``torch.compile(model)``), as a bare decorator (``@torch.compile``) and as
    a decorator factory (``@torch.compile(backend="eager")``).

    :param model: the function or ``nn.Module`` to optimize; ``None`` returns a decorator.
    :param fullgraph: require one graph for the whole model (an error at a graph break).
    :param dynamic: ``True`` traces with symbolic sizes from the start, ``False`` never,
        ``None`` after a size change.
    :param backend: a backend name (``"eager"``, ``"aot_eager"``, ``"inductor"``, or one
        registered through the ``torch_dynamo_backends`` entry points) or a backend callable.
    :param mode: one of :data:`MODES`; ``None`` means ``"default"``.
    :param options: backend options; cannot be combined with ``mode``.
    :param disable: return ``model`` unchanged (a no-op switch for debugging).
    :returns: the optimized callable, or a decorator when ``model`` is ``None``.
    :raises RuntimeError: unsupported Python version, ``mode`` and ``options`` both given, an
        unknown ``mode``, or (from plait-compile) an unknown backend.
    :raises ImportError: plait-compile is not installed.
    """
    _check_python()
    _check_mode_and_options(mode, options)

    if model is None:

        def decorator(model: _F) -> _F:
            if model is None:
                raise RuntimeError("Model can't be None")
            return compile(
                model,
                fullgraph=fullgraph,
                dynamic=dynamic,
                backend=backend,
                mode=mode,
                options=options,
                disable=disable,
            )

        return decorator

    if disable:
        return model
    if mode is None and options is None:
        mode = "default"
    dynamo = _import_dynamo()
    return dynamo.optimize(
        model,
        backend=backend,
        fullgraph=fullgraph,
        dynamic=dynamic,
        mode=mode,
        options=options,
    )
