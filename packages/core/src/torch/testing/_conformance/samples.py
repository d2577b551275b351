"""The conformance samples: for each primitive, its dtypes and the calls that test it.

:data:`SAMPLES` maps a primitive name (a row of ``torch._core.prims.PRIMITIVES``) to a
:class:`Samples` row: the dtypes the reference kernel supports for it and a function making
the :class:`~.harness.Case` list for one dtype. A primitive of the table with no row here
fails the suite ("no samples"), so a new primitive cannot pass unnoticed.

Cases follow the primitive conventions: inputs have the output's dtype (except where the
primitive says otherwise), are broadcast already, and come in every layout (contiguous,
transposed, sliced/strided, stride-0 broadcast) and shape class (0-d, zero-size, odd 1-d
lengths for vector tails, sizes large enough for a backend's threaded path). Floating inputs
include special values (NaN, infinities, signed zeros, subnormals) where the primitive defines
what they give.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ... import _refs
from ..._core import dtype as _dtype, op_tables as _op_tables
from .harness import Alias, Case, Operand, Output, storage_dtype

# dtype names (the op tables' groups)
FLOATS, INTS, COMPLEX = _op_tables.FLOATS, _op_tables.INTS, _op_tables.COMPLEX
BOOL = _op_tables.BOOL_DTYPE
REAL, ALL, EVERY = _op_tables.REAL, _op_tables.ALL, _op_tables.EVERY

SPECIALS = (math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 1e-40, -3.75,
            1e30)

# A large case per group runs a backend's vectorised and threaded paths.
LARGE = (129, 257)


@dataclass(frozen=True)
class Samples:
    """How one primitive is tested.

    :param dtypes: dtype names the item runs for (the reference kernel supports each).
    :param cases: ``cases(gen, dtype) -> list[Case]``.
    :param tolerance: ``dtype name -> (rtol, atol)`` for every case of the primitive.
    """

    dtypes: tuple[str, ...]
    cases: Callable[[Gen, _dtype.dtype], list[Case]]
    tolerance: dict[str, tuple[float, float]] = field(default_factory=dict)


def dtype(name: str) -> _dtype.dtype:
    return _dtype.DTYPES[name]


class Gen:
    """Seeded sample values, in the storage representation of their dtype."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def values(self, shape: tuple[int, ...], dt: _dtype.dtype, low: float = -5.0,
               high: float = 5.0, *, special: bool = False, nonzero: bool = False
               ) -> np.ndarray:
        """Values in ``[low, high)`` (integers: clipped to the dtype's range; ``nonzero``
        avoids 0); ``special`` puts :data:`SPECIALS` at the first positions (floats only)."""
        n = int(np.prod(shape, dtype=np.int64))
        if dt is _dtype.bool_:
            raw: np.ndarray = self.rng.integers(0, 2, n).astype(bool)
        elif dt._category <= _dtype.INT:
            info = np.iinfo(storage_dtype(dt))
            lo = max(math.ceil(low), int(info.min))
            hi = min(math.ceil(high), int(info.max) + 1)
            raw = self.rng.integers(lo, max(hi, lo + 1), n, dtype=np.int64)
            if nonzero:
                raw = np.where(raw == 0, 1 if hi > 1 else -1, raw)
        else:
            raw = self.rng.uniform(low, high, n)
            if dt.is_complex:
                raw = raw + 1j * self.rng.uniform(low, high, n)
            if nonzero:
                raw = np.where(raw == 0, 1.0, raw)
            if special and not dt.is_complex:
                k = min(n, len(SPECIALS))
                raw[:k] = SPECIALS[:k]
        return to_storage(raw.reshape(shape), dt)


def to_storage(values: Any, dt: _dtype.dtype) -> np.ndarray:
    """``values`` rounded to ``dt``, as a storage of ``dt`` holds them."""
    arr = np.asarray(values)
    if dt is _dtype.bfloat16:
        return _refs.f32_to_bf16(arr.astype(np.float32))
    with np.errstate(all="ignore"):
        return arr.astype(storage_dtype(dt))


def as_float(values: np.ndarray, dt: _dtype.dtype) -> np.ndarray:
    """Storage values as numbers numpy computes with (bfloat16 bits -> float32)."""
    return _refs.bf16_to_f32(values) if dt is _dtype.bfloat16 else values


# -- elementwise ------------------------------------------------------------------------------

# An operand maker: (gen, shape, dtype) -> storage values.
Maker = Callable[[Gen, tuple[int, ...], _dtype.dtype], np.ndarray]


def uniform(low: float = -5.0, high: float = 5.0, *, special: bool = True,
            nonzero: bool = False) -> Maker:
    def make(gen: Gen, shape: tuple[int, ...], dt: _dtype.dtype) -> np.ndarray:
        return gen.values(shape, dt, low, high, special=special, nonzero=nonzero)

    return make


def _bool_maker(gen: Gen, shape: tuple[int, ...], dt: _dtype.dtype) -> np.ndarray:
    return gen.values(shape, _dtype.bool_)


def _specials_grid(dt: _dtype.dtype, arity: int) -> list[np.ndarray]:
    """Every pair (arity 2) of special values, or the specials themselves (arity 1)."""
    s = np.array(SPECIALS, np.float64)
    if arity == 1:
        return [to_storage(s.reshape(2, -1), dt)]
    a, b = np.meshgrid(s, s, indexing="ij")
    return [to_storage(a, dt), to_storage(b, dt)] + [to_storage(a, dt)] * (arity - 2)


