"""Op database rows: elementwise math (unary and binary functions, comparisons, logical and
bitwise ops, clamp, lerp, addcmul/addcdiv, where).

Samples stay inside each function's domain where the answer would otherwise be a pole or a
library-specific rounding of one (log of negatives still appears, as NaN, where it is well
defined). Integer division rows keep divisors away from zero (both libraries raise there; the
tests check that separately).
"""

from __future__ import annotations

import importlib.util
import math
import pathlib
import sys

from . import ALL, FLOATS, INTS, OpInfo, SampleInput


def _load_op_tables():
    """The pointwise op table (``torch/_core/op_tables.py``, plain data that imports nothing),
    loaded by its path: the op database also runs as a package of its own under real PyTorch
    (the parity run), where there is no ``torch._core``."""
    name = "plait_op_tables"
    if name not in sys.modules:
        path = pathlib.Path(__file__).resolve().parents[2] / "_core" / "op_tables.py"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # (dataclasses look their module up while it runs)
        spec.loader.exec_module(module)
    return sys.modules[name]


TABLE = _load_op_tables()

SHAPES = [(), (5,), (3, 4), (2, 0, 3)]
INTS_AND_BOOL = INTS + ("bool",)
NUMBERS = FLOATS + INTS  # everything but bool


def _int_range(dtype, low, high):
    """[low, high) widened to hold at least one integer of ``dtype`` (floats: unchanged)."""
    if dtype in FLOATS or low is None or high is None:
        return low, high
    low = max(math.floor(low), 0) if dtype in ("uint8", "bool") else math.floor(low)
    return low, max(math.ceil(high), low + 1)


def unary(low=None, high=None):
    """Samples of a unary function whose inputs lie in [low, high)."""

    def samples(torch, dtype, make):
        low_, high_ = _int_range(dtype, low, high)
        make_ = make

        def make(shape, dtype, low, high, **kw):
            return make_(shape, dtype, low_, high_, **kw)

        for shape in SHAPES:
            yield SampleInput(make(shape, dtype, low, high), name=f"{shape}")
        yield SampleInput(make((3, 4), dtype, low, high, noncontiguous=True),
                          name="noncontiguous")
        yield SampleInput(make((4, 3), dtype, low, high).t(), name="transposed")

    return samples


def binary(low=None, high=None, other_low=None, other_high=None, number=2, swap=False):
    """Samples of a binary function: same shapes, broadcasting, a 0-d and a Python number
    ``other`` (``number=None`` leaves the number out; ``swap`` adds it as ``input``)."""
    olo = low if other_low is None else other_low
    ohi = high if other_high is None else other_high

    def samples(torch, dtype, make):
        for shape in SHAPES:
            yield SampleInput(make(shape, dtype, low, high), (make(shape, dtype, olo, ohi),),
                              name=f"same {shape}")
        yield SampleInput(make((3, 4), dtype, low, high), (make((4,), dtype, olo, ohi),),
                          name="broadcast")
        yield SampleInput(make((3, 1), dtype, low, high), (make((1, 4), dtype, olo, ohi),),
                          name="broadcast both")
        yield SampleInput(make((3, 4), dtype, low, high, noncontiguous=True),
                          (make((3, 4), dtype, olo, ohi),), name="noncontiguous")
        yield SampleInput(make((3,), dtype, low, high), (make((), dtype, olo, ohi),),
                          name="0-d other")
        if number is not None:
            yield SampleInput(make((2, 3), dtype, low, high), (number,), name="python number")
            if swap:
                yield SampleInput(number, (make((2, 3), dtype, olo, ohi),), name="number input")

    return samples


def mixed(pairs):
    """Samples mixing dtypes: ``pairs`` of (input dtype, other dtype or Python number)."""

    def samples(torch, dtype, make):
        for first, second in pairs:
            a = make((2, 3), first, 1, 5)
            b = make((2, 3), second, 1, 5) if isinstance(second, str) else second
            yield SampleInput(a, (b,), name=f"{first} with {second!r}")

    return samples


