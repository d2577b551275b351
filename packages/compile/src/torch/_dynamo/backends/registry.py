"""The backends ``torch.compile(backend=...)`` knows, by name (docs/architecture.md).

Built-in backends are rows of :data:`BUILTIN_BACKENDS`; third-party ones are entry points in
the group ``torch_dynamo_backends`` (the entry point's name is the backend's name). Until graph
capture arrives with the compile issue no backend is ever called: every compiled callable runs
eagerly, and this registry only validates the name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from torch._dynamo.exc import InvalidBackend

__all__ = ["BUILTIN_BACKENDS", "ENTRY_POINT_GROUP", "list_backends", "lookup_backend"]

ENTRY_POINT_GROUP = "torch_dynamo_backends"

# name -> what the backend will do once graph capture exists
BUILTIN_BACKENDS: Mapping[str, str] = MappingProxyType(
    {
        "eager": "run the captured graph with the eager kernels (tests capture alone)",
        "aot_eager": "AOT autograd (joint forward/backward graph), then eager kernels",
        "inductor": "AOT autograd, then fused native kernels generated per device",
    }
)


def _entry_point_backends() -> list[str]:
    # importlib.metadata costs ~18 ms to import: only pay for it when asked.
    from importlib.metadata import entry_points

    return [entry_point.name for entry_point in entry_points(group=ENTRY_POINT_GROUP)]


def list_backends() -> list[str]:
    """The names ``torch.compile(backend=...)`` accepts, sorted.

    :returns: the built-in backends and those registered through ``torch_dynamo_backends``.
    """
    return sorted({*BUILTIN_BACKENDS, *_entry_point_backends()})


def lookup_backend(backend: str | Callable[..., Any]) -> str | Callable[..., Any]:
    """Check that ``backend`` names a registered backend or is a backend callable.

    :param backend: a backend name or a callable ``(graph_module, example_inputs) -> callable``.
    :returns: ``backend`` itself.
    :raises InvalidBackend: ``backend`` is a string that names no backend.
    :raises TypeError: ``backend`` is neither a string nor callable.
    """
    if isinstance(backend, str):
        if backend in BUILTIN_BACKENDS:
            return backend
        valid = list_backends()
        if backend not in valid:
            raise InvalidBackend(backend, valid)
        return backend
    if not callable(backend):
        raise TypeError(
            f"torch.compile backend must be a backend name or a callable, "
            f"got {type(backend).__name__}"
        )
    return backend