def elementwise(out_dtype: Callable[[_dtype.dtype], _dtype.dtype],
                makers: tuple[Maker, ...],
                in_dtypes: tuple[Callable[[_dtype.dtype], _dtype.dtype], ...] | None = None,
                specials: bool = True, inplace: bool = True,
                ) -> Callable[[Gen, _dtype.dtype], list[Case]]:
    """Cases of an elementwise primitive with ``len(makers)`` inputs: every layout for each
    operand, 0-d, zero-size, odd 1-d, large, in place (when the output's dtype is the
    inputs'), and (floats) all special-value pairs."""

    def cases(gen: Gen, dt: _dtype.dtype) -> list[Case]:
        odt = out_dtype(dt)
        idts = [f(dt) for f in in_dtypes] if in_dtypes else [dt] * len(makers)
        n = len(makers)

        def op(shape: tuple[int, ...], i: int, layout: str = "contiguous",
               base: tuple[int, ...] | None = None) -> Operand:
            values = makers[i](gen, base if base is not None else shape, idts[i])
            return Operand(values, idts[i], layout, shape if base is not None else None)

        def case(label: str, shape: tuple[int, ...], layouts: tuple[str, ...] = (),
                 out_layout: str = "contiguous") -> Case:
            args = []
            for i in range(n):
                layout = layouts[i] if i < len(layouts) else "contiguous"
                if layout == "broadcast":
                    # the first broadcast operand is a row, the next ones Python scalars
                    # (0-d expanded to the output's shape)
                    base = (1, shape[1]) if i == layouts.index("broadcast") else (1, 1)
                    args.append(op(shape, i, layout, base))
                else:
                    args.append(op(shape, i, layout))
            return Case(label, (Output(shape, odt, out_layout),), tuple(args))

        result = [
            case("contiguous", (4, 5)),
            case("transposed", (4, 5), ("transposed",) * n),
            case("strided", (4, 5), ("strided", "transposed", "strided")),
            case("broadcast", (4, 5), ("broadcast",) * n),
            case("broadcast mixed", (4, 5), ("contiguous", "broadcast", "broadcast")),
            case("out transposed", (4, 5), (), "transposed"),
            case("out strided", (4, 5), ("transposed",), "strided"),
            case("0-d", ()),
            case("zero-size", (0, 3)),
            case("1-d odd length", (37,)),
            case("large", LARGE),
            case("large strided", LARGE, ("strided", "broadcast", "transposed"), "strided"),
        ]
        if inplace and all(d is odt for d in idts):
            # in place (x.op_(y) runs op(x, x, y)): the output is the first input, also when
            # it is not contiguous; the other operand is a broadcast row
            for layout in ("contiguous", "transposed", "strided"):
                first = makers[0](gen, (4, 5), idts[0])
                rest = [op((4, 5), i, "broadcast", (1, 5)) for i in range(1, n)]
                result.append(Case(f"in place, {layout}", (Output((4, 5), odt, layout, first),),
                                   (Alias(0), *rest)))
        if specials and dt.is_floating_point and all(d is dt for d in idts):
            grid = _specials_grid(dt, n)
            result.append(Case("special values", (Output(grid[0].shape, odt),),
                               tuple(Operand(g, dt) for g in grid[:n])))
        return result

    return cases


def same(dt: _dtype.dtype) -> _dtype.dtype:
    return dt


def boolean(dt: _dtype.dtype) -> _dtype.dtype:
    return _dtype.bool_


def _int_range(dt: _dtype.dtype) -> tuple[int, int]:
    info = np.iinfo(storage_dtype(dt))
    return int(info.min), int(info.max) + 1


def _wrapping(gen: Gen, shape: tuple[int, ...], dt: _dtype.dtype) -> np.ndarray:
    """Integers over the whole range (overflow must wrap); floats as usual."""
    if dt._category == _dtype.INT:
        lo, hi = _int_range(dt)
        return gen.values(shape, dt, lo, hi)
    return gen.values(shape, dt, special=True)


def _shift_amounts(gen: Gen, shape: tuple[int, ...], dt: _dtype.dtype) -> np.ndarray:
    # in range mostly, a few past the width (the reference defines those: 0 or the sign)
    bits = dt.itemsize * 8
    return gen.values(shape, dt, 0, bits + 2)


def _maker(entry: object) -> Maker:
    """The operand maker of one entry of an op table row's sample domain."""
    if isinstance(entry, tuple):
        low, high, *flags = entry
        return uniform(low, high, nonzero=_op_tables.NONZERO in flags)
    return {_op_tables.ANY: uniform(), _op_tables.WRAP: _wrapping,
            _op_tables.SHIFT: _shift_amounts, _op_tables.BOOL: _bool_maker}[entry]


def _pointwise_rows() -> dict[str, Samples]:
    """The elementwise primitives' samples, from the pointwise op table: each primitive's
    dtypes, and makers from its sample domain (bool-writing primitives take the item's dtype
    as their inputs')."""
    rows: dict[str, Samples] = {}
    for kind in ("unary", "binary", "compare", "ternary"):
        for prim in _op_tables.primitives(kind):
            row = next(r for r in _op_tables.POINTWISE if r.prim == prim)
            makers = tuple(_maker(entry) for entry in row.domain)
            writes_bool = kind == "compare" or row.promotion == "to_bool"
            in_dtypes = tuple(boolean if entry == _op_tables.BOOL else same
                              for entry in row.domain)
            cases = elementwise(boolean if writes_bool else same, makers,
                                in_dtypes if (writes_bool or kind == "ternary") else None,
                                specials=kind != "ternary", inplace=kind != "ternary")
            if prim == "div":
                cases = _div_cases(makers)
            rows[prim] = Samples(_op_tables.primitive_dtypes(prim), cases)
    return rows


def _div_cases(makers: tuple[Maker, ...]) -> Callable[[Gen, _dtype.dtype], list[Case]]:
    """True division (floats only: core promotes integers first), then trunc and floor."""

    def cases(gen: Gen, dt: _dtype.dtype) -> list[Case]:
        modes: tuple[str | None, ...] = ("trunc", "floor")  # integers
        if dt.is_floating_point:
            modes = (None, "trunc", "floor")
        elif dt.is_complex:
            modes = (None,)
        base = elementwise(same, makers)(gen, dt)
        return [Case(f"{c.label}, rounding_mode={m}", c.outputs, (*c.args, m))
                for m in modes for c in base]

    return cases


# -- memory -----------------------------------------------------------------------------------