def _row(name, samples, dtypes, inplace=True, out=True, method=True, **kw):
    return OpInfo(name, samples, dtypes=dtypes, method=name if method else None,
                  inplace=f"{name}_" if inplace else None, supports_out=out, **kw)


def _logit_samples(torch, dtype, make):
    yield from unary(0.05, 0.95)(torch, dtype, make)
    yield SampleInput(make((3, 4), dtype, 0, 1), (0.1,), name="eps positional")
    yield SampleInput(make((3, 4), dtype, 0, 1), kwargs={"eps": 0.2}, name="eps keyword")


def _round_samples(torch, dtype, make):
    yield from unary()(torch, dtype, make)
    if dtype in FLOATS:
        yield SampleInput(make((3, 4), dtype, -100, 100), kwargs={"decimals": 1},
                          name="decimals=1")
        yield SampleInput(make((3, 4), dtype, -1000, 1000), kwargs={"decimals": -2},
                          name="decimals=-2")


def _with_special_values(samples):
    def combined(torch, dtype, make):
        if dtype in FLOATS:
            values = [0.0, -0.0, 1.5, -2.5, float("inf"), -float("inf"), float("nan")]
            yield SampleInput(torch.tensor(values, dtype=getattr(torch, dtype)), name="specials")
        yield from samples(torch, dtype, make)

    return combined


_special_values = _with_special_values(unary())


def _nan_to_num_samples(torch, dtype, make):
    yield from _special_values(torch, dtype, make)
    if dtype in FLOATS:
        specials = torch.tensor([float("nan"), float("inf"), -float("inf"), 2.0],
                                dtype=getattr(torch, dtype))
        yield SampleInput(specials, kwargs={"nan": 1.0, "posinf": 100.0, "neginf": -100.0},
                          name="replacements")
        yield SampleInput(specials, (3.0,), name="nan positional")


def _int_unary(torch, dtype, make):
    yield from unary()(torch, dtype, make)
    if dtype in INTS:
        yield SampleInput(make((3, 4), dtype, -128 if dtype != "uint8" else 0, 128),
                          name="wide range")


def _interval(entry):
    """(low, high) of a sample domain entry (None, None: the default window)."""
    return entry[:2] if isinstance(entry, tuple) else (None, None)


def _table_unary_samples(row):
    """A table row's samples: its domain (integers over a wide range where overflow is the
    point), and special values for the ops that classify them."""
    if row.domain[0] == TABLE.WRAP:
        return _int_unary
    samples = unary(*_interval(row.domain[0]))
    return _with_special_values(samples) if row.name in _CLASSIFIERS else samples


_CLASSIFIERS = ("sign", "sgn", "isnan")


def _table_rows(kinds, samples_of, dtypes=ALL):
    """The op database rows of the table's generated ops of ``kinds``, aliases included;
    each op's dtypes are those its promotion rule accepts (tests/test_op_tables.py)."""
    rows = []
    for row in TABLE.POINTWISE:
        if row.generate and row.kind in kinds:
            types = _DTYPES.get(row.name) or TABLE.public_dtypes(row, dtypes)
            for name in (row.name, *row.aliases):
                rows.append(_row(name, samples_of(row), types, inplace=row.inplace,
                                 out=row.out))
    return rows


# Where the op database compares fewer dtypes than the op accepts: PyTorch's CPU nextafter has
# no float16 kernel for the parity run to compare with.
_DTYPES = {"nextafter": ("float32", "float64")}


def _dtypes(name):
    """The dtypes the table gives op ``name`` (an op written by hand in the op library)."""
    return TABLE.public_dtypes(TABLE.BY_NAME[name], ALL)


