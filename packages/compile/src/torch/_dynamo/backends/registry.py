"""The backends ``torch.compile(backend=...)`` knows, by name (docs/architecture.md).

Built-in backends are rows of :data:`BUILTIN_BACKENDS`; third-party ones are entry points in
the group ``torch_dynamo_backends`` (the entry point's name is the backend's name). A backend
is a callable ``(graph_module, example_inputs) -> compiled callable``; :func:`resolve_backend`
turns a name into one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from torch._dynamo.exc import InvalidBackend

__all__ = ["BUILTIN_BACKENDS", "ENTRY_POINT_GROUP", "list_backends", "lookup_backend",
           "register_backend", "resolve_backend"]

ENTRY_POINT_GROUP = "torch_dynamo_backends"

# name -> what the backend does
BUILTIN_BACKENDS: Mapping[str, str] = MappingProxyType(
    {
        "eager": "run the captured graph with the eager kernels (tests capture alone)",
        "aot_eager": "AOT autograd (joint forward/backward graph), then eager kernels",
        "inductor": "AOT autograd, then fused native kernels generated per device",
    }
)


# name -> tags, for list_backends(exclude_tags=...): the two backends PyTorch tags "debug"
_BUILTIN_TAGS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {"eager": ("debug",), "aot_eager": ("debug",), "inductor": ()})

# backends registered at run time by register_backend: name -> (callable, tags)
_REGISTERED: dict[str, tuple[Callable[..., Any], tuple[str, ...]]] = {}


def register_backend(compiler_fn: Callable[..., Any] | None = None, name: str | None = None,
                     tags: Sequence[str] = ()) -> Callable[..., Any]:
    """Register ``compiler_fn`` as a backend named ``name`` (default: its ``__name__``), so
    ``torch.compile(backend=name)`` finds it; a decorator, with or without arguments.

    :raises ValueError: the name is already a backend's.
    """
    if compiler_fn is None:
        return lambda fn: register_backend(fn, name=name, tags=tags)
    if not callable(compiler_fn):
        raise TypeError(f"a backend must be callable, got {type(compiler_fn).__name__}")
    key = name or compiler_fn.__name__
    if key in BUILTIN_BACKENDS or key in _REGISTERED:
        raise ValueError(f"duplicate name: {key}")
    _REGISTERED[key] = (compiler_fn, tuple(tags))
    return compiler_fn


def _entry_point_backends() -> list[str]:
    # importlib.metadata costs ~18 ms to import: only pay for it when asked.
    from importlib.metadata import entry_points

    return [entry_point.name for entry_point in entry_points(group=ENTRY_POINT_GROUP)]


def list_backends(exclude_tags: Sequence[str] | None = ()) -> list[str]:
    """The names ``torch.compile(backend=...)`` accepts, sorted, less those with a tag in
    ``exclude_tags``. (PyTorch's default hides the backends it tags ``"debug"``, ``eager``
    and ``aot_eager`` among them; here every backend is listed unless asked otherwise.)

    :returns: the built-in backends, those registered with :func:`register_backend` and
        those of the entry-point group ``torch_dynamo_backends``.
    """
    excluded = set(exclude_tags or ())
    tags = {**_BUILTIN_TAGS, **{name: entry[1] for name, entry in _REGISTERED.items()}}
    names = {*BUILTIN_BACKENDS, *_REGISTERED, *_entry_point_backends()}
    return sorted(name for name in names if not excluded.intersection(tags.get(name, ())))


def _check_backend(backend: str | Callable[..., Any]) -> None:
    """Check that ``backend`` names a registered backend or is a backend callable.

    :raises InvalidBackend: ``backend`` is a string that names no backend.
    :raises TypeError: ``backend`` is neither a string nor callable.
    """
    if isinstance(backend, str):
        if backend in BUILTIN_BACKENDS or backend in _REGISTERED:
            return
        valid = list_backends()
        if backend not in valid:
            raise InvalidBackend(backend, valid)
        return
    if not callable(backend):
        raise TypeError(
            f"torch.compile backend must be a backend name or a callable, "
            f"got {type(backend).__name__}"
        )


def lookup_backend(backend: str | Callable[..., Any]) -> Callable[..., Any]:
    """The backend callable ``(graph_module, example_inputs) -> callable`` for a name (as
    PyTorch's: programs call it to hand a graph on to a built-in backend), or ``backend``
    itself when it is a callable.

    :raises InvalidBackend: ``backend`` is a string that names no backend.
    :raises TypeError: ``backend`` is neither a string nor callable.
    """
    return resolve_backend(backend)


def _eager(gm: Any, example_inputs: list[Any]) -> Callable[..., Any]:
    """Run the captured GraphModule as it is (tests capture alone)."""
    return gm.forward


def _aot_eager(gm: Any, example_inputs: list[Any]) -> Callable[..., Any]:
    """AOT autograd with the eager kernels for both graphs (``bound_nop``: the graphs run as
    they are, their operators resolved once)."""
    from torch._dynamo.backends.common import aot_autograd
    from torch._functorch.graph_runner import bound_nop
    from torch._functorch.partitioners import min_cut_rematerialization_partition

    return aot_autograd(fw_compiler=bound_nop, bw_compiler=bound_nop,
                        partition_fn=min_cut_rematerialization_partition)(gm, example_inputs)


def _inductor(gm: Any, example_inputs: list[Any]) -> Callable[..., Any]:
    """The code generator's ``compile_fx`` (which lowers a captured torch-level graph itself:
    through AOT autograd, or to aten when nothing needs grad); aot_eager without it."""
    try:
        from torch._inductor.compile_fx import compile_fx
    except ImportError:
        return _aot_eager(gm, example_inputs)
    return compile_fx(gm, example_inputs)


_BUILTIN_CALLABLES: dict[str, Callable[..., Any]] = {
    "eager": _eager, "aot_eager": _aot_eager, "inductor": _inductor,
}


def resolve_backend(backend: str | Callable[..., Any]) -> Callable[..., Any]:
    """The backend callable for a name (built-in or entry point) or the callable itself.

    :raises InvalidBackend: an unknown name.
    """
    _check_backend(backend)
    if not isinstance(backend, str):
        return backend
    if backend in _BUILTIN_CALLABLES:
        return _BUILTIN_CALLABLES[backend]
    if backend in _REGISTERED:
        return _REGISTERED[backend][0]
    from importlib.metadata import entry_points

    for entry_point in entry_points(group=ENTRY_POINT_GROUP):
        if entry_point.name == backend:
            return entry_point.load()
    raise InvalidBackend(backend, list_backends())
