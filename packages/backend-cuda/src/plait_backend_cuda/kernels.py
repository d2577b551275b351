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
from ._render.render_geometry import merge

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
    """The most dims an elementwise launch over ``operands`` describes within
    :data:`PARAMETER_WORDS` (a buffer, an offset, a stride per dim each; n, the sizes,
    ``scalars`` constants)."""
    return (PARAMETER_WORDS - 1 - 2 * operands - scalars) // (1 + operands)


def geometry(tensors: Sequence[Any]) -> tuple[list[int], list[list[int]]]:
    """The iteration shape (the first tensor's) and each tensor's strides, merged."""
    return merge(list(tensors[0].shape), [list(t.stride()) for t in tensors])


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


def _launch(op: str, expression: str, out: Any, inputs: Sequence[Any], raw: bool = False,
            constants: Sequence[int] = (), helpers: str = "",
            float_constants: Sequence[float] = (), result: str | None = None,
            vector: bool = False) -> None:
    """Render (once), compile (once) and launch ``out = expression(inputs)``; ``op`` names the
    expression (with its variant) in the kernel cache. ``vector`` changes nothing here (CUDA
    kernels are scalar; the shared primitives pass it for backends with vector kernels)."""
    n = out.numel()
    if n == 0:
        CALLS[op.partition(".")[0]] += 1
        return
    operands = [out, *inputs]
    names = [dtype_name(t) for t in operands]
    shape, strides = geometry(operands)
    contiguous = all(st == [1] for st in strides) or not shape
    rank = 0 if contiguous else len(shape)
    if rank > max_rank(len(operands), len(constants) + len(float_constants)):
        raise contract.Decline
    index = out.device.index or 0
    key = (index, op, tuple(names), rank, raw, len(constants), len(float_constants))
    kernel = cached_kernel(key, index, lambda: render.render_elementwise(
        DIALECT, op.replace(".", "_"), expression, names[0], tuple(names[1:]), rank, raw=raw,
        constants=len(constants), helpers=helpers, float_constants=len(float_constants),
        float_type="f64", result=result))
    buffers, offsets = buffer_args(operands)
    args: list[Any] = [*buffers, n, *offsets]
    if rank:
        args += shape
        for st in strides:
            args += st
    args += constants
    args += float_constants
    CALLS[op.partition(".")[0]] += 1
    launch_1d(kernel, n, args)


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