UNARY_ROWS = [
    *_table_rows(("unary",), _table_unary_samples),
    # composites, written in other ops
    *(_row(name, unary(), ALL) for name in ("deg2rad", "rad2deg")),
    _row("round", _round_samples, _dtypes("round")),
    _row("frac", unary(), FLOATS),
    _row("square", unary(), ALL),
    _row("logit", _logit_samples, ALL),
    _row("positive", unary(), NUMBERS, inplace=False, out=False),
    _row("isinf", _special_values, ALL, inplace=False, out=False),
    _row("isposinf", _special_values, ALL, inplace=False),
    _row("isneginf", _special_values, ALL, inplace=False),
    _row("isfinite", _special_values, ALL, inplace=False, out=False),
    _row("isreal", unary(), ALL, inplace=False, out=False),
    _row("signbit", _special_values, ALL, inplace=False),
    _row("nan_to_num", _nan_to_num_samples, ALL),
    _row("angle", _special_values, NUMBERS, inplace=False),
]


# -- binary ------------------------------------------------------------------------------


def _division_samples(rounding_mode=None, positive_only=False, op="div"):
    """Dividends and divisors from table row ``op``'s domain, divisors kept away from zero:
    positive, then negative ones."""
    (low, high), (_, most) = (entry[:2] for entry in TABLE.BY_NAME[op].domain)

    def samples(torch, dtype, make):
        kw = {} if rounding_mode is None else {"rounding_mode": rounding_mode}
        yield from (SampleInput(s.input, s.args, {**s.kwargs, **kw}, s.name)
                    for s in binary(low, high, 1, most, number=3)(torch, dtype, make))
        if not positive_only and dtype != "uint8":
            yield SampleInput(make((3, 4), dtype, low, high), (make((3, 4), dtype, -most, -1),),
                              kw, name="negative divisors")
            yield SampleInput(make((3, 4), dtype, low, high), (-3,), kw, name="negative number")
        if dtype in FLOATS:
            yield SampleInput(make((2, 2), dtype), (make((2, 2), dtype, 0, 0.01),), kw,
                              name="tiny divisors")

    return samples


def _pow_samples(torch, dtype, make):
    if dtype in FLOATS:
        yield from binary(0.5, 3, -2, 3, number=2.5, swap=True)(torch, dtype, make)
        yield SampleInput(make((2, 3), dtype, 0.5, 3), (-1,), name="negative int exponent")
    else:
        yield from binary(None, None, 0, 4, number=3, swap=True)(torch, dtype, make)
        yield SampleInput(make((2, 3), dtype), (0.5,), name="float exponent")
        if dtype != "uint8":
            base = torch.tensor([1, -1, 2, 0, -1, 3], dtype=getattr(torch, dtype))
            exponent = torch.tensor([-1, -3, -2, -1, -2, 0], dtype=getattr(torch, dtype))
            yield SampleInput(base, (exponent,), name="negative tensor exponents")


def _shift_samples(torch, dtype, make):
    bits = {"uint8": 8, "int8": 8, "int16": 16, "int32": 32, "int64": 64}[dtype]
    yield from binary(None, None, 0, min(bits, 8), number=3, swap=True)(torch, dtype, make)
    amounts = [0, 1, bits - 1, bits, bits + 3] + ([-1] if dtype != "uint8" else [])
    values = torch.tensor([5] * len(amounts), dtype=getattr(torch, dtype))
    yield SampleInput(values, (torch.tensor(amounts, dtype=getattr(torch, dtype)),),
                      name="out-of-range shifts")
    if dtype != "uint8":
        negatives = torch.tensor([-5] * len(amounts), dtype=getattr(torch, dtype))
        yield SampleInput(negatives, (torch.tensor(amounts, dtype=getattr(torch, dtype)),),
                          name="negative values")


