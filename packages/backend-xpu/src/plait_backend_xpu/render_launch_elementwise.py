"""A GPU backend's elementwise and memory primitives: every row of :mod:`.pointwise`, ``div``
with its rounding modes, ``where``, ``copy_``, ``fill_`` and ``arange_``. One source for
plait-backend-xpu and plait-backend-cuda: each primitive checks its operands' dtypes (declining
what the tables do not render, so core's CPU fallback serves it) and :func:`launch` renders,
builds and enqueues its expression through the backend's hooks
(:class:`~.render_launch.LaunchBackend`: its ``elementwise_kernel`` picks the kernel)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

from torch.backends import contract

from . import pointwise, render, render_complex
from .render_geometry import by_output_order, merge
from .render_launch import LaunchBackend

_WRAP64 = 1 << 64

#: The backend's own way to run a checked row (plait-backend-xpu keeps a table of contiguous
#: launches in front of :func:`run_row`): ``(op, row, out, inputs)``.
RowRunner = Callable[[str, pointwise.Op, Any, Sequence[Any]], Any]


def max_rank(parameter_words: int, operands: int, scalars: int = 0) -> int:
    """The most dims an elementwise launch over ``operands`` describes within
    ``parameter_words`` 8-byte kernel arguments (a buffer, an offset, a stride per dim each;
    n, the sizes, ``scalars`` constants): 30 for three operands in OpenCL's 128 words, more
    than the dims a tensor has that do not merge in practice. (Declining there would send a
    copy to the CPU fallback, whose copy to the host is the same copy.)"""
    return (parameter_words - 1 - 2 * operands - scalars) // (1 + operands)


def geometry(tensors: Sequence[Any]) -> tuple[list[int], list[list[int]]]:
    """The iteration shape and each tensor's strides, in the first tensor's (the output's)
    memory order, with size-1 dimensions dropped and neighbours merged where every tensor
    steps through them as one (a contiguous block stays one dimension, a transposed dense
    one too when every operand shares its layout). ``[]`` shape: one element."""
    return merge(*by_output_order(list(tensors[0].shape), [list(t.stride()) for t in tensors]))


def launch(b: LaunchBackend, op: str, expression: str, out: Any, inputs: Sequence[Any],
           raw: bool = False, constants: Sequence[int] = (), helpers: str = "",
           float_constants: Sequence[float] = (), result: str | None = None,
           vector: bool = False) -> tuple[Any, int]:
    """Render (once), build (once) and enqueue ``out = expression(inputs)`` on ``b``; ``op``
    names the expression (with its variant) in the kernel cache. ``vector``: the expression
    means the same on vectors (:data:`.pointwise.VECTOR_SAFE`), for backends with vector
    kernels. Returns the kernel launched (None for no elements) and the elements each work
    item takes."""
    n = out.numel()
    if n == 0:
        b.calls[op.partition(".")[0]] += 1
        return None, 1
    operands = [out, *inputs]
    names = tuple(b.dtype_name(t) for t in operands)
    if not raw:
        b.require_fp64(out, names)
    shape, strides = geometry(operands)
    contiguous = all(st == [1] for st in strides) or not shape
    rank = 0 if contiguous else len(shape)
    if rank > max_rank(b.parameter_words, len(operands), len(constants) + len(float_constants)):
        raise contract.Decline
    index = out.device.index or 0
    kernel, per_item = b.elementwise_kernel(
        op, expression, names, index, rank, raw=raw, constants=len(constants), helpers=helpers,
        float_constants=len(float_constants), result=result, vector=vector)
    buffers, offsets = b.buffer_args(operands)
    args: list[Any] = [*buffers, n, *offsets]
    if rank:
        args += shape
        for st in strides:
            args += st
    args += constants
    args += float_constants
    b.calls[op.partition(".")[0]] += 1
    b.launch_1d(kernel, -(-n // per_item), index, args)
    return kernel, per_item


def run_row(b: LaunchBackend, op: str, row: pointwise.Op, out: Any, inputs: Sequence[Any]
            ) -> tuple[Any, int]:
    """Check the operands' dtypes against ``row`` (declining what it does not render) and
    launch it; returns :func:`launch`'s kernel and elements per work item."""
    in_dtype = b.dtype_name(inputs[0])
    if any(t.dtype != inputs[0].dtype for t in inputs):
        raise contract.Decline
    if row.writes_bool:
        if b.dtype_name(out) != "bool":
            raise contract.Decline
    elif out.dtype != inputs[0].dtype:
        raise contract.Decline
    expression, raw = row.expression(in_dtype)
    if expression is None:
        raise contract.Decline
    if in_dtype == "complex64" and not set(render_complex.calls(expression)) <= \
            render_complex.EXACT and b.has_fp64(out):
        return _run_complex_in_double(b, op, expression, out, inputs, row.writes_bool)
    return launch(b, op, expression, out, inputs, raw=raw,
                  helpers=pointwise.helpers_source(b.dialect, row, in_dtype),
                  result="bool" if row.writes_bool else None, vector=op in pointwise.VECTOR_SAFE)


def _run_complex_in_double(b: LaunchBackend, op: str, expression: str, out: Any,
                           inputs: Sequence[Any], writes_bool: bool) -> tuple[Any, int]:
    """A complex64 function of functions (exp of a product of a log...) in complex128,
    rounded once on store: its float errors would otherwise grow with the inner values
    (``pow`` near large exponents, ``sigmoid`` near its poles)."""
    t = b.dialect.types
    wide = {v: b.dialect.pair.format(T=t["c128"], x=f"({{A}})({v}.x)", y=f"({{A}})({v}.y)")
            for v in render.INPUT_NAMES[:len(inputs)]}
    # {A} (the device's widest float: double) makes the renderer enable double precision
    widened = expression.replace("{t}", "c128").format(**wide)
    return launch(b, f"{op}.c128", widened.replace("{", "{{").replace("}", "}}")
                  .replace("{{A}}", "{A}"), out, inputs,
                  helpers=render_complex.source_for(b.dialect, "c128", expression),
                  result="bool" if writes_bool else "complex128")


def fill_bits(value: Any, dtype: str) -> int:
    """The bits of ``value`` cast to ``dtype`` as PyTorch casts a Python scalar, as an int."""
    import numpy as np

    if dtype == "bfloat16":  # numpy has no bfloat16: round float32's bits to nearest even
        if np.isnan(np.float32(value)):
            return 0x7FC0
        bits = int(np.array(value, np.float32).view(np.uint32))
        return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF
    array = np.array(value).astype(np.dtype(dtype))
    return int.from_bytes(array.tobytes(), "little")


def _named(kernel: Callable[..., None], op: str, doc: str) -> Callable[..., None]:
    kernel.__name__ = kernel.__qualname__ = op
    kernel.__doc__ = doc
    return contract.may_decline(kernel)


def _row_kernel(backend: LaunchBackend, run: RowRunner, op: str, arity: int) -> Callable[..., None]:
    row = pointwise.ROWS[op]
    if arity == 1:
        def kernel(out: Any, a: Any) -> None:
            run(op, row, out, [a])
    else:
        def kernel(out: Any, a: Any, b: Any) -> None:  # type: ignore[misc]
            run(op, row, out, [a, b])
    return _named(kernel, op, f"``{contract.schema(op)}`` on {backend.name}.")


def _memory_kernels(backend: LaunchBackend, run: RowRunner) -> dict[str, Callable[..., None]]:
    """``div``, ``where``, ``copy_``, ``fill_`` and ``arange_`` on ``backend``."""

    def div(out: Any, a: Any, b: Any, rounding_mode: str | None = None) -> None:
        row = pointwise.DIV.get(rounding_mode)
        if row is None:
            raise contract.Decline  # an unknown mode: the reference raises PyTorch's error
        run(f"div.{rounding_mode}", row, out, [a, b])

    def where(out: Any, condition: Any, a: Any, b: Any) -> None:
        if (backend.dtype_name(condition) != "bool" or a.dtype != out.dtype
                or b.dtype != out.dtype):
            raise contract.Decline
        launch(backend, "where", pointwise.WHERE, out, [condition, a, b], raw=True)

    def copy_(out: Any, src: Any) -> None:
        if out.device != src.device:
            raise contract.Decline  # a copy between devices goes through core
        same = out.dtype == src.dtype
        if (not same and backend.dtype_name(src) in render.COMPLEX
                and backend.dtype_name(out) not in render.COMPLEX):
            # the real parts, with the warning PyTorch gives (and core's CPU kernels)
            warnings.warn("Casting complex values to real discards the imaginary part",
                          UserWarning, stacklevel=2)
        launch(backend, "copy_", "{a}", out, [src], raw=same)

    def fill_(out: Any, value: Any) -> None:
        name = backend.dtype_name(out)
        if isinstance(value, complex) and name not in render.COMPLEX:
            raise contract.Decline
        raw = backend.dialect.types[render.DTYPES[name].raw]
        bits = fill_bits(value, name)
        if name == "complex128":  # 16 bytes: two 64-bit words, low first
            pair = backend.dialect.pair.format(T=raw, x="c0", y="c1")
            launch(backend, "fill_", pair, out, [], raw=True,
                   constants=[bits & (_WRAP64 - 1), bits >> 64])
            return
        launch(backend, "fill_", f"({raw})c0", out, [], raw=True, constants=[bits])

    def arange_(out: Any, start: Any, step: Any) -> None:
        name = backend.dtype_name(out)
        if name in render.COMPLEX or out.dim() != 1:
            raise contract.Decline
        dt = render.DTYPES[name]
        if (not dt.is_float and not dt.is_bool and isinstance(start, int)
                and isinstance(step, int)):
            if not (-(1 << 63) <= start < 1 << 63 and -(1 << 63) <= step < 1 << 63):
                raise contract.Decline
            i64 = backend.dialect.types["i64"]
            launch(backend, "arange_.int", f"({{T}})(({i64})c0 + i * ({i64})c1)", out, [],
                   constants=[start % _WRAP64, step % _WRAP64])
            return
        if isinstance(start, complex) or isinstance(step, complex):
            raise contract.Decline
        launch(backend, "arange_.float", "d0 + (d1 * i)", out, [],
               float_constants=[float(start), float(step)])

    on = f"on {backend.name}"
    docs = {
        "div": f"``div(Tensor(a!) out, Tensor a, Tensor b, str? rounding_mode=None)`` {on}.",
        "where": "``where(Tensor(a!) out, Tensor condition, Tensor a, Tensor b)``: a selection"
                 f" of raw words, so every dtype (complex included) runs {on}.",
        "copy_": "``copy_(Tensor(a!) out, Tensor src)``: a move between one dtype, else a cast"
                 f" (on one device; a copy between devices goes through core) {on}.",
        "fill_": f"``fill_(Tensor(a!) out, Scalar value)``: stores the value's bits {on}.",
        "arange_": "``arange_(Tensor(a!) out, Scalar start, Scalar step)``: ``start + i * "
                   "step``, in 64-bit integers when all three are integers, else in double "
                   f"(float without double precision), rounded once on store {on}.",
    }
    functions = {"div": div, "where": where, "copy_": copy_, "fill_": fill_,
                 "arange_": arange_}
    return {op: _named(f, op, docs[op]) for op, f in functions.items()}


def kernels(b: LaunchBackend, run: RowRunner | None = None) -> dict[str, Callable[..., None]]:
    """Primitive name -> kernel for the elementwise rows and the memory primitives on ``b``;
    ``run`` is the backend's row runner (default: :func:`run_row` on ``b``)."""
    if run is None:
        def run(op: str, row: pointwise.Op, out: Any, inputs: Sequence[Any]) -> Any:
            return run_row(b, op, row, out, inputs)
    table = _memory_kernels(b, run)
    table.update({op: _row_kernel(b, run, op, 1) for op in pointwise.UNARY})
    table.update({op: _row_kernel(b, run, op, 2) for op in pointwise.BINARY})
    table.update({op: _row_kernel(b, run, op, 2) for op in pointwise.COMPARE})
    return table