def _copy_cases(gen: Gen, dt: _dtype.dtype) -> list[Case]:
    """Every source dtype into a ``dt`` output (the item's dtype is the output's)."""
    result = []
    for src_name in EVERY:
        src = dtype(src_name)
        if src.is_complex and not dt.is_complex:
            continue  # complex -> real discards the imaginary part with a warning: legacy
        if src.is_floating_point and dt._category <= _dtype.INT and dt is not _dtype.bool_:
            # float -> integer is undefined outside the integer's range (and for NaN)
            low, high, special = (0.0, 100.0, False) if dt is _dtype.uint8 else (
                -100.0, 100.0, False)
        elif src._category == _dtype.INT:
            low, high, special = -300.0, 300.0, False
        else:
            low, high, special = -5.0, 5.0, True

        def op(shape: tuple[int, ...], layout: str = "contiguous",
               base: tuple[int, ...] | None = None, src: _dtype.dtype = src,
               low: float = low, high: float = high, special: bool = special) -> Operand:
            values = gen.values(base if base is not None else shape, src, low, high,
                                special=special)
            return Operand(values, src, layout, shape if base is not None else None)

        def case(label: str, shape: tuple[int, ...], operand: Operand,
                 out_layout: str = "contiguous", src_name: str = src_name) -> Case:
            return Case(f"from {src_name}, {label}", (Output(shape, dt, out_layout),),
                        (operand,))

        result += [
            case("contiguous", (4, 5), op((4, 5))),
            case("transposed", (4, 5), op((4, 5), "transposed")),
            case("strided", (4, 5), op((4, 5), "strided"), "strided"),
            case("broadcast row", (4, 5), op((4, 5), "broadcast", (1, 5))),
            case("broadcast scalar", (4, 5), op((4, 5), "broadcast", (1, 1))),
            case("out transposed", (4, 5), op((4, 5)), "transposed"),
            case("0-d", (), op(())),
            case("zero-size", (0, 3), op((0, 3))),
        ]
        if src is dt or src_name in ("float32", "int64", "bool"):
            result += [
                case("1-d odd length", (37,), op((37,))),
                case("large", LARGE, op(LARGE)),
                case("large transposed", LARGE, op(LARGE, "transposed")),
                case("large broadcast", LARGE, op(LARGE, "broadcast", (1, LARGE[1])),
                     "strided"),
            ]
        if src._category == _dtype.INT:
            lo, hi = _int_range(src)
            extremes = to_storage(np.array([lo, hi - 1, 0, 1]), src)
            result.append(case("integer extremes", (4,), Operand(extremes, src)))
    return result


def _fill_values(dt: _dtype.dtype) -> list[Any]:
    if dt is _dtype.bool_:
        return [True, False, 1, 0]
    if dt._category == _dtype.INT:
        lo, hi = _int_range(dt)
        return [0, 7, lo, hi - 1, True]
    if dt.is_complex:
        return [1.5 - 2j, 0.0, 3]
    return [0.0, -1.5, 1 / 3, math.nan, math.inf, -math.inf, 1e-8, 3, -0.0, 1e5]


def _fill_cases(gen: Gen, dt: _dtype.dtype) -> list[Case]:
    result = []
    for value in _fill_values(dt):
        for label, shape, layout in (("contiguous", (4, 5), "contiguous"),
                                     ("transposed", (4, 5), "transposed"),
                                     ("strided", (4, 5), "strided"), ("0-d", (), "contiguous"),
                                     ("zero-size", (0, 3), "contiguous"),
                                     ("1-d odd length", (37,), "contiguous")):
            result.append(Case(f"{value!r}, {label}", (Output(shape, dt, layout),), (value,)))
    result.append(Case("large", (Output(LARGE, dt),), (_fill_values(dt)[1],)))
    result.append(Case("large strided", (Output(LARGE, dt, "strided"),), (_fill_values(dt)[1],)))
    return result


def _arange_cases(gen: Gen, dt: _dtype.dtype) -> list[Case]:
    if dt._category == _dtype.INT:
        lo, hi = _int_range(dt)
        starts: list[tuple[Any, Any]] = [(0, 1), (5, 2), (min(hi - 1, 100), -1)]
        long_n = 1000 if hi > 100000 else (hi - lo) // 3
    else:
        starts = [(0.0, 1.0), (0.5, 0.25), (-3, 0.1), (100.0, -2.5), (1, 2)]
        long_n = 1000 if dt is not _dtype.float16 else 500
    result = []
    for start, step in starts:
        for n in (0, 1, 17):
            result.append(Case(f"start={start}, step={step}, n={n}", (Output((n,), dt),),
                               (start, step)))
        result.append(Case(f"start={start}, step={step}, n=13, strided",
                           (Output((13,), dt, "strided"),), (start, step)))
        n = long_n if abs(step) < 3 or dt._category != _dtype.INT else 20
        if dt._category == _dtype.INT and step < 0:
            n = min(n, 100)
        result.append(Case(f"start={start}, step={step}, n={n} (long)", (Output((n,), dt),),
                           (start, step)))
    return result


# -- reductions and scans -----------------------------------------------------------------------

_REDUCE_SHAPE = (4, 5, 6)