def _sub_samples(torch, dtype, make):
    yield from binary(swap=True)(torch, dtype, make)
    yield SampleInput(make((3, 4), dtype), (make((3, 4), dtype),), {"alpha": 2}, name="alpha")
    if dtype in FLOATS:
        yield SampleInput(make((3, 4), dtype), (make((4,), dtype),), {"alpha": 0.5},
                          name="float alpha")


def _compare_samples(torch, dtype, make):
    low, high = _interval(TABLE.BY_NAME["eq"].domain[0])
    yield from binary(low, high, number=1)(torch, dtype, make)
    if dtype != "bool":
        yield SampleInput(make((2, 3), dtype, -3, 3), (1.5,), name="float number")
    if dtype in FLOATS:
        nan = torch.tensor([float("nan"), 1.0, float("inf")], dtype=getattr(torch, dtype))
        yield SampleInput(nan, (nan,), name="nan and inf")


def _float_specials(torch, dtype, make):
    values = torch.tensor([float("nan"), 1.0, -0.0, float("inf"), -2.0],
                          dtype=getattr(torch, dtype))
    other = torch.tensor([0.5, float("nan"), 0.0, float("inf"), -float("inf")],
                         dtype=getattr(torch, dtype))
    yield SampleInput(values, (other,), name="specials")


def _with_specials(samples):
    def combined(torch, dtype, make):
        yield from samples(torch, dtype, make)
        if dtype in FLOATS:
            yield from _float_specials(torch, dtype, make)

    return combined


def _xlogy_samples(torch, dtype, make):
    yield from binary(0, 5, 0.5, 5, number=2, swap=True)(torch, dtype, make)
    if dtype in FLOATS:
        x = torch.tensor([0.0, 0.0, 2.0, 0.0], dtype=getattr(torch, dtype))
        y = torch.tensor([0.0, float("nan"), 0.0, float("inf")], dtype=getattr(torch, dtype))
        yield SampleInput(x, (y,), name="zeros")


def _float_power_samples(torch, dtype, make):
    low = 0.5 if dtype in FLOATS else 0
    yield from binary(low, 3, 0, 3, number=2, swap=True)(torch, dtype, make)


def _table_binary_samples(row):
    """A table row's samples: its domain, a Python number where the op takes one (and as
    ``input`` where that may be one), special values for the ops that order or sign them;
    divisors and shift amounts have samplers of their own."""
    if row.kind == "compare" and row.number_other:  # eq ... ge (logical ops take no number)
        return _compare_samples
    custom = _BINARY_SAMPLES.get(row.name)
    if custom is not None:
        return custom
    (low, high), (other_low, other_high) = (_interval(entry) for entry in row.domain)
    samples = binary(low, high, other_low, other_high, number=2 if row.number_other else None,
                     swap=row.number_input)
    return _with_specials(samples) if row.name in _SPECIALS else samples


_BINARY_SAMPLES = {"remainder": _division_samples(op="remainder"),
                   "fmod": _division_samples(op="fmod"),
                   "bitwise_left_shift": _shift_samples, "bitwise_right_shift": _shift_samples}
_SPECIALS = ("copysign", "maximum", "minimum", "fmax", "fmin")


