"""The cuda elementwise and memory primitives: every row of the shared elementwise table,
``where``, ``copy_``, ``fill_`` and ``arange_``; :func:`kernels` gathers every family.

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

import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from torch.backends import contract

from . import device_module
from ._render import pointwise, render, render_complex
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
_WRAP64 = 1 << 64


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
            float_constants: Sequence[float] = (), result: str | None = None) -> None:
    """Render (once), compile (once) and launch ``out = expression(inputs)``; ``op`` names the
    expression (with its variant) in the kernel cache."""
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


def _run_row(op: str, row: pointwise.Op, out: Any, inputs: Sequence[Any]) -> None:
    """Check the operands' dtypes against ``row`` (declining what it does not render) and run
    it."""
    in_dtype = dtype_name(inputs[0])
    if any(t.dtype != inputs[0].dtype for t in inputs):
        raise contract.Decline
    if row.writes_bool:
        if dtype_name(out) != "bool":
            raise contract.Decline
    elif out.dtype != inputs[0].dtype:
        raise contract.Decline
    expression, raw = row.expression(in_dtype)
    if expression is None:
        raise contract.Decline
    if in_dtype == "complex64" and not set(render_complex.calls(expression)) <= \
            render_complex.EXACT:
        _run_complex_in_double(op, expression, out, inputs, row.writes_bool)
        return
    _launch(op, expression, out, inputs, raw=raw,
            helpers=pointwise.helpers_source(DIALECT, row, in_dtype),
            result="bool" if row.writes_bool else None)


def _run_complex_in_double(op: str, expression: str, out: Any, inputs: Sequence[Any],
                           writes_bool: bool) -> None:
    """A complex64 function of functions (exp of a product of a log...) in complex128,
    rounded once on store, as plait-backend-xpu does: its float errors would otherwise grow
    with the inner values (``pow`` near large exponents, ``sigmoid`` near its poles)."""
    t = DIALECT.types
    wide = {v: DIALECT.pair.format(T=t["c128"], x=f"({{A}})({v}.x)", y=f"({{A}})({v}.y)")
            for v in render.INPUT_NAMES[:len(inputs)]}
    widened = expression.replace("{t}", "c128").format(**wide)
    _launch(f"{op}.c128", widened.replace("{", "{{").replace("}", "}}")
            .replace("{{A}}", "{A}"), out, inputs,
            helpers=render_complex.source_for(DIALECT, "c128", expression),
            result="bool" if writes_bool else "complex128")


def _row_kernel(op: str, arity: int) -> Callable[..., None]:
    row = pointwise.ROWS[op]

    if arity == 1:
        def kernel(out: Any, a: Any) -> None:
            _run_row(op, row, out, [a])
    else:
        def kernel(out: Any, a: Any, b: Any) -> None:  # type: ignore[misc]
            _run_row(op, row, out, [a, b])

    kernel.__name__ = kernel.__qualname__ = op
    kernel.__doc__ = f"``{contract.schema(op)}`` on cuda."
    return contract.may_decline(kernel)


@contract.may_decline
def div(out: Any, a: Any, b: Any, rounding_mode: str | None = None) -> None:
    """``div(Tensor(a!) out, Tensor a, Tensor b, str? rounding_mode=None)`` on cuda."""
    row = pointwise.DIV.get(rounding_mode)
    if row is None:
        raise contract.Decline  # an unknown mode: the reference raises PyTorch's error
    _run_row(f"div.{rounding_mode}", row, out, [a, b])


@contract.may_decline
def where(out: Any, condition: Any, a: Any, b: Any) -> None:
    """``where(Tensor(a!) out, Tensor condition, Tensor a, Tensor b)``: a selection of raw
    words, so every dtype runs."""
    if dtype_name(condition) != "bool" or a.dtype != out.dtype or b.dtype != out.dtype:
        raise contract.Decline
    _launch("where", pointwise.WHERE, out, [condition, a, b], raw=True)


@contract.may_decline
def copy_(out: Any, src: Any) -> None:
    """``copy_(Tensor(a!) out, Tensor src)``: a move between one dtype, else a cast (on one
    device; a copy between devices goes through core)."""
    if out.device != src.device:
        raise contract.Decline
    same = out.dtype == src.dtype
    if not same and dtype_name(src) in render.COMPLEX and dtype_name(out) not in render.COMPLEX:
        # the real parts, with the warning PyTorch gives (and core's CPU kernels)
        warnings.warn("Casting complex values to real discards the imaginary part",
                      UserWarning, stacklevel=2)
    _launch("copy_", "{a}", out, [src], raw=same)


def _fill_bits(value: Any, dtype: str) -> int:
    """The bits of ``value`` cast to ``dtype`` as PyTorch casts a Python scalar, as an int."""
    import numpy as np

    if dtype == "bfloat16":  # numpy has no bfloat16: round float32's bits to nearest even
        if np.isnan(np.float32(value)):
            return 0x7FC0
        bits = int(np.array(value, np.float32).view(np.uint32))
        return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF
    array = np.array(value).astype(np.dtype(dtype))
    return int.from_bytes(array.tobytes(), "little")


@contract.may_decline
def fill_(out: Any, value: Any) -> None:
    """``fill_(Tensor(a!) out, Scalar value)``: stores the value's bits."""
    name = dtype_name(out)
    if isinstance(value, complex) and name not in render.COMPLEX:
        raise contract.Decline
    raw = DIALECT.types[render.DTYPES[name].raw]
    bits = _fill_bits(value, name)
    if name == "complex128":  # 16 bytes: two 64-bit words, low first
        _launch("fill_", DIALECT.pair.format(T=raw, x="c0", y="c1"), out, [], raw=True,
                constants=[bits & (_WRAP64 - 1), bits >> 64])
        return
    _launch("fill_", f"({raw})c0", out, [], raw=True, constants=[bits])


