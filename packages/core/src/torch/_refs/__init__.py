"""The reference kernels: every primitive written with numpy, for the CPU.

They are the CPU implementation when no native CPU backend is loaded, the oracle of the
conformance suite, and what a backend's missing kernel falls back to. Clarity over speed. One
module per primitive group; this package gathers them into :data:`CPU_KERNELS`, which the
built-in ``cpu`` backend (``torch._builtin_backends``) registers through the backend hooks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._core import prims as _prims
from .._core.tensor import Tensor
from . import conv, elementwise, indexing, linalg, memory, random, reduction, sort, spectral
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
for _group in (memory, elementwise, reduction, indexing, sort, linalg, random, conv, spectral):
    CPU_KERNELS.update(_group.KERNELS)

# numpy arrays have at most 64 dims; tensors may have more (as in PyTorch). Only dims of size 1
# can make up the excess (64 dims of size 2 or more are more elements than any memory holds),
# and dropping those from every operand leaves the computation unchanged.
_NUMPY_MAX_DIMS = 64


def _without(t: Tensor, keep: list[int]) -> Tensor:
    """A view of ``t`` with only the dims ``keep``: the others have size 1."""
    return Tensor._make(t._storage, tuple(t._shape[d] for d in keep),
                        tuple(t._stride[d] for d in keep), t._offset, t._dtype, t._device, t._vc)


def _beyond_numpy_dims(kernel: Callable[..., Any], reduces: bool) -> Callable[..., Any]:
    """``kernel`` (whose tensor operands share one shape; with ``reduces``, an ``(out, a, dims)``
    reduction keeping its dims) also for tensors of more than 64 dims. The ordinary call runs
    as it is; only numpy's refusal of such a view takes the second path."""

    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return kernel(*args, **kwargs)
        except ValueError:
            shapes = {len(a._shape) for a in args if isinstance(a, Tensor)}
            if max(shapes, default=0) <= _NUMPY_MAX_DIMS or len(shapes) != 1:
                raise
        # the input's shape: a reduction's output has size 1 along its reduced dims
        shape = args[1]._shape if reduces else next(a for a in args if isinstance(a, Tensor))._shape
        keep = [d for d, n in enumerate(shape) if n != 1]
        operands = [_without(a, keep) if isinstance(a, Tensor) else a for a in args]
        if reduces:  # dims index the input's dims; a reduction over a size-1 dim is a copy
            operands[2] = [keep.index(d) for d in operands[2] if d in keep]
        return kernel(*operands, **kwargs)

    run.__name__ = getattr(kernel, "__name__", "kernel")
    return run


for _name in (*elementwise.KERNELS, "copy_", "fill_"):
    CPU_KERNELS[_name] = _beyond_numpy_dims(CPU_KERNELS[_name], reduces=False)
for _name in ("sum", "prod", "amax", "amin", "any", "all"):
    CPU_KERNELS[_name] = _beyond_numpy_dims(CPU_KERNELS[_name], reduces=True)


def missing() -> list[str]:
    """Primitives of the table that have no reference kernel yet."""
    return [name for name in _prims.PRIMITIVES if name not in CPU_KERNELS]


def _meta_kernel(*args: Any, **kwargs: Any) -> None:
    """Primitives write into preallocated outputs: on ``meta`` there is nothing to write."""


class DataDependentSizeError(NotImplementedError):
    """A meta kernel cannot size its output: the size depends on values (PyTorch's meta
    raises NotImplementedError; a fake mode turns this one into its own exception)."""


def _meta_nonzero(a: Any) -> Any:
    raise DataDependentSizeError("nonzero on the meta device: its output size depends on the "
                                 "data")


def meta_kernel(name: str) -> Callable[..., Any]:
    """The ``meta`` device's kernel of primitive ``name`` (registered by the built-in ``meta``
    backend): outputs are preallocated and there is nothing to write, except that ``nonzero``
    cannot size its output."""
    return _meta_nonzero if name == "nonzero" else _meta_kernel


_unknown = set(CPU_KERNELS) - set(_prims.PRIMITIVES)
if _unknown:
    raise RuntimeError(f"reference kernels for non-primitives: {sorted(_unknown)}")