BINARY_ROWS = [
    *_table_rows(("binary", "compare"), _table_binary_samples),
    _row("sub", _sub_samples, _dtypes("sub")),
    _row("subtract", _sub_samples, _dtypes("sub")),
    _row("div", _division_samples(), _dtypes("div")),
    _row("divide", _division_samples(), _dtypes("div")),
    _row("true_divide", _division_samples(), _dtypes("div")),
    OpInfo("div", _division_samples("trunc"), dtypes=NUMBERS, method="div", inplace="div_",
           supports_out=True),
    OpInfo("div", _division_samples("floor"), dtypes=NUMBERS, method="div", inplace="div_",
           supports_out=True),
    _row("floor_divide", _division_samples(), NUMBERS),
    _row("pow", _pow_samples, _dtypes("pow")),
    _row("float_power", _float_power_samples, ALL),
    _row("logaddexp", _with_specials(binary(number=None)), FLOATS, inplace=False),
    _row("logaddexp2", _with_specials(binary(number=None)), FLOATS, inplace=False),
    _row("xlogy", _xlogy_samples, ALL),
    OpInfo("add", mixed([("int64", "float32"), ("int32", 2.5), ("uint8", "int8"),
                         ("float16", "bfloat16"), ("bool", 3), ("float16", 1.0),
                         ("int16", True), ("float64", "float32")]),
           dtypes=("float32",), method="add"),
    OpInfo("sub", mixed([("int64", "float32"), ("int32", 2.5), ("uint8", "int8"),
                         ("float16", "bfloat16"), ("float16", 1.0), ("int8", "int16")]),
           dtypes=("float32",), method="sub"),
    OpInfo("div", mixed([("int64", "int32"), ("int32", 2), ("uint8", "float16"),
                         ("bool", "bool")]),
           dtypes=("float32",), method="div"),
    OpInfo("eq", mixed([("int64", "float32"), ("int32", 2.5), ("uint8", "int8")]),
           dtypes=("float32",), method="eq"),
]


# -- clamp, lerp, addcmul, addcdiv, where, isclose, equal --------------------------------


def _clamp_samples(torch, dtype, make):
    yield SampleInput(make((3, 4), dtype), (-2, 3), name="both numbers")
    yield SampleInput(make((3, 4), dtype), kwargs={"min": 1}, name="min only")
    yield SampleInput(make((3, 4), dtype), kwargs={"max": 1}, name="max only")
    yield SampleInput(make((3, 4), dtype), (3, -2), name="min above max")
    yield SampleInput(make((), dtype), (-1, 1), name="0-d")
    yield SampleInput(make((2, 0), dtype), (-1, 1), name="empty")
    yield SampleInput(make((3, 4), dtype, noncontiguous=True), (-2, 2), name="noncontiguous")
    yield SampleInput(make((3, 4), dtype), (make((4,), dtype, -5, 0), make((3, 1), dtype, 0, 5)),
                      name="tensor bounds")
    yield SampleInput(make((3, 4), dtype), kwargs={"min": make((3, 4), dtype)},
                      name="tensor min")
    if dtype in INTS:
        yield SampleInput(make((3, 4), dtype), (0.5,), name="float bound")
    if dtype in FLOATS:
        specials = torch.tensor([float("nan"), 1.0, -float("inf")], dtype=getattr(torch, dtype))
        yield SampleInput(specials, (-1, 0.5), name="nan input")


def _clamp_one(key):
    def samples(torch, dtype, make):
        yield SampleInput(make((3, 4), dtype), (1,), name="number")
        yield SampleInput(make((3, 4), dtype), (make((4,), dtype),), name="tensor")
        yield SampleInput(make((), dtype), (0,), name="0-d")
        yield SampleInput(make((3, 4), dtype), kwargs={key: -1}, name="keyword")

    return samples


def _lerp_samples(torch, dtype, make):
    yield SampleInput(make((3, 4), dtype), (make((3, 4), dtype), 0.25), name="small weight")
    yield SampleInput(make((3, 4), dtype), (make((3, 4), dtype), 0.75), name="large weight")
    yield SampleInput(make((3, 4), dtype), (make((4,), dtype), make((3, 1), dtype, 0, 1)),
                      name="tensor weight broadcast")
    yield SampleInput(make((3, 4), dtype, noncontiguous=True), (make((3, 4), dtype), 2.0),
                      name="extrapolate")
    yield SampleInput(make((), dtype), (make((), dtype), 0.5), name="0-d")
    yield SampleInput(make((0, 2), dtype), (make((0, 2), dtype), 0.5), name="empty")