@contract.may_decline
def arange_(out: Any, start: Any, step: Any) -> None:
    """``arange_(Tensor(a!) out, Scalar start, Scalar step)``: ``start + i * step``, in 64-bit
    integers when all three are integers, else in double, rounded once on store."""
    name = dtype_name(out)
    if name in render.COMPLEX or out.dim() != 1:
        raise contract.Decline
    dt = render.DTYPES[name]
    if (not dt.is_float and not dt.is_bool and isinstance(start, int)
            and isinstance(step, int)):
        if not (-(1 << 63) <= start < 1 << 63 and -(1 << 63) <= step < 1 << 63):
            raise contract.Decline
        i64 = DIALECT.types["i64"]
        _launch("arange_.int", f"({{T}})(({i64})c0 + i * ({i64})c1)", out, [],
                constants=[start % _WRAP64, step % _WRAP64])
        return
    if isinstance(start, complex) or isinstance(step, complex):
        raise contract.Decline
    _launch("arange_.float", "d0 + (d1 * i)", out, [],
            float_constants=[float(start), float(step)])


def kernels() -> dict[str, Callable[..., None]]:
    """Primitive name -> kernel, for ``torch_backend_register_kernels``."""
    from . import conv, fft, indexing, linalg, reductions, sorting

    table: dict[str, Callable[..., None]] = {"copy_": copy_, "fill_": fill_, "arange_": arange_,
                                              "div": div, "where": where}
    table.update({op: _row_kernel(op, 1) for op in pointwise.UNARY})
    table.update({op: _row_kernel(op, 2) for op in pointwise.BINARY})
    table.update({op: _row_kernel(op, 2) for op in pointwise.COMPARE})
    table.update(reductions.kernels())
    table.update(linalg.kernels())
    table.update(indexing.kernels())
    table.update(sorting.kernels())
    table.update(conv.kernels())
    table.update(fft.kernels())
    return table
