"""The eager fast path of plait-backend-xpu: core's ``hookspecs.FastPath`` over prepared
launches (``_C.Launch``).

Core's tiers (``a + b``, ``a * 2.0``, ``a.exp()``, a broadcast pair of layouts, ``a.sum()``,
``x.amax(-1)``) and its plan cache (a repeated call signature of an elementwise operator or a
reduction over dims: ``torch.sub(a, b)``, ``F.relu(a)``, ``x.sum(1)``) call these entry
points with the operands' stand-in addresses (``Buffer.ptr`` plus a byte offset). Each kernel
is chosen, rendered and built once, by the same code the primitive kernels use
(:func:`.kernels.row_kernel`, :func:`.reductions.plan_reduction`), so an entry point computes
exactly what the kernel it stands in for computes; its arguments are described once as slots
(buffers, element offsets, sizes, strides, the call's count or scalar). A repeated call is then
one native call: the operands' buffers found from their addresses, the output allocated from
the caching allocator, the arguments set, one enqueue. Everything else answers ``None`` (core
then takes the generic path): complex dtypes, float64 without double precision, operands on
two devices, reductions that take two passes, products (which keep their kernels' plans).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import Any

from torch.backends import contract

from . import kernels as _kernels, pointwise, render
from .render_geometry import by_output_order

# _C.Launch slot kinds (runtime/fast.h)
BUFFER, OFFSET, COUNT, SCALAR, FIXED = range(5)
# _C.FastEntries kinds
_BINARY, _SCALAR, _REVERSED, _UNARY, _SUM = range(5)
_WRAP64 = 1 << 64

# binary primitive name -> (its kernels' cache name, its row); div is true division
_BINARY_ROWS: dict[str, tuple[str, pointwise.Op]] = {
    **{name: (name, row) for name, row in pointwise.BINARY.items()},
    "div": ("div.None", pointwise.DIV[None]),
}
# what core's plan cache asks prepare() for, beyond those: comparisons, div's rounding modes
_PREPARED_ROWS: dict[str, tuple[str, pointwise.Op]] = {
    **_BINARY_ROWS,
    **{name: (name, row) for name, row in pointwise.UNARY.items()},
    **{name: (name, row) for name, row in pointwise.COMPARE.items()},
    "div_trunc": ("div.trunc", pointwise.DIV["trunc"]),
    "div_floor": ("div.floor", pointwise.DIV["floor"]),
}
# full sums served (core's generic path converts the 16-bit floats' sums)
_SUMMED = frozenset(("float32", "float64"))
# a number operand in these converts as the generic path's 0-d operand does (a 16-bit float
# would be rounded to its dtype first, which the kernel's conversion to float skips)
_SCALAR_DTYPES = frozenset(("float32", "float64"))
# the reductions of core's last-dimension tier
_REDUCE_NAMES = ("sum", "amax", "amin")
_MAX_ROWS = 256  # shapes kept; a loop over changing sizes must not grow the table forever
# unary primitives whose result keeps the dtype (core's tier 4 serves no others)
_UNARY_NAMES = tuple(name for name, row in pointwise.UNARY.items() if not row.writes_bool)


class FastPath:
    """``hookspecs.FastPath`` for xpu (see the module docstring)."""

    binary: Callable[..., Any]
    binary_scalar: Callable[..., Any]
    unary: Callable[..., Any]
    sum_all: Callable[..., Any]

    def __init__(self, native: ModuleType, registered: Mapping[str, Callable[..., Any]]) -> None:
        self._native = native
        self.binary_ops: dict[str, int] = {name: k for k, name in enumerate(_BINARY_ROWS)}
        self.unary_ops: dict[str, int] = {name: k for k, name in enumerate(_UNARY_NAMES)}
        self._binary_names = list(_BINARY_ROWS)
        # every real dtype (complex values compute through their own routes)
        self.dtype_codes: dict[Any, int] = {
            dt: code for dt, code in contract.dtype_codes(contract.DTYPE_NAMES).items()
            if not dt.is_complex}
        self.kernels = registered
        self.binary_plan = native.binary_plan
        self._rows: dict[tuple[int, int, int, int], Any] = {}  # (op, dtype, rows, cols) -> ...
        self.reduce_ops: dict[str, int] = {name: k for k, name in enumerate(_REDUCE_NAMES)}
        self.forget()
        _INSTANCES.append(self)

    def forget(self) -> None:
        """Drop the per-operation launches made so far (each is made again at its next call):
        for tests that change what a device reports."""
        entries = self._native.FastEntries(self._resolve)
        # the hot entry points are the native methods themselves (no Python frame)
        self.binary = entries.binary
        self.binary_scalar = entries.binary_scalar
        self.unary = entries.unary
        # the full sum of a contiguous float32/float64 operand into a new 0-d block (None for
        # other dtypes: the generic path converts their sums)
        self.sum_all = entries.sum_all

    # -- the per-operation entries (core's tiers), made at their first call ----------------

    def _resolve(self, kind: int, op: int, dtype: int, device: int) -> Any:
        """The launch of entry (kind, op code, dtype code, device), or None (never served)."""
        name = contract.DTYPE_NAMES[dtype]
        if kind == _SUM:  # (op is the count)
            if name not in _SUMMED:
                return None
            return self._reduction("sum", name, name, (op,), (1,), (0,),
                                   contract.dtype(name).itemsize, device)
        if kind == _UNARY:
            prim = _UNARY_NAMES[op]
            chosen = _kernels.row_kernel(prim, pointwise.UNARY[prim], name, name, 1, device, 0)
            return None if chosen is None else self._contiguous(prim, chosen, name, 1, device)
        key, row = _BINARY_ROWS[self._binary_names[op]]
        if kind == _BINARY:
            chosen = _kernels.row_kernel(key, row, name, name, 2, device, 0)
            return None if chosen is None else self._contiguous(key, chosen, name, 2, device)
        return self._with_scalar(key, row, name, device, kind == _REVERSED)

    def _contiguous(self, key: str, chosen: tuple[Any, int], name: str, arity: int,
                    device: int) -> Any:
        """A launch over contiguous operands of dtype ``name`` whose count comes with each
        call."""
        kernel, per_item = chosen
        itemsize = contract.dtype(name).itemsize
        operands = arity + 1
        slots = [(BUFFER, k, 0, 0) for k in range(operands)] + [(COUNT, 0, 0, 0)]
        slots += [(OFFSET, k, itemsize, 0) for k in range(operands)]
        group = _kernels.work_group(device)
        return self._native.Launch(kernel, slots, arity, [], [group], per_item, 0, 0,
                                   _kernels.CALLS, key.partition(".")[0])

    def _with_scalar(self, key: str, row: pointwise.Op, name: str, device: int,
                     reversed_: bool) -> Any:
        """``a op scalar`` (``scalar op a``): the row's expression with the number, converted
        to the dtype first as the generic path's 0-d operand is, in place of one input."""
        if name not in _SCALAR_DTYPES or row.writes_bool:
            return None
        expression, raw = row.expression(name)
        if expression is None or raw:
            return None
        number = "(({T})d0)"
        if reversed_:
            expression = (expression.replace("{a}", "\0").replace("{b}", "{a}")
                          .replace("\0", number))
        else:
            expression = expression.replace("{b}", number)
        wide = _kernels.device_fp64(device)
        if name in render.NEEDS_FP64 and not wide:
            return None
        kernel, per_item = _kernels.elementwise_kernel(
            f"{key}.{'rscalar' if reversed_ else 'scalar'}", expression, (name, name), device, 0,
            helpers=pointwise.helpers_source(_kernels.DIALECT, row, name), float_constants=1)
        itemsize = contract.dtype(name).itemsize
        slots = [(BUFFER, 0, 0, 0), (BUFFER, 1, 0, 0), (COUNT, 0, 0, 0),
                 (OFFSET, 0, itemsize, 0), (OFFSET, 1, itemsize, 0),
                 (SCALAR, 0, 8 if kernel.signature[-1] == "d" else 4, 0)]
        group = _kernels.work_group(device)
        return self._native.Launch(kernel, slots, 1, [], [group], per_item, 0, 0,
                                   _kernels.CALLS, key)

    # -- launches prepared for one geometry (core's broadcast tier and plan cache) ----------

    def broadcast_plan(self, op: int, dtype: int, nbytes: int, shape: Sequence[int],
                       a_strides: Sequence[int], b_strides: Sequence[int]) -> Any:
        """A prepared ``a op b`` into a contiguous output of ``shape`` (None: declined)."""
        prim = self._binary_names[op]
        name = contract.DTYPE_NAMES[dtype]
        return self._prepared(prim, name, name, shape, nbytes, [a_strides, b_strides], None)

    def prepare(self, prim: str, out_dtype: int, in_dtype: int, shape: Sequence[int],
                nbytes: int, strides: Sequence[Sequence[int]], dims: Sequence[int] | None = None,
                inner: int | None = None, out_strides: Sequence[int] | None = None) -> Any:
        """A function of the inputs' addresses running ``prim`` into a new output of
        ``nbytes`` (``hookspecs.FastPath.prepare``); None for reductions, products and what
        the kernels would not run as one elementwise launch."""
        if inner is not None:
            return None
        if dims is not None:
            return self._reduction(prim, contract.DTYPE_NAMES[out_dtype],
                                   contract.DTYPE_NAMES[in_dtype], shape, strides[0], dims,
                                   nbytes)
        return self._prepared(prim, contract.DTYPE_NAMES[out_dtype],
                              contract.DTYPE_NAMES[in_dtype], shape, nbytes, strides,
                              out_strides)

    def prepare_into(self, prim: str, dtype: int, shape: Sequence[int],
                     other_strides: Sequence[int]) -> Callable[[int, int], bool] | None:
        """A native function of ``(out, other)`` addresses writing into the existing
        contiguous block at ``out`` of dtype code ``dtype`` and ``shape``: ``out = out <prim>
        other`` for a binary ``prim``, ``out = other`` for ``copy``; ``other`` is read with
        ``other_strides`` (0 where broadcast). It answers False, having enqueued nothing, for
        an operand on another device (``hookspecs.FastPath.prepare_into``). None: not one
        elementwise launch."""
        name = contract.DTYPE_NAMES[dtype]
        if prim == "copy":
            strides = [list(other_strides)]
        else:
            found = _BINARY_ROWS.get(prim)
            if found is None or found[1].writes_bool:
                return None
            own, step = [0] * len(shape), 1
            for k in reversed(range(len(shape))):
                own[k] = step
                step *= shape[k]
            # the launch reads `out` as its first input and writes it as its output, element
            # by element (each work item reads its elements before it writes them)
            strides = [own, list(other_strides)]
        launch = self._prepared(prim, name, name, shape, 0, strides, None)
        return None if launch is None else launch.into

    def prepare_out(self, prim: str, out_dtype: int, in_dtype: int, shape: Sequence[int],
                    strides: Sequence[Sequence[int]]) -> Callable[..., bool] | None:
        """A native function of ``(out, *inputs)`` addresses running ``prim`` on the inputs
        (read with ``strides`` over ``shape``) into the existing contiguous block at ``out``:
        an ``out=`` result written by the op's one launch (``hookspecs.FastPath.prepare_out``).
        It answers False, having enqueued nothing, for an operand on another device. None: not
        one elementwise launch."""
        if prim == "copy":
            return None
        launch = self._prepared(prim, contract.DTYPE_NAMES[out_dtype],
                                contract.DTYPE_NAMES[in_dtype], shape, 0, strides, None)
        return None if launch is None else launch.write

    def reduce_rows(self, op: int, dtype: int, itemsize: int, rows: int, cols: int,
                    a: int) -> Any:
        """``op`` (:attr:`reduce_ops`) over the last dimension of a contiguous (rows, cols)
        operand into ``rows`` results of its dtype (core's tier for float32/float64)."""
        key = (op, dtype, rows, cols)
        launch = self._rows.get(key)
        if launch is None:
            name = contract.DTYPE_NAMES[dtype]
            launch = self._reduction(_REDUCE_NAMES[op], name, name, (rows, cols), (cols, 1),
                                     (1,), rows * itemsize) or False
            if len(self._rows) >= _MAX_ROWS:
                self._rows.clear()
            self._rows[key] = launch
        return launch(a) if launch else None

    def _reduction(self, prim: str, out_name: str, in_name: str, shape: Sequence[int],
                   a_strides: Sequence[int], dims: Sequence[int], nbytes: int,
                   device: int | None = None) -> Any:
        """A prepared one-pass reduction as :func:`.reductions._reduce` runs it (None where
        that takes two passes, or declines)."""
        from . import reductions, render_reduce

        names = (out_name, in_name)
        if device is None:  # (a plan's launch: for the current device)
            device = _kernels.device_module.current_device()
        if (prim not in render_reduce.REDUCTIONS or render.COMPLEX & set(names)
                or (render.NEEDS_FP64 & set(names) and not _kernels.device_fp64(device))):
            return None
        keep = [1 if k in dims else size for k, size in enumerate(shape)]
        out_strides, step = [0] * len(keep), 1
        for k in reversed(range(len(keep))):
            out_strides[k] = step
            step *= keep[k]
        planned = reductions.plan_reduction(prim, device, list(shape), list(a_strides),
                                            out_strides, dims)
        if planned is None:
            return None
        osizes, ost_out, ost_a, isizes, ist_a, n_out, r, group, parts, lanes = planned
        if parts > 1 or not n_out:
            return None
        kernel = reductions.reduction_kernel(prim, device, names, len(osizes), len(isizes),
                                             group, lanes)
        slots = [(BUFFER, 0, 0, 0), (BUFFER, 1, 0, 0), (FIXED, 0, 8, n_out), (FIXED, 0, 8, r),
                 (OFFSET, 0, contract.dtype(out_name).itemsize, 0),
                 (OFFSET, 1, contract.dtype(in_name).itemsize, 0)]
        slots += [(FIXED, 0, 8, v % _WRAP64) for v in (*osizes, *ost_out, *ost_a, *isizes,
                                                       *ist_a)]
        if group:
            global_size, local = n_out * group, group
        else:
            local = _kernels.work_group(device)
            global_size = -(-n_out // local) * local
        return self._native.Launch(kernel, slots, 1, [global_size], [local], 1, n_out, nbytes,
                                   _kernels.CALLS, prim)

    def _prepared(self, prim: str, out_name: str, in_name: str, shape: Sequence[int],
                  nbytes: int, strides: Sequence[Sequence[int]],
                  out_strides: Sequence[int] | None) -> Any:
        numel = 1
        for size in shape:
            numel *= size
        if not numel or in_name in render.COMPLEX or out_name in render.COMPLEX:
            return None
        # The plan of a call signature holds no device index: its launch is built for the
        # current device, and a call with operands elsewhere answers None (the generic path).
        device = _kernels.device_module.current_device()
        arity = len(strides)
        operands = arity + 1
        if out_strides is None:
            out_strides, step = [], 1
            for size in reversed(shape):
                out_strides.insert(0, step)
                step *= size
        # (in the output's memory order, as the generic launch takes them: the same kernel)
        sizes, merged = _kernels.merge(*by_output_order(list(shape), [
            list(out_strides), *(list(st) for st in strides)]))
        rank = 0 if not sizes or all(st == [1] for st in merged) else len(sizes)
        if rank > _kernels.max_rank(operands):
            return None
        if prim == "where":
            if arity != 3 or out_name != in_name:
                return None
            kernel, per_item = _kernels.elementwise_kernel(
                "where", pointwise.WHERE, (out_name, "bool", in_name, in_name), device, rank,
                raw=True)
            key = "where"
        elif prim == "copy":
            if arity != 1:
                return None
            same = out_name == in_name
            if not same and render.NEEDS_FP64 & {out_name, in_name} and \
                    not _kernels.device_fp64(device):
                return None
            kernel, per_item = _kernels.elementwise_kernel(
                "copy_", "{a}", (out_name, in_name), device, rank, raw=same)
            key = "copy_"
        else:
            found = _PREPARED_ROWS.get(prim)
            if found is None or (arity == 1) != (prim in pointwise.UNARY):
                return None
            key, row = found
            chosen = _kernels.row_kernel(key, row, in_name, out_name, arity, device, rank)
            if chosen is None:
                return None
            kernel, per_item = chosen
        names = (out_name, "bool", in_name, in_name) if prim == "where" else \
            (out_name, *(in_name,) * arity)
        slots = [(BUFFER, k, 0, 0) for k in range(operands)] + [(FIXED, 0, 8, numel)]
        slots += [(OFFSET, k, contract.dtype(names[k]).itemsize, 0) for k in range(operands)]
        if rank:
            slots += [(FIXED, 0, 8, size) for size in sizes]
            slots += [(FIXED, 0, 8, st % _WRAP64) for operand in merged for st in operand]
        group = _kernels.work_group(device)
        items = -(-numel // per_item)
        return self._native.Launch(kernel, slots, arity, [-(-items // group) * group], [group],
                                   1, numel, nbytes, _kernels.CALLS, key.partition(".")[0])


# Every FastPath made (one per process in practice), for forget().
_INSTANCES: list[FastPath] = []


def forget() -> None:
    """:meth:`FastPath.forget` on every fast path."""
    for fast in _INSTANCES:
        fast.forget()