def _addc_samples(divide):
    def samples(torch, dtype, make):
        low = 1 if divide else None
        yield SampleInput(make((3, 4), dtype), (make((3, 4), dtype), make((3, 4), dtype, low, 5)),
                          name="same shape")
        yield SampleInput(make((3, 4), dtype), (make((4,), dtype), make((3, 1), dtype, low, 5)),
                          {"value": 2}, name="broadcast, value")
        yield SampleInput(make((), dtype), (make((), dtype), make((), dtype, low, 5)),
                          {"value": -0.5 if dtype in FLOATS else -1}, name="0-d")
        yield SampleInput(make((2, 0), dtype), (make((2, 0), dtype), make((2, 0), dtype, low, 5)),
                          name="empty")

    return samples


def _where_samples(torch, dtype, make):
    def cond(shape):
        return make(shape, "bool")

    yield SampleInput(cond((3, 4)), (make((3, 4), dtype), make((3, 4), dtype)), name="same")
    yield SampleInput(cond((3, 1)), (make((4,), dtype), make((2, 1, 1), dtype)),
                      name="broadcast")
    yield SampleInput(cond((2, 3)), (make((2, 3), dtype), 0), name="number other")
    yield SampleInput(cond((2, 3)), (1.5, make((2, 3), dtype)), name="float number input")
    yield SampleInput(cond((2, 3)), (1, 0), name="two numbers")
    yield SampleInput(cond(()), (make((), dtype), make((), dtype)), name="0-d")
    yield SampleInput(cond((0, 3)), (make((0, 3), dtype), make((0, 3), dtype)), name="empty")


def _isclose_samples(torch, dtype, make):
    a = make((3, 4), dtype)
    yield SampleInput(a, (a.clone(),), name="identical")
    yield SampleInput(make((3, 4), dtype), (make((3, 4), dtype),), name="random")
    yield SampleInput(make((3, 4), dtype), (make((4,), dtype),), {"rtol": 0.5, "atol": 1},
                      name="loose, broadcast")
    if dtype in FLOATS:
        x = torch.tensor([1.0, float("nan"), float("inf"), -float("inf"), 1.0],
                         dtype=getattr(torch, dtype))
        y = torch.tensor([1.0 + 1e-6, float("nan"), float("inf"), float("inf"), 1.1],
                         dtype=getattr(torch, dtype))
        yield SampleInput(x, (y,), name="specials")
        yield SampleInput(x, (y,), {"equal_nan": True}, name="equal_nan")
        yield SampleInput(x, (y,), {"rtol": 0.2, "atol": 0.0}, name="rtol only")


def _equal_samples(torch, dtype, make):
    a = make((3, 4), dtype)
    yield SampleInput(a, (a.clone(),), name="identical")
    yield SampleInput(make((3, 4), dtype), (make((3, 4), dtype),), name="random")
    yield SampleInput(make((3, 4), dtype), (make((4,), dtype),), name="different shapes")
    yield SampleInput(make((0,), dtype), (make((0,), dtype),), name="empty")


OTHER_ROWS = [
    _row("clamp", _clamp_samples, NUMBERS),
    _row("clip", _clamp_samples, NUMBERS),
    _row("clamp_min", _clamp_one("min"), NUMBERS),
    _row("clamp_max", _clamp_one("max"), NUMBERS),
    _row("lerp", _lerp_samples, FLOATS),
    _row("addcmul", _addc_samples(False), NUMBERS),
    _row("addcdiv", _addc_samples(True), FLOATS),
    OpInfo("where", _where_samples, dtypes=ALL, supports_out=True),
    OpInfo("isclose", _isclose_samples, dtypes=ALL, method="isclose"),
    OpInfo("allclose", _isclose_samples, dtypes=ALL, method="allclose", supports_meta=False),
    OpInfo("equal", _equal_samples, dtypes=ALL, method="equal", supports_meta=False),
]

OPS: list[OpInfo] = [*UNARY_ROWS, *BINARY_ROWS, *OTHER_ROWS]
