"""The reference kernels: every primitive written with numpy, for the CPU.

They are the CPU implementation when no native CPU backend is loaded, the oracle of the
conformance suite, and what a backend's missing kernel falls back to. Clarity over speed. One
module per primitive group; this package gathers them into :data:`CPU_KERNELS` and registers
them with the dispatcher.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import _dispatch, _prims
from . import conv, elementwise, indexing, linalg, memory, random, reduction, sort
from .common import (
    FROM_NP,
    NP_DTYPES,
    bf16_to_f32,
    check_scalar_fits,
    convert,
    f32_to_bf16,
    load,
    np_view,
    store,
)

__all__ = ["CPU_KERNELS", "FROM_NP", "NP_DTYPES", "bf16_to_f32", "check_scalar_fits", "convert",
           "f32_to_bf16", "load", "missing", "np_view", "store"]

CPU_KERNELS: dict[str, Callable[..., Any]] = {}
for _group in (memory, elementwise, reduction, indexing, sort, linalg, random, conv):
    CPU_KERNELS.update(_group.KERNELS)


def missing() -> list[str]:
    """Primitives of the table that have no reference kernel yet."""
    return [name for name in _prims.PRIMITIVES if name not in CPU_KERNELS]


def _meta_kernel(*args: Any, **kwargs: Any) -> None:
    """Primitives write into preallocated outputs: on ``meta`` there is nothing to write."""


def _meta_nonzero(a: Any) -> Any:
    raise NotImplementedError("nonzero on the meta device: its output size depends on the data")


def _register() -> None:
    unknown = set(CPU_KERNELS) - set(_prims.PRIMITIVES)
    if unknown:
        raise RuntimeError(f"reference kernels for non-primitives: {sorted(unknown)}")
    for name, (_group, schema) in _prims.PRIMITIVES.items():
        op = _dispatch.get(f"prims::{name}") or _dispatch.define(f"prims::{name}", schema)
        if "CPU" not in op.kernels and name in CPU_KERNELS:
            op.register("CPU", CPU_KERNELS[name])
        op.register(_dispatch.META, _meta_nonzero if name == "nonzero" else _meta_kernel)


_register()