def _reduced(shape: tuple[int, ...], dims: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(1 if d in dims else s for d, s in enumerate(shape))


def _reduction_inputs(gen: Gen, dt: _dtype.dtype, low: float, high: float,
                      shape: tuple[int, ...]) -> list[tuple[str, Operand]]:
    def values(s: tuple[int, ...]) -> np.ndarray:
        return gen.values(s, dt, low, high)

    ops = [("contiguous", Operand(values(shape), dt)),
           ("transposed", Operand(values(shape), dt, "transposed")),
           ("strided", Operand(values(shape), dt, "strided"))]
    if len(shape) == 3:
        base = (shape[0], 1, shape[2])
        ops.append(("broadcast", Operand(values(base), dt, "broadcast", shape)))
    return ops


def _window(large_range: tuple[float, float], dt: _dtype.dtype) -> tuple[float, float]:
    """The parts' window that keeps a large product's factors in ``large_range``: complex
    parts shrink by sqrt(2), so that magnitudes (not parts) lie there (a product of a few
    hundred factors of magnitude ~1.41 overflows, in an order-dependent way)."""
    if dt.is_complex:
        return large_range[0] / math.sqrt(2), large_range[1] / math.sqrt(2)
    return large_range


def reduction(out_dtype: Callable[[_dtype.dtype], _dtype.dtype], low: float = -5.0,
              high: float = 5.0, *, empty_ok: bool = True, large_range: tuple[float, float] |
              None = None) -> Callable[[Gen, _dtype.dtype], list[Case]]:
    """Cases of ``name(out, a, dims)``: dims sets over every input layout, 0-d, zero-size,
    large, special values."""

    def cases(gen: Gen, dt: _dtype.dtype) -> list[Case]:
        odt = out_dtype(dt)
        result = []
        for dims in ((0,), (1,), (2,), (0, 2), (0, 1, 2)):
            out_shape = _reduced(_REDUCE_SHAPE, dims)
            for label, a in _reduction_inputs(gen, dt, low, high, _REDUCE_SHAPE):
                result.append(Case(f"dims={list(dims)}, {label}", (Output(out_shape, odt),),
                                   (a, list(dims))))
            result.append(Case(f"dims={list(dims)}, out transposed",
                               (Output(out_shape, odt, "transposed"),),
                               (Operand(gen.values(_REDUCE_SHAPE, dt, low, high), dt),
                                list(dims))))
        result.append(Case("0-d", (Output((), odt),), (Operand(gen.values((), dt, low, high),
                                                                dt), [])))
        zero = [((3, 0), (0,)), ((3, 0), (1,))] if empty_ok else [((3, 0), (0,))]
        for shape, dims in zero:
            result.append(Case(f"zero-size {shape}, dims={list(dims)}",
                               (Output(_reduced(shape, dims), odt),),
                               (Operand(gen.values(shape, dt), dt), list(dims))))
        lo2, hi2 = _window(large_range, dt) if large_range else (low, high)
        for dims in ((1,), (0,), (0, 1)):
            shape = (256, 130)
            result.append(Case(f"large, dims={list(dims)}", (Output(_reduced(shape, dims), odt),),
                               (Operand(gen.values(shape, dt, lo2, hi2), dt), list(dims))))
        result.append(Case("large transposed, dims=[1]", (Output((256, 1), odt),),
                           (Operand(gen.values((256, 130), dt, lo2, hi2), dt, "transposed"),
                            [1])))
        if dt.is_floating_point:
            # the specials come first in row-major order: spread them so that every row, and
            # most columns, meets some
            special = gen.values((12, 4), dt, special=True).T.copy()
            for dims in ((0,), (1,)):
                result.append(Case(f"special values, dims={list(dims)}",
                                   (Output(_reduced((4, 12), dims), odt),),
                                   (Operand(special, dt), list(dims))))
        return result

    return cases


def scan(low: float = -5.0, high: float = 5.0, *, with_indices: bool = False,
         index_out: bool = False, large_range: tuple[float, float] | None = None
         ) -> Callable[[Gen, _dtype.dtype], list[Case]]:
    """Cases of ``name(out, a, dim)`` (scans; argmax/argmin with ``index_out``, whose output
    is the keepdim int64 index) or ``name(values, indices, a, dim)`` (``with_indices``)."""

    def outputs(shape: tuple[int, ...], dt: _dtype.dtype, dim: int,
                layout: str = "contiguous") -> tuple[Output, ...]:
        if index_out:
            return (Output(_reduced(shape, (dim,)) if shape else (), _dtype.int64, layout),)
        if with_indices:
            return (Output(shape, dt, layout), Output(shape, _dtype.int64, layout))
        return (Output(shape, dt, layout),)

    def cases(gen: Gen, dt: _dtype.dtype) -> list[Case]:
        result = []
        for dim in (0, 1, 2):
            for label, a in _reduction_inputs(gen, dt, low, high, _REDUCE_SHAPE):
                result.append(Case(f"dim={dim}, {label}", outputs(_REDUCE_SHAPE, dt, dim),
                                   (a, dim)))
            result.append(Case(f"dim={dim}, out transposed",
                               outputs(_REDUCE_SHAPE, dt, dim, "transposed"),
                               (Operand(gen.values(_REDUCE_SHAPE, dt, low, high), dt), dim)))
        result.append(Case("0-d", outputs((), dt, 0), (Operand(gen.values((), dt), dt), 0)))
        zero_dims = (0,) if index_out else (0, 1)  # never reduce an empty dim
        for dim in zero_dims:
            result.append(Case(f"zero-size, dim={dim}", outputs((3, 0), dt, dim),
                               (Operand(gen.values((3, 0), dt), dt), dim)))
        result.append(Case("1-d odd length", outputs((37,), dt, 0),
                           (Operand(gen.values((37,), dt, low, high), dt), 0)))
        lo2, hi2 = _window(large_range, dt) if large_range else (low, high)
        for dim in (0, 1):
            result.append(Case(f"large, dim={dim}", outputs((130, 256), dt, dim),
                               (Operand(gen.values((130, 256), dt, lo2, hi2), dt), dim)))
        if dt.is_floating_point:
            special = gen.values((4, 12), dt, special=True)
            for dim in (0, 1):
                result.append(Case(f"special values, dim={dim}", outputs((4, 12), dt, dim),
                                   (Operand(special, dt), dim)))
        return result

    return cases


_ACCUMULATE_TOL = {"float32": (1e-5, 1e-4), "float64": (1e-7, 1e-7), "float16": (1e-3, 1e-3),
                   "bfloat16": (1.6e-2, 1e-2), "complex64": (1e-5, 1e-4),
                   "complex128": (1e-7, 1e-7)}


# How each reduction and scan is tested beyond its table row (dtypes and value window there):
# the factory's options and tolerances. Products get a window near 1 for their large cases.
_REDUCTION_OPTIONS: dict[str, tuple[Callable[..., Callable[[Gen, _dtype.dtype], list[Case]]],
                                    dict[str, Any], dict[str, tuple[float, float]]]] = {
    "sum": (reduction, {"out_dtype": same}, _ACCUMULATE_TOL),
    "prod": (reduction, {"out_dtype": same, "large_range": (0.99, 1.01)}, _ACCUMULATE_TOL),
    "amax": (reduction, {"out_dtype": same, "empty_ok": False}, {}),
    "amin": (reduction, {"out_dtype": same, "empty_ok": False}, {}),
    "any": (reduction, {"out_dtype": boolean}, {}),
    "all": (reduction, {"out_dtype": boolean}, {}),
    "argmax": (scan, {"index_out": True}, {}),
    "argmin": (scan, {"index_out": True}, {}),
    "cumsum": (scan, {}, _ACCUMULATE_TOL),
    "cumprod": (scan, {"large_range": (0.99, 1.01)}, _ACCUMULATE_TOL),
    "cummax": (scan, {"with_indices": True}, {}),
    "cummin": (scan, {"with_indices": True}, {}),
}


def _reduction_rows() -> dict[str, Samples]:
    """The reductions' and scans' samples: dtypes and value windows from the op table."""
    rows: dict[str, Samples] = {}
    for row in _op_tables.REDUCTIONS:
        factory, options, tolerance = _REDUCTION_OPTIONS[row.prim]
        window = row.domain[0]
        low, high = window[:2] if isinstance(window, tuple) else (-5.0, 5.0)
        rows[row.prim] = Samples(row.dtypes, factory(low=low, high=high, **options), tolerance)
    return rows


# -- linear algebra -----------------------------------------------------------------------------


def _matmul_cases(gen: Gen, dt: _dtype.dtype) -> list[Case]:
    def mm(label: str, n: int, k: int, m: int, batch: tuple[int, ...] = (),
           a_layout: str = "contiguous", b_layout: str = "contiguous",
           out_layout: str = "contiguous") -> Case:
        def operand(rows: int, cols: int, layout: str) -> Operand:
            if layout == "broadcast":  # the batch dims broadcast with stride 0
                base = (*(1 for _ in batch), rows, cols)
                return Operand(gen.values(base, dt, -3, 3), dt, layout, (*batch, rows, cols))
            return Operand(gen.values((*batch, rows, cols), dt, -3, 3), dt, layout)

        return Case(label, (Output((*batch, n, m), dt, out_layout),),
                    (operand(n, k, a_layout), operand(k, m, b_layout)))

    return [
        mm("2-d", 3, 4, 5),
        mm("a transposed", 3, 4, 5, a_layout="transposed"),
        mm("b transposed", 3, 4, 5, b_layout="transposed"),
        mm("both strided", 3, 4, 5, a_layout="strided", b_layout="strided"),
        mm("out transposed", 3, 4, 5, out_layout="transposed"),
        mm("batched", 3, 4, 5, (2,)),
        mm("batched transposed", 3, 4, 5, (2, 2), "transposed", "transposed"),
        mm("batch broadcast", 3, 4, 5, (3,), "broadcast"),
        mm("vector-like", 1, 7, 1),
        mm("k = 0", 3, 0, 5),
        mm("n = 0", 0, 4, 5),
        mm("large", 33, 65, 17),
        mm("large transposed", 64, 48, 40, (2,), "transposed", "strided", "strided"),
    ]


# -- indexing -----------------------------------------------------------------------------------


def _index(gen: Gen, shape: tuple[int, ...], size: int, *, unique_along: int | None = None
           ) -> np.ndarray:
    """int64 indices in ``[0, size)``; with ``unique_along``, no repeats along that dim."""
    if unique_along is None:
        return gen.rng.integers(0, size, shape, dtype=np.int64)
    # a prefix of a random permutation for every line along the dim
    moved = (*shape[:unique_along], *shape[unique_along + 1:], shape[unique_along])
    lines = int(np.prod(moved[:-1], dtype=np.int64))
    perms = np.stack([gen.rng.permutation(size)[:moved[-1]] for _ in range(lines)]) if lines \
        else np.zeros((0, moved[-1]), np.int64)
    return np.moveaxis(perms.reshape(moved), -1, unique_along).astype(np.int64)


def _gather_cases(gen: Gen, dt: _dtype.dtype) -> list[Case]:
    shape = (4, 5, 6)
    result = []
    for dim in (0, 1, 2):
        index_shape = tuple(3 if d != dim else 7 for d in range(3))
        for a_layout, i_layout, out_layout in (("contiguous", "contiguous", "contiguous"),
                                               ("transposed", "strided", "contiguous"),
                                               ("strided", "transposed", "transposed")):
            a = Operand(gen.values(shape, dt), dt, a_layout)
            index = Operand(_index(gen, index_shape, shape[dim]), _dtype.int64, i_layout)
            result.append(Case(f"dim={dim}, a {a_layout}, index {i_layout}, out {out_layout}",
                               (Output(index_shape, dt, out_layout),), (a, dim, index)))
    base = gen.values((1, 6), dt)
    result.append(Case("a broadcast", (Output((3, 6), dt),),
                       (Operand(base, dt, "broadcast", (4, 6)), 0,
                        Operand(_index(gen, (3, 6), 4), _dtype.int64))))
    result.append(Case("index broadcast", (Output((4, 6), dt),),
                       (Operand(gen.values((4, 6), dt), dt), 1,
                        Operand(_index(gen, (1, 6), 6), _dtype.int64, "broadcast", (4, 6)))))
    result.append(Case("0-d", (Output((), dt),),
                       (Operand(gen.values((), dt), dt), 0, Operand(np.array(0), _dtype.int64))))
    result.append(Case("zero-size index", (Output((0, 6), dt),),
                       (Operand(gen.values((4, 6), dt), dt), 0,
                        Operand(np.zeros((0, 6), np.int64), _dtype.int64))))
    result.append(Case("1-d", (Output((50,), dt),),
                       (Operand(gen.values((37,), dt), dt), 0,
                        Operand(_index(gen, (50,), 37), _dtype.int64))))
    result.append(Case("large", (Output((200, 300), dt),),
                       (Operand(gen.values((200, 150), dt), dt), 1,
                        Operand(_index(gen, (200, 300), 150), _dtype.int64))))
    return result


def _scatter_cases(gen: Gen, dt: _dtype.dtype) -> list[Case]:
    shape = (4, 5, 6)
    result = []
    reduces = ["none"]
    if dt is not _dtype.bool_:
        reduces += ["sum", "prod", "mean", "amax", "amin"]
    for reduce in reduces:
        for include_self in ((True,) if reduce == "none" else (True, False)):
            for dim in (0, 1, 2):
                index_shape = tuple(3 if d != dim else min(4, shape[d]) for d in range(3))
                unique = dim if reduce == "none" else None
                # "none" with repeated indices leaves the order of writes open: unique there
                index = _index(gen, index_shape, shape[dim], unique_along=unique)
                for layout in ("contiguous", "transposed", "strided"):
                    init = gen.values(shape, dt, -3, 3)
                    src = gen.values((4, 5, 6), dt, -3, 3)
                    result.append(Case(
                        f"reduce={reduce}, include_self={include_self}, dim={dim}, {layout}",
                        (Output(shape, dt, layout, init),),
                        (dim, Operand(index, _dtype.int64, layout), Operand(src, dt, layout),
                         reduce, include_self)))
    result.append(Case("0-d", (Output((), dt, init=gen.values((), dt)),),
                       (0, Operand(np.array(0), _dtype.int64), Operand(gen.values((), dt), dt),
                        "none", True)))
    result.append(Case("zero-size index", (Output((4, 6), dt, init=gen.values((4, 6), dt)),),
                       (0, Operand(np.zeros((0, 6), np.int64), _dtype.int64),
                        Operand(gen.values((4, 6), dt), dt), "none", True)))
    result.append(Case("src broadcast (a scalar)", (Output((4, 6), dt,
                                                          init=gen.values((4, 6), dt)),),
                       (1, Operand(_index(gen, (4, 2), 6, unique_along=1), _dtype.int64),
                        Operand(gen.values((1, 1), dt), dt, "broadcast", (4, 2)), "none",
                        True)))
    large_index = _index(gen, (200, 100), 150, unique_along=1)
    result.append(Case("large", (Output((200, 150), dt, init=gen.values((200, 150), dt)),),
                       (1, Operand(large_index, _dtype.int64),
                        Operand(gen.values((200, 100), dt), dt), "none", True)))
    if dt is not _dtype.bool_:
        result.append(Case("large, reduce=sum", (Output((200, 150), dt,
                                                        init=gen.values((200, 150), dt)),),
                           (1, Operand(_index(gen, (200, 300), 150), _dtype.int64),
                            Operand(gen.values((200, 300), dt), dt), "sum", True)))
    return result


def _nonzero_cases(gen: Gen, dt: _dtype.dtype) -> list[Case]:
    def sparse(shape: tuple[int, ...]) -> np.ndarray:
        v = as_float(gen.values(shape, dt, -3, 3), dt).astype(np.float64)
        keep = gen.rng.random(shape) < 0.4
        return to_storage(np.where(keep, v, 0), dt)

    result = [
        Case("3-d", (), (Operand(sparse((4, 5, 6)), dt),)),
        Case("transposed", (), (Operand(sparse((4, 5, 6)), dt, "transposed"),)),
        Case("strided", (), (Operand(sparse((4, 5, 6)), dt, "strided"),)),
        Case("broadcast", (), (Operand(sparse((4, 1, 6)), dt, "broadcast", (4, 5, 6)),)),
        Case("0-d nonzero", (), (Operand(to_storage(np.array(1), dt), dt),)),
        Case("0-d zero", (), (Operand(to_storage(np.array(0), dt), dt),)),
        Case("zero-size", (), (Operand(gen.values((0, 3), dt), dt),)),
        Case("all zero", (), (Operand(to_storage(np.zeros((5, 7)), dt), dt),)),
        Case("1-d odd length", (), (Operand(sparse((37,)), dt),)),
        Case("large", (), (Operand(sparse((300, 300)), dt),)),
    ]
    if dt.is_floating_point:
        # NaN counts as nonzero, -0.0 as zero
        result.append(Case("special values", (), (Operand(to_storage(np.array(SPECIALS), dt),
                                                          dt),)))
    return result


# -- sort ---------------------------------------------------------------------------------------


def _sort_cases(gen: Gen, dt: _dtype.dtype) -> list[Case]:
    def out(shape: tuple[int, ...], layout: str = "contiguous") -> tuple[Output, ...]:
        return (Output(shape, dt, layout), Output(shape, _dtype.int64, layout))

    shape = (4, 5, 6)
    result = []
    for dim in (0, 1, 2):
        for descending in (False, True):
            for label, a in _reduction_inputs(gen, dt, -3, 3, shape):  # ties: stability
                result.append(Case(f"dim={dim}, descending={descending}, {label}", out(shape),
                                   (a, dim, descending, True)))
            result.append(Case(f"dim={dim}, descending={descending}, out strided",
                               out(shape, "strided"),
                               (Operand(gen.values(shape, dt, -3, 3), dt), dim, descending,
                                True)))
            result.append(Case(f"dim={dim}, descending={descending}, stable=False",
                               out(shape), (Operand(gen.values(shape, dt), dt), dim,
                                            descending, False), check="sort_unstable"))
    result.append(Case("0-d", out(()), (Operand(gen.values((), dt), dt), 0, False, True)))
    for dim in (0, 1):
        result.append(Case(f"zero-size, dim={dim}", out((3, 0)),
                           (Operand(gen.values((3, 0), dt), dt), dim, False, True)))
    for descending in (False, True):
        result.append(Case(f"1-d odd length, descending={descending}", out((37,)),
                           (Operand(gen.values((37,), dt), dt), 0, descending, True)))
        for dim in (0, 1):
            result.append(Case(f"large, dim={dim}, descending={descending}", out((64, 300)),
                               (Operand(gen.values((64, 300), dt, -100, 100), dt), dim,
                                descending, True)))
        if dt.is_floating_point:
            special = gen.values((3, 12), dt, special=True)
            result.append(Case(f"special values, descending={descending}", out((3, 12)),
                               (Operand(special, dt), 1, descending, True)))
    return result


def _topk_cases(gen: Gen, dt: _dtype.dtype) -> list[Case]:
    def out(shape: tuple[int, ...], layout: str = "contiguous") -> tuple[Output, ...]:
        return (Output(shape, dt, layout), Output(shape, _dtype.int64, layout))

    shape = (4, 5, 6)
    result = []
    for dim in (0, 1, 2):
        for k in (1, 3, shape[dim]):
            for largest in (True, False):
                for sorted_ in (True, False):
                    k_shape = tuple(k if d == dim else s for d, s in enumerate(shape))
                    layout = "transposed" if sorted_ else "strided"
                    result.append(Case(
                        f"dim={dim}, k={k}, largest={largest}, sorted={sorted_}",
                        out(k_shape, layout),
                        (Operand(gen.values(shape, dt), dt, layout), k, dim, largest, sorted_),
                        check="topk"))
    result.append(Case("0-d", out(()), (Operand(gen.values((), dt), dt), 1, 0, True, True),
                       check="topk"))
    result.append(Case("k = 0", out((4, 0)), (Operand(gen.values((4, 6), dt), dt), 0, 1, True,
                                                True), check="topk"))
    result.append(Case("zero-size", out((0, 3)), (Operand(gen.values((0, 6), dt), dt), 3, 1,
                                                   True, True), check="topk"))
    for largest in (True, False):
        result.append(Case(f"large, largest={largest}", out((64, 10)),
                           (Operand(gen.values((64, 300), dt, -100, 100), dt), 10, 1, largest,
                            True), check="topk"))
        if dt.is_floating_point:
            special = gen.values((3, 12), dt, special=True)
            result.append(Case(f"special values, largest={largest}", out((3, 4)),
                               (Operand(special, dt), 4, 1, largest, True), check="topk"))
    return result


def _searchsorted_cases(gen: Gen, dt: _dtype.dtype) -> list[Case]:
    def sorted_seq(shape: tuple[int, ...], low: float = -5, high: float = 5) -> np.ndarray:
        v = as_float(gen.values(shape, dt, low, high), dt)
        return to_storage(np.sort(v, axis=-1), dt)

    result = []
    for right in (False, True):
        def case(label: str, seq: Operand, values: Operand, out_shape: tuple[int, ...],
                 out_layout: str = "contiguous", right: bool = right) -> Case:
            return Case(f"{label}, right={right}", (Output(out_shape, _dtype.int64, out_layout),),
                        (seq, values, right))

        result += [
            case("2-d", Operand(sorted_seq((3, 10)), dt), Operand(gen.values((3, 7), dt), dt),
                 (3, 7)),
            case("1-d", Operand(sorted_seq((10,)), dt), Operand(gen.values((7,), dt), dt), (7,)),
            case("values transposed", Operand(sorted_seq((3, 10)), dt),
                 Operand(gen.values((3, 7), dt), dt, "transposed"), (3, 7), "strided"),
            case("sequence strided", Operand(sorted_seq((3, 10)), dt, "strided"),
                 Operand(gen.values((3, 7), dt), dt, "strided"), (3, 7), "transposed"),
            case("sequence broadcast", Operand(sorted_seq((1, 10)), dt, "broadcast", (3, 10)),
                 Operand(gen.values((3, 7), dt), dt), (3, 7)),
            case("values equal to elements", Operand(sorted_seq((2, 9), -2, 2), dt),
                 Operand(gen.values((2, 11), dt, -2, 3), dt), (2, 11)),
            case("empty sequence", Operand(gen.values((3, 0), dt), dt),
                 Operand(gen.values((3, 4), dt), dt), (3, 4)),
            case("zero-size values", Operand(sorted_seq((3, 10)), dt),
                 Operand(gen.values((3, 0), dt), dt), (3, 0)),
            case("large", Operand(sorted_seq((4, 1000), -100, 100), dt),
                 Operand(gen.values((4, 500), dt, -110, 110), dt), (4, 500)),
        ]
        if dt.is_floating_point:
            special = gen.values((1, 12), dt, special=True)
            result.append(case("special values", Operand(sorted_seq((1, 10)), dt),
                               Operand(special, dt), (1, 12)))
    return result


# -- random ---------------------------------------------------------------------------------------


def _random_bits_cases(gen: Gen, dt: _dtype.dtype) -> list[Case]:
    result = []
    for seed, offset in ((0, 0), (42, 5), (2**40 + 7, 2**32 - 1), (2**64 - 1, 2**64 - 2)):
        for label, shape, layout in (("1-d, 13 elements", (13,), "contiguous"),
                                     ("2-d", (4, 5), "contiguous"),
                                     ("transposed", (4, 5), "transposed"),
                                     ("strided", (4, 6), "strided"),
                                     ("0-d", (), "contiguous"), ("zero-size", (0,), "contiguous"),
                                     ("large", (100, 37), "contiguous")):
            result.append(Case(f"seed={seed}, offset={offset}, {label}",
                               (Output(shape, dt, layout),), (seed, offset)))
    return result


# -- convolution ----------------------------------------------------------------------------------


def _conv_out(size: tuple[int, ...], kernel: tuple[int, ...], stride: tuple[int, ...],
              padding: tuple[int, ...], dilation: tuple[int, ...], transposed: bool,
              extra: tuple[int, ...]) -> tuple[int, ...]:
    if transposed:  # extra: a transposed convolution's output_padding
        return tuple((i - 1) * s - 2 * p + d * (k - 1) + 1 + e for i, k, s, p, d, e
                     in zip(size, kernel, stride, padding, dilation, extra))
    return tuple((i + 2 * p - d * (k - 1) - 1) // s + 1
                 for i, k, s, p, d in zip(size, kernel, stride, padding, dilation))


def _convolution_cases(gen: Gen, dt: _dtype.dtype) -> list[Case]:
    def conv(label: str, n: int, groups: int, ci: int, co: int, size: tuple[int, ...],
             kernel: tuple[int, ...], stride: tuple[int, ...] | None = None,
             padding: tuple[int, ...] | None = None, dilation: tuple[int, ...] | None = None,
             transposed: bool = False, extra: tuple[int, ...] | None = None,
             layouts: tuple[str, str, str] = ("contiguous",) * 3) -> Case:
        nd = len(size)
        stride = stride or (1,) * nd
        padding = padding or (0,) * nd
        dilation = dilation or (1,) * nd
        out_size = _conv_out(size, kernel, stride, padding, dilation, transposed,
                             extra or (0,) * nd)
        in_shape = (n, groups * ci, *size)
        w_shape = (groups * ci, co, *kernel) if transposed else (groups * co, ci, *kernel)
        in_layout, w_layout, out_layout = layouts
        if in_layout == "broadcast":  # the batch dim with stride 0
            x = Operand(gen.values((1, *in_shape[1:]), dt, -3, 3), dt, "broadcast", in_shape)
        else:
            x = Operand(gen.values(in_shape, dt, -3, 3), dt, in_layout)
        w = Operand(gen.values(w_shape, dt, -3, 3), dt, w_layout)
        return Case(label, (Output((n, groups * co, *out_size), dt, out_layout),),
                    (x, w, list(stride), list(padding), list(dilation), transposed, groups))

    return [
        conv("1-d", 2, 1, 3, 4, (9,), (3,)),
        conv("1-d stride 2, padding 1, dilation 2", 2, 1, 3, 4, (11,), (3,), (2,), (1,), (2,)),
        conv("2-d", 2, 1, 3, 2, (6, 7), (3, 2)),
        conv("2-d stride, padding, dilation", 2, 1, 3, 2, (7, 8), (3, 2), (2, 1), (1, 2),
             (1, 2)),
        conv("2-d groups=2", 2, 2, 2, 3, (5, 6), (2, 3)),
        conv("2-d depthwise", 1, 4, 1, 1, (5, 5), (3, 3), padding=(1, 1)),
        conv("2-d 1x1 kernel", 2, 1, 5, 3, (4, 4), (1, 1)),
        conv("3-d", 1, 1, 2, 2, (4, 5, 3), (2, 2, 2), (1, 2, 1), (1, 0, 1)),
        conv("transposed 1-d", 2, 1, 3, 2, (5,), (3,), (2,), (1,), extra=(1,),
             transposed=True),
        conv("transposed 2-d groups=2", 1, 2, 2, 3, (4, 3), (3, 2), (2, 2), (1, 0), (1, 2),
             transposed=True),
        conv("transposed 3-d", 1, 1, 2, 2, (3, 2, 3), (2, 2, 2), (2, 1, 2), transposed=True),
        conv("layouts: input transposed, weight strided, out transposed", 2, 1, 3, 2, (6, 5),
             (3, 3), padding=(1, 1), layouts=("transposed", "strided", "transposed")),
        conv("layouts: input strided, out strided", 2, 1, 2, 2, (6, 5), (2, 2),
             layouts=("strided", "contiguous", "strided")),
        conv("input broadcast over the batch", 3, 1, 2, 2, (5, 5), (3, 3),
             layouts=("broadcast", "contiguous", "contiguous")),
        conv("transposed, input transposed", 2, 1, 2, 3, (4, 4), (3, 3), (2, 2), (1, 1),
             transposed=True, layouts=("transposed", "contiguous", "strided")),
        conv("zero-size batch", 0, 1, 3, 2, (5, 5), (3, 3)),
        conv("large", 4, 1, 8, 16, (32, 32), (3, 3), padding=(1, 1)),
    ]


# -- spectral -------------------------------------------------------------------------------------

# Transforms sum n terms: errors grow with the size, as an accumulation's do.
_SPECTRAL_TOL = {"float32": (1e-5, 1e-4), "float64": (1e-9, 1e-9), "complex64": (1e-5, 1e-4),
                 "complex128": (1e-9, 1e-9)}

# (label, input shape, dims, normalization, input layout)
_SPECTRAL_SHAPES: tuple[tuple[str, tuple[int, ...], list[int], int, str], ...] = (
    ("1-d", (8,), [0], 0, "contiguous"),
    ("1-d odd length, ortho", (7,), [0], 1, "contiguous"),
    ("batched last dim, by n", (3, 10), [1], 2, "contiguous"),
    ("first dim of a transposed input", (6, 5), [0], 0, "transposed"),
    ("2-d over strided input", (4, 6), [0, 1], 1, "strided"),
    ("dims out of order", (3, 4, 5), [2, 0], 0, "contiguous"),
    ("length 1", (2, 1), [1], 2, "contiguous"),
    ("zero-size batch", (0, 4), [1], 0, "contiguous"),
    ("large", (4, 257), [1], 0, "contiguous"),
)


def _fft_c2c_cases(gen: Gen, dt: _dtype.dtype) -> list[Case]:
    return [Case(f"{label}, {'forward' if forward else 'inverse'}", (Output(shape, dt),),
                 (Operand(gen.values(shape, dt, -3, 3), dt, layout), dims, norm, forward))
            for label, shape, dims, norm, layout in _SPECTRAL_SHAPES
            for forward in (True, False)]


def _onesided(shape: tuple[int, ...], dims: list[int]) -> tuple[int, ...]:
    out = list(shape)
    out[dims[-1]] = out[dims[-1]] // 2 + 1
    return tuple(out)


def _fft_r2c_cases(gen: Gen, dt: _dtype.dtype) -> list[Case]:
    real = dt.to_real()  # the output's dtype is complex
    return [Case(f"{label}, {'onesided' if onesided else 'full'}",
                 (Output(_onesided(shape, dims) if onesided else shape, dt),),
                 (Operand(gen.values(shape, real, -3, 3), real, layout), dims, norm, onesided))
            for label, shape, dims, norm, layout in _SPECTRAL_SHAPES
            for onesided in (True, False)]


def _fft_c2r_cases(gen: Gen, dt: _dtype.dtype) -> list[Case]:
    spectrum = dt.to_complex()  # the output's dtype is real, the signal's
    return [Case(label, (Output(shape, dt),),
                 (Operand(gen.values(_onesided(shape, dims), spectrum, -3, 3), spectrum, layout),
                  dims, norm))
            for label, shape, dims, norm, layout in _SPECTRAL_SHAPES]


# -- the table ------------------------------------------------------------------------------------


def _table() -> dict[str, Samples]:
    rows: dict[str, Samples] = {
        "copy_": Samples(EVERY, _copy_cases),
        "fill_": Samples(EVERY, _fill_cases),
        "arange_": Samples(REAL, _arange_cases),
    }
    rows.update(_pointwise_rows())
    rows.update(_reduction_rows())
    rows.update({
        "matmul": Samples(ALL + COMPLEX, _matmul_cases,
                          {"float32": (2e-5, 1e-4), "float16": (1e-3, 1e-3),
                           "bfloat16": (1.6e-2, 1e-2), "complex64": (2e-5, 1e-4)}),
        "gather": Samples(EVERY, _gather_cases),
        "scatter_": Samples(ALL, _scatter_cases, _ACCUMULATE_TOL),
        "nonzero": Samples(ALL, _nonzero_cases),
        "sort": Samples(ALL, _sort_cases),
        "topk": Samples(REAL, _topk_cases),
        "searchsorted": Samples(REAL, _searchsorted_cases),
        "random_bits_": Samples(("int64",), _random_bits_cases),
        "convolution": Samples(REAL, _convolution_cases, _ACCUMULATE_TOL),
        "fft_c2c": Samples(COMPLEX, _fft_c2c_cases, _SPECTRAL_TOL),
        "fft_r2c": Samples(COMPLEX, _fft_r2c_cases, _SPECTRAL_TOL),
        "fft_c2r": Samples(("float32", "float64"), _fft_c2r_cases, _SPECTRAL_TOL),
    })
    return rows


# primitive name -> how it is tested
SAMPLES: dict[str, Samples] = _table()


def _uses(case: Case, dtypes: frozenset[str]) -> bool:
    tensors = [*case.outputs, *(a for a in case.args if isinstance(a, Operand))]
    return any(t.dtype._name in dtypes for t in tensors)


def cases(name: str, dtype_name: str, seed: int = 0, skip_dtypes: frozenset[str] = frozenset()
          ) -> list[Case]:
    """The cases of primitive ``name`` for ``dtype_name``, deterministic in ``seed``; each
    carries the row's tolerances. Cases with a tensor of a dtype in ``skip_dtypes`` (a device
    without that dtype) are left out."""
    row = SAMPLES[name]
    made = [c for c in row.cases(Gen(seed), dtype(dtype_name)) if not _uses(c, skip_dtypes)]
    if not row.tolerance:
        return made
    return [Case(c.label, c.outputs, c.args, c.kwargs, c.check, {**row.tolerance, **c.tolerance})
            for c in made]
