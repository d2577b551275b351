"""The xpu primitives rendered so far: fill, copy/cast, add/sub/mul/div, neg/exp/log.

Each kernel takes the primitive's schema (``torch.backends.contract.schema``), renders its
OpenCL C through :mod:`.render` for the operands' dtypes and geometry, builds it once (the
program cache) and enqueues it on the device's in-order queue without waiting. What it does not
take it declines before writing anything (``contract.Decline``), so the CPU fallback serves it:
complex arithmetic and casts, integer division, division with a rounding mode, float64 on a
device without it, and more than :data:`MAX_RANK` dimensions that do not merge.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from torch.backends import contract

from . import device_module, render

MAX_RANK = 12  # strided kernels have one size and one stride per operand per dimension
DIALECT = render.OPENCL
CALLS: Counter[str] = Counter()  # kernels run, by primitive: tests tell native from fallback
# (device, op, dtypes, rank, raw, constants) -> its _C.Kernel: rendering and hashing a source
# costs more than a launch, so a repeated call looks its kernel up here first.
_KERNELS: dict[tuple[Any, ...], Any] = {}


def _dtype_name(t: Any) -> str:
    return str(t.dtype).removeprefix("torch.")


def _geometry(tensors: Sequence[Any]) -> tuple[list[int], list[list[int]]]:
    """The iteration shape and each tensor's strides, with size-1 dimensions dropped and
    neighbours merged where every tensor steps through them as one (a contiguous block stays
    one dimension). ``[]`` shape: one element."""
    shape = list(tensors[0].shape)
    strides = [list(t.stride()) for t in tensors]
    keep = [k for k, s in enumerate(shape) if s != 1]
    shape = [shape[k] for k in keep]
    strides = [[st[k] for k in keep] for st in strides]
    merged_shape: list[int] = []
    merged: list[list[int]] = [[] for _ in tensors]
    for k, size in enumerate(shape):
        if merged_shape and all(m[-1] == st[k] * size for m, st in zip(merged, strides)):
            merged_shape[-1] *= size
            for m, st in zip(merged, strides):
                m[-1] = st[k]
        else:
            merged_shape.append(size)
            for m, st in zip(merged, strides):
                m.append(st[k])
    return merged_shape, merged


def _launch(op: str, expression: str, out: Any, inputs: Sequence[Any], raw: bool = False,
            constants: Sequence[int] = ()) -> None:
    """Render (once), build (once) and enqueue ``out = expression(inputs)``."""
    n = out.numel()
    if n == 0:
        CALLS[op] += 1
        return
    operands = [out, *inputs]
    names = [_dtype_name(t) for t in operands]
    if not raw and "float64" in names and not device_module.device_info(out.device.index)["fp64"]:
        raise contract.Decline  # this device has no double precision
    shape, strides = _geometry(operands)
    contiguous = all(st == [1] for st in strides) or not shape
    rank = 0 if contiguous else len(shape)
    if rank > MAX_RANK:
        raise contract.Decline
    index = out.device.index or 0
    key = (index, op, tuple(names), rank, raw, len(constants))
    kernel = _KERNELS.get(key)
    if kernel is None:
        rendered = render.render_elementwise(DIALECT, op, expression, names[0],
                                             tuple(names[1:]), rank, raw=raw,
                                             constants=len(constants))
        kernel = device_module.programs().kernel(index, rendered.source, rendered.name,
                                                 rendered.signature)
        _KERNELS[key] = kernel
    buffers, offsets = [], []
    for t in operands:
        handle, byte_offset = contract.memory(t)
        buffers.append(handle)
        offsets.append(byte_offset // t.element_size())
    args: list[Any] = [*buffers, n, *offsets]
    if rank:
        args += shape
        for st in strides:
            args += st
    args += constants
    CALLS[op] += 1
    kernel((n,), None, *args)


def _unary(op: str) -> Callable[[Any, Any], None]:
    expression, dtypes = render.UNARY[op]

    @contract.may_decline
    def kernel(out: Any, a: Any) -> None:
        if _dtype_name(out) not in dtypes or a.dtype != out.dtype:
            raise contract.Decline
        _launch(op, expression, out, [a])

    kernel.__name__ = kernel.__qualname__ = op
    kernel.__doc__ = f"``{contract.schema(op)}`` on xpu."
    return kernel


def _binary(op: str) -> Callable[..., None]:
    expression, dtypes = render.BINARY[op]

    @contract.may_decline
    def kernel(out: Any, a: Any, b: Any, rounding_mode: str | None = None) -> None:
        if (rounding_mode is not None or _dtype_name(out) not in dtypes
                or a.dtype != out.dtype or b.dtype != out.dtype):
            raise contract.Decline
        _launch(op, expression, out, [a, b])

    kernel.__name__ = kernel.__qualname__ = op
    kernel.__doc__ = f"``{contract.schema(op)}`` on xpu."
    return kernel


_COMPLEX = frozenset({"complex64", "complex128"})


@contract.may_decline
def copy_(out: Any, src: Any) -> None:
    """``copy_(Tensor(a!) out, Tensor src)``: a move between one dtype, else a cast."""
    same = out.dtype == src.dtype
    if not same and _COMPLEX & {_dtype_name(out), _dtype_name(src)}:
        raise contract.Decline  # complex casts are not rendered yet
    _launch("copy_", "{a}", out, [src], raw=same)


def _fill_bits(value: Any, dtype: str) -> int:
    """The bits of ``value`` cast to ``dtype`` as PyTorch casts a Python scalar, as an int."""
    import numpy as np

    if dtype == "bfloat16":  # numpy has no bfloat16: round float32's bits to nearest even
        bits = int(np.array(value, np.float32).view(np.uint32))
        if np.isnan(np.float32(value)):
            return 0x7FC0
        return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF
    array = np.array(value).astype(np.dtype(dtype))
    return int.from_bytes(array.tobytes(), "little")


@contract.may_decline
def fill_(out: Any, value: Any) -> None:
    """``fill_(Tensor(a!) out, Scalar value)``: stores the value's bits."""
    name = _dtype_name(out)
    if name == "complex128" or (isinstance(value, complex) and name not in _COMPLEX):
        raise contract.Decline
    raw = DIALECT.types[render.DTYPES[name].raw]
    _launch("fill_", f"({raw})c0", out, [], raw=True, constants=[_fill_bits(value, name)])


def kernels() -> dict[str, Callable[..., None]]:
    """Primitive name -> kernel, for ``torch_backend_register_kernels``."""
    table: dict[str, Callable[..., None]] = {"copy_": copy_, "fill_": fill_}
    table.update({op: _unary(op) for op in render.UNARY})
    table.update({op: _binary(op) for op in render.BINARY})
    return table
