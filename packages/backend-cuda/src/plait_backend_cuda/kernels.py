"""The cuda launch of elementwise expressions, under the shared primitives of
:mod:`._render.render_launch_elementwise` (every row of the shared elementwise table, ``where``,
``copy_``, ``fill_`` and ``arange_``); :func:`kernels` gathers every family.

Each kernel takes the primitive's schema (``torch.backends.contract.schema``), renders its
CUDA source through the shared renderer (:mod:`._render`) for the operands' dtypes and
geometry, compiles it once (:mod:`.programs`) and launches it on the device's default stream
without waiting. What it does not take it declines before writing anything
(``contract.Decline``), so core's CPU fallback serves it: more dims that do not merge than a
launch's arguments can describe (:func:`max_rank`). Complex values run every row with a
complex expression (``render_complex``); complex64 functions of functions compute in
complex128 and round once, as on xpu.

Every launch is checked at this boundary: each operand's buffer must hold every element its
sizes and strides reach from its offset (:func:`buffer_args`), and the native launcher checks
buffers' devices, argument counts and types, and CUDA's grid limits. Indices are 64-bit.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from torch.backends import contract

from . import device_module
from ._render import render, render_launch_elementwise
from ._render.render_geometry import merge  # noqa: F401 (linalg and the cuBLAS tests take it here)

MAX_RANK = 12  # dims of the other families' strided kernels (a size and strides per dim)
# CUDA's classic limit on a kernel's parameters, 4 KB: 512 8-byte words (buffers, integers)
PARAMETER_WORDS = 512
DIALECT = render.CUDA
BLOCK = 256  # threads per block of 1-d launches
CALLS: Counter[str] = Counter()  # kernels run, by primitive: tests tell native from fallback
# (device, op, dtypes, rank, raw, constants) -> its _C.Kernel: rendering and hashing a source
# costs more than a launch, so a repeated call looks its kernel up here first.
_KERNELS: dict[tuple[Any, ...], Any] = {}


def dtype_name(t: Any) -> str:
    """``t``'s dtype without the ``torch.`` prefix."""
    return str(t.dtype).removeprefix("torch.")


def max_rank(operands: int, scalars: int = 0) -> int:
    """The most dims an elementwise launch over ``operands`` (and ``scalars`` constants)
    describes within :data:`PARAMETER_WORDS`
    (:func:`._render.render_launch_elementwise.max_rank`)."""
    return render_launch_elementwise.max_rank(PARAMETER_WORDS, operands, scalars)


def buffer_args(tensors: Sequence[Any]) -> tuple[list[Any], list[int]]:
    """Each tensor's buffer and element offset, after checking that the buffer holds every
    element the tensor's sizes and strides reach (a kernel trusts these bounds)."""
    buffers, offsets = [], []
    for t in tensors:
        handle, byte_offset = contract.memory(t)
        size = t.element_size()
        offset = byte_offset // size
        if t.numel():
            low = high = offset
            for n, st in zip(t.shape, t.stride()):
                reach = (n - 1) * st
                if reach < 0:
                    low += reach
                else:
                    high += reach
            if low < 0 or (high + 1) * size > handle.nbytes or byte_offset % size:
                raise RuntimeError(
                    f"a cuda tensor of shape {tuple(t.shape)} and strides {tuple(t.stride())} "
                    f"at byte offset {byte_offset} reaches outside its block of "
                    f"{handle.nbytes} bytes")
        buffers.append(handle)
        offsets.append(offset)
    return buffers, offsets


def cached_kernel(key: tuple[Any, ...], index: int,
                  render_it: Callable[[], render.Rendered]) -> Any:
    """The ``_C.Kernel`` under ``key``, rendered and compiled on its first use."""
    kernel = _KERNELS.get(key)
    if kernel is None:
        rendered = render_it()
        kernel = device_module.programs().kernel(index, rendered.source, rendered.name,
                                                 rendered.signature)
        _KERNELS[key] = kernel
    return kernel


def launch_1d(kernel: Any, n: int, args: Sequence[Any]) -> None:
    """Launch ``kernel`` over ``n`` threads in blocks of :data:`BLOCK` (it ignores threads
    past ``n``)."""
    kernel((-(-n // BLOCK) * BLOCK,), (BLOCK,), *args)


def elementwise_kernel(op: str, expression: str, names: Sequence[str], index: int, rank: int,
                       raw: bool = False, constants: int = 0, helpers: str = "",
                       float_constants: int = 0, result: str | None = None,
                       vector: bool = False) -> tuple[Any, int]:
    """The kernel :func:`._render.render_launch_elementwise.launch` runs on cuda for operands
    of dtypes ``names`` (the output first) at ``rank`` (0: all contiguous), and the elements
    each thread takes (one: ``vector`` changes nothing, CUDA kernels are scalar here)."""
    key = (index, op, tuple(names), rank, raw, constants, float_constants)
    kernel = cached_kernel(key, index, lambda: render.render_elementwise(
        DIALECT, op.replace(".", "_"), expression, names[0], tuple(names[1:]), rank, raw=raw,
        constants=constants, helpers=helpers, float_constants=float_constants,
        float_type="f64", result=result))
    return kernel, 1


def kernels() -> dict[str, Callable[..., None]]:
    """Primitive name -> kernel, for ``torch_backend_register_kernels``."""
    from . import conv, fft, indexing, linalg, reductions, sorting
    from .launch_backend import BACKEND

    table = render_launch_elementwise.kernels(BACKEND)
    table.update(reductions.kernels())
    table.update(linalg.kernels())
    table.update(indexing.kernels())
    table.update(sorting.kernels())
    table.update(conv.kernels())
    table.update(fft.kernels())
    return table
