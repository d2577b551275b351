"""plait-backend-cpu: the native elementwise kernels (unary, binary, compare, where, copy_,
fill_, arange_) against core's reference kernels, for every dtype and layout.

Exact operations (arithmetic, rounding, comparisons, bit operations, selections, casts) must
match the reference bit for bit (any NaN matching any NaN). Transcendental functions must be
within a few ulp: float32 ones use the vectorised code of vecmath.h (2 ulp), the others libm.
float16 and bfloat16 compute in float32 and round once, so they are within 1 ulp of the
reference, which computes in float64.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
C = pytest.importorskip("plait_backend_cpu._C", reason="plait-backend-cpu is not installed")
from plait_backend_cpu.kernels import elementwise  # noqa: E402

from torch._refs.common import np_view  # noqa: E402

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64"]
FLOATS = {"float16", "bfloat16", "float32", "float64"}
INTS = {"uint8", "int8", "int16", "int32", "int64"}

UNARY = list(C.UNARY_OPS)
BINARY = [n for n in C.BINARY_OPS if not n.startswith("div_")]
COMPARE = list(C.COMPARE_OPS)

FLOAT_ONLY_UNARY = {
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "reciprocal",
    "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh",
    "atanh", "erf", "erfc", "erfinv", "lgamma", "digamma", "sigmoid",
}
FLOAT_ONLY_BINARY = {"atan2", "hypot", "copysign", "nextafter", "div", "sigmoid_backward",
                     "tanh_backward"}
INT_ONLY_BINARY = {"bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
                   "bitwise_right_shift"}
DIVISIONS = {"remainder", "fmod"}

# ulp tolerances of float32/float64 results (exact ops: 0); 16-bit floats get 1.
ULPS = {
    "exp": 2, "exp2": 2, "log": 2, "log2": 2, "log10": 2, "tanh": 2, "sigmoid": 2, "sin": 2,
    "cos": 2, "expm1": 2, "log1p": 2, "tan": 2, "asin": 2, "acos": 2, "atan": 2, "sinh": 2,
    "cosh": 2, "asinh": 2, "acosh": 2, "atanh": 2, "erf": 2, "erfc": 2, "rsqrt": 1, "pow": 2,
    "atan2": 2, "hypot": 2, "erfinv": 4, "lgamma": 4, "digamma": 4,
    "sigmoid_backward": 1, "tanh_backward": 1,
}
# Special functions near their zeros: an absolute tolerance as well.
ATOL = {"erfinv": 1e-6, "lgamma": 1e-5, "digamma": 1e-5}


def native_supports(op: str, dtype: str) -> bool:
    """Whether (op, dtype) must run natively (no reference fallback)."""
    if op in FLOAT_ONLY_UNARY or op in FLOAT_ONLY_BINARY:
        return dtype in FLOATS
    if op in INT_ONLY_BINARY:
        return dtype not in FLOATS
    if op in {"neg", "abs"} | DIVISIONS:
        return dtype != "bool"
    return True


class Kernels:
    """The wrappers over a reference that records which primitives it had to run."""

    def __init__(self) -> None:
        self.fallbacks: list[str] = []
        codes = {getattr(torch, name): code for code, name in enumerate(C.DTYPES)}
        self.table = elementwise.make_kernels(C, codes, self._reference)

    def _reference(self, name: str):
        self.fallbacks.append(name)
        return torch._refs.CPU_KERNELS[name]

    def __getitem__(self, name: str):
        return self.table[name]


@pytest.fixture
def k() -> Kernels:
    return Kernels()


# -- values ---------------------------------------------------------------------------------

SPECIAL = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1e-40, 1e-30, 1e30, -1e30, 1.0, -1.0, 0.5,
           -0.5, 2.5, -2.5, 3.0, 100.0, -120.0, 8192.5, 1e6]


def random_values(shape, dtype: str, rng, op: str = "", operand: int = 0) -> np.ndarray:
    """int64 (integer and bool dtypes) or float64 values for `dtype`, with special values
    scattered into float inputs."""
    if dtype == "bool":
        return np.asarray(rng.integers(0, 2, size=shape))
    if dtype in INTS:
        info = np.iinfo(np.dtype(dtype))
        if op in {"bitwise_left_shift", "bitwise_right_shift"} and operand == 1:
            low, high = (-2, info.bits + 2) if info.min < 0 else (0, info.bits + 2)
            v = np.asarray(rng.integers(low, high, size=shape))
        elif op == "pow" and operand == 1:
            v = np.asarray(rng.integers(-2 if info.min < 0 else 0, 9, size=shape))
        else:
            v = np.asarray(rng.integers(info.min, info.max, size=shape, endpoint=True))
            edges = np.array([info.min, info.max, 0, 1, -1 if info.min < 0 else 2])
            mask = rng.random(shape) < 0.2
            v[mask] = rng.choice(edges, size=int(mask.sum()))
        if op in DIVISIONS | {"div_trunc", "div_floor"} and operand == 1:
            v[v == 0] = 3
        return np.asarray(v, np.int64)
    v = np.asarray(rng.standard_normal(shape) * np.exp(rng.uniform(-4, 4, shape)))
    if op in {"erfinv", "atanh", "asin", "acos"}:
        v = np.asarray(rng.uniform(-1.2, 1.2, shape))
    mask = rng.random(shape) < 0.25
    v[mask] = rng.choice(SPECIAL, size=int(mask.sum()))
    return v


def tensor(values: np.ndarray, dtype: str):
    dt = getattr(torch, dtype)
    if dtype in INTS or dtype == "bool":
        return torch.tensor(values).to(dt)
    return torch.tensor(values).to(dt)


def layouts(shape, dtype: str, rng, op: str, operand: int):
    """(name, tensor) pairs: contiguous, transposed, stride-0 row / scalar, sliced."""
    yield "contiguous", tensor(random_values(shape, dtype, rng, op, operand), dtype)
    yield "transposed", tensor(
        random_values(shape[::-1], dtype, rng, op, operand), dtype).transpose(0, 1)
    yield "row", tensor(random_values((1, shape[1]), dtype, rng, op, operand), dtype).expand(
        *shape)
    yield "scalar", tensor(random_values((), dtype, rng, op, operand), dtype).expand(*shape)
    big = tensor(random_values((shape[0] * 2, shape[1] + 3), dtype, rng, op, operand), dtype)
    yield "sliced", big[::2, 1:shape[1] + 1]


# -- comparisons ----------------------------------------------------------------------------


def _bits(t) -> np.ndarray:
    """The raw storage values of a tensor (bfloat16 as uint16 bits)."""
    return np.array(np_view(t))


def _as_float(t, dtype: str) -> np.ndarray:
    v = _bits(t)
    if dtype == "bfloat16":
        return (v.astype(np.uint32) << 16).view(np.float32)
    return v


def _ordered(v: np.ndarray) -> np.ndarray:
    """Float bit patterns mapped to integers in the floats' order (signed zeros equal)."""
    ints = {2: np.int16, 4: np.int32, 8: np.int64}[v.dtype.itemsize]
    i = v.view(ints).astype(np.int64)
    lowest = np.int64(np.iinfo(ints).min)
    return np.where(i < 0, lowest - i, i)


def assert_close(actual, expected, dtype: str, op: str, msg: str) -> None:
    if dtype not in FLOATS or actual.dtype == torch.bool:
        np.testing.assert_array_equal(_bits(actual), _bits(expected), err_msg=msg)
        return
    a, e = _bits(actual), _bits(expected)
    if dtype == "bfloat16":
        a, e = a.view(np.float16), e.view(np.float16)  # 16-bit patterns: only the order counts
    fa, fe = _as_float(actual, dtype), _as_float(expected, dtype)
    nan = np.isnan(fe)
    np.testing.assert_array_equal(np.isnan(fa), nan, err_msg=msg)
    ulps = ULPS.get(op, 0)
    if dtype in {"float16", "bfloat16"} and ulps:
        ulps = 1
    elif dtype in {"float16", "bfloat16"} and op in {"reciprocal", "div", "sqrt"}:
        ulps = 1  # float32 then rounded: double rounding may differ from the float64 reference
    distance = np.abs(_ordered(a[~nan]) - _ordered(e[~nan]))
    tolerated = distance <= ulps
    if op in ATOL:
        with np.errstate(invalid="ignore"):  # inf - inf where both are inf
            tolerated |= np.abs(fa[~nan].astype(np.float64) - fe[~nan]) <= ATOL[op]
    bad = ~tolerated
    assert not bad.any(), (
        f"{msg}: {int(bad.sum())} elements beyond {ulps} ulp, e.g. actual "
        f"{fa[~nan][bad][:4]} expected {fe[~nan][bad][:4]}"
    )


SHAPE = (7, 37)  # odd sizes: vector loop tails


def _run_against_reference(k: Kernels, op: str, dtype: str, arity: int, out_dtype: str) -> None:
    rng = np.random.default_rng(abs(hash((op, dtype))) % 2**32)
    native, ref = k[op], torch._refs.CPU_KERNELS[op]
    operands = [list(layouts(SHAPE, dtype, rng, op, i)) for i in range(arity)]
    combos = ([(a,) for a in operands[0]] if arity == 1 else
              [(a, b) for a in operands[0] for b in operands[1]])
    for combo in combos:
        names = " ".join(name for name, _ in combo)
        inputs = [t for _, t in combo]
        for out_layout in ("contiguous", "transposed"):
            odt = getattr(torch, out_dtype)
            if out_layout == "contiguous":
                out = torch.empty(*SHAPE, dtype=odt)
            else:
                out = torch.empty(*SHAPE[::-1], dtype=odt).transpose(0, 1)
            expected = torch.empty(*SHAPE, dtype=odt)
            native(out, *inputs)
            ref(expected, *inputs)
            assert_close(out, expected, dtype, op, f"{op} {dtype} {names} -> {out_layout}")
    # 0-d and zero-size (where the native kernel runs: the reference's integer path of a
    # floating function cannot store a 0-d NaN)
    for shape in ((), (0, 3)) if native_supports(op, dtype) else ():
        inputs = [tensor(random_values(shape, dtype, rng, op, i), dtype) for i in range(arity)]
        out = torch.empty(*shape, dtype=getattr(torch, out_dtype))
        expected = torch.empty(*shape, dtype=getattr(torch, out_dtype))
        native(out, *inputs)
        ref(expected, *inputs)
        assert_close(out, expected, dtype, op, f"{op} {dtype} shape {shape}")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", UNARY)
def test_unary_matches_reference(k, op, dtype):
    out_dtype = "bool" if op in {"isnan", "logical_not"} else dtype
    if op in {"neg", "abs"} and dtype == "bool":
        pytest.skip("PyTorch refuses neg/abs of bool")
    if op == "bitwise_not" and dtype in FLOATS:
        pytest.skip("PyTorch refuses bitwise_not of floats")
    _run_against_reference(k, op, dtype, 1, out_dtype)
    assert not k.fallbacks if native_supports(op, dtype) else k.fallbacks


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", BINARY)
def test_binary_matches_reference(k, op, dtype):
    if (op in DIVISIONS and dtype == "bool") or (op == "div" and dtype not in FLOATS):
        pytest.skip("core promotes or refuses these")
    if op in INT_ONLY_BINARY and dtype in FLOATS:
        pytest.skip("bit operations of floats are refused by core")
    if op in FLOAT_ONLY_BINARY and dtype not in FLOATS:
        pytest.skip("core promotes integers to float for this op")
    _run_against_reference(k, op, dtype, 2, dtype)
    assert not k.fallbacks, k.fallbacks


@pytest.mark.parametrize("dtype", sorted(FLOATS | INTS))
@pytest.mark.parametrize("mode", ["trunc", "floor"])
def test_div_rounding_modes(k, mode, dtype):
    rng = np.random.default_rng(5)
    a = tensor(random_values(SHAPE, dtype, rng, "div_floor", 0), dtype)
    b = tensor(random_values(SHAPE, dtype, rng, "div_floor", 1), dtype)
    for x, y in ((a, b), (a.transpose(0, 1).contiguous().transpose(0, 1), b[:1].expand(*SHAPE))):
        out = torch.empty(*SHAPE, dtype=getattr(torch, dtype))
        expected = torch.empty(*SHAPE, dtype=getattr(torch, dtype))
        k["div"](out, x, y, mode)
        torch._refs.CPU_KERNELS["div"](expected, x, y, mode)
        assert_close(out, expected, dtype, "div", f"div {mode} {dtype}")
    assert not k.fallbacks


def test_integer_division_by_zero_goes_to_the_reference(k):
    a = torch.tensor([5, 6, 7])
    b = torch.tensor([1, 0, 2])
    for op in ("remainder", "fmod"):
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            k[op](torch.empty(3, dtype=torch.int64), a, b)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        k["div"](torch.empty(3, dtype=torch.int64), a, b, "floor")
    assert k.fallbacks == ["remainder", "fmod", "div"]


def test_integer_edge_divisions(k):
    lo = np.iinfo(np.int64).min
    a = torch.tensor([lo, lo, -7, 7, -7])
    b = torch.tensor([-1, 1, 2, -2, -2])
    out = torch.empty(5, dtype=torch.int64)
    k["div"](out, a, b, "trunc")
    assert out.tolist() == [lo, lo, -3, -3, 3]
    k["div"](out, a, b, "floor")
    assert out.tolist() == [lo, lo, -4, -4, 3]
    k["remainder"](out, a, b)
    assert out.tolist() == [0, 0, 1, -1, -1]
    k["fmod"](out, a, b)
    assert out.tolist() == [0, 0, -1, 1, -1]
    assert not k.fallbacks


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", COMPARE)
def test_compare_matches_reference(k, op, dtype):
    _run_against_reference(k, op, dtype, 2, "bool")
    assert not k.fallbacks


@pytest.mark.parametrize("dtype", DTYPES)
def test_where_matches_reference(k, dtype):
    rng = np.random.default_rng(3)
    conds = [t for _, t in layouts(SHAPE, "bool", rng, "", 0)]
    values = [t for _, t in layouts(SHAPE, dtype, rng, "", 0)]
    for cond in conds:
        for a in values:
            for b in values[::2]:
                out = torch.empty(*SHAPE, dtype=getattr(torch, dtype))
                expected = torch.empty(*SHAPE, dtype=getattr(torch, dtype))
                k["where"](out, cond, a, b)
                torch._refs.CPU_KERNELS["where"](expected, cond, a, b)
                np.testing.assert_array_equal(_bits(out), _bits(expected))
    assert not k.fallbacks


@pytest.mark.parametrize("src", DTYPES)
@pytest.mark.parametrize("dst", DTYPES)
def test_copy_casts_match_reference(k, src, dst):
    rng = np.random.default_rng(4)
    for _, t in layouts(SHAPE, src, rng, "", 0):
        if src in FLOATS and dst not in FLOATS and dst != "bool":
            t = t.clone()  # finite values in range: PyTorch leaves other casts undefined
            bad = ~torch.isfinite(t) | (t.abs() > 100)
            t = torch.where(bad, torch.zeros_like(t), t)
        out = torch.empty(*SHAPE, dtype=getattr(torch, dst))
        expected = torch.empty(*SHAPE, dtype=getattr(torch, dst))
        k["copy_"](out, t)
        torch._refs.CPU_KERNELS["copy_"](expected, t)
        np.testing.assert_array_equal(_bits(out), _bits(expected), err_msg=f"{src}->{dst}")
    assert not k.fallbacks


@pytest.mark.parametrize("dtype", DTYPES)
def test_fill_matches_reference(k, dtype):
    values = [True, 0, 1, 7, -3, 2.5, -0.0, 1e-3] + ([math.nan, math.inf, 1e10] if dtype in FLOATS
                                                     else [])
    for value in values:
        if dtype == "uint8" and isinstance(value, int) and value < 0:
            continue
        base = torch.empty(6, 9, dtype=getattr(torch, dtype))
        for out in (base, base.transpose(0, 1), base[::2, 1:]):
            expected = out.clone()
            k["fill_"](out, value)
            torch._refs.CPU_KERNELS["fill_"](expected, value)
            np.testing.assert_array_equal(_bits(out), _bits(expected), err_msg=f"{value}")
    assert not k.fallbacks


@pytest.mark.parametrize("dtype", [d for d in DTYPES if d != "bool"])
def test_arange_matches_reference(k, dtype):
    for n, start, step in [(0, 0, 1), (1, 5, 1), (50, -3, 2), (40, 0.5, 0.25), (30, 10, -0.3)]:
        base = torch.empty(2 * n, dtype=getattr(torch, dtype))
        for out in (base[:n], base[::2]):
            expected = out.clone()
            k["arange_"](out, start, step)
            torch._refs.CPU_KERNELS["arange_"](expected, start, step)
            np.testing.assert_array_equal(_bits(out), _bits(expected), err_msg=f"{n} {start}")
    assert not k.fallbacks


# -- layouts the kernels must refuse or special-case ------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int16"])
def test_zero_size_and_zero_dim(k, dtype):
    dt = getattr(torch, dtype)
    empty = torch.empty(0, 3, dtype=dt)
    k["add"](empty, empty, empty)
    k["exp" if dtype != "int16" else "neg"](empty, empty)
    k["lt"](torch.empty(0, 3, dtype=torch.bool), empty, empty)
    a = torch.tensor(3, dtype=dt)
    b = torch.tensor(4, dtype=dt)
    out = torch.empty((), dtype=dt)
    k["mul"](out, a, b)
    assert out.item() == 12
    cmp = torch.empty((), dtype=torch.bool)
    k["lt"](cmp, a, b)
    assert cmp.item() is True
    assert not k.fallbacks


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int32"])
def test_in_place_exact_alias(k, dtype):
    rng = np.random.default_rng(6)
    a = tensor(random_values((5, 300), dtype, rng), dtype)
    b = tensor(random_values((5, 300), dtype, rng), dtype)
    expected = torch.empty_like(a)
    torch._refs.CPU_KERNELS["mul"](expected, a, b)
    k["mul"](a, a, b)
    np.testing.assert_array_equal(_bits(a), _bits(expected))
    expected = torch.empty_like(a)
    torch._refs.CPU_KERNELS["neg"](expected, a)
    k["neg"](a, a)
    np.testing.assert_array_equal(_bits(a), _bits(expected))
    assert not k.fallbacks


def test_partial_overlap_goes_to_the_reference(k):
    a = torch.arange(10, dtype=torch.float32)
    expected = -a[:-1].clone()
    k["neg"](a[1:], a[:-1])
    assert a[1:].tolist() == expected.tolist()
    b = torch.arange(10, dtype=torch.float32)
    k["add"](b[1:], b[:-1], b[:-1])
    assert k.fallbacks == ["neg", "add"]


def test_boundary_errors(k):
    f32 = torch.empty(3, dtype=torch.float32)
    with pytest.raises(ValueError, match=r"prims\.add"):
        k["add"](f32, f32, torch.empty(4, dtype=torch.float32))
    with pytest.raises(TypeError, match=r"prims\.add"):
        k["add"](f32, f32, torch.empty(3, dtype=torch.float64))
    with pytest.raises(TypeError, match=r"prims\.lt"):
        k["lt"](f32, f32, f32)  # the output must be bool
    with pytest.raises(TypeError, match=r"prims\.isnan"):
        k["isnan"](f32, f32)
    with pytest.raises(ValueError, match=r"prims\.where"):
        k["where"](f32, torch.empty(2, dtype=torch.bool), f32, f32)


def test_complex_goes_to_the_reference(k):
    a = torch.tensor([1 + 2j, 3 - 1j])
    out = torch.empty(2, dtype=a.dtype)
    k["add"](out, a, a)
    assert out.tolist() == [2 + 4j, 6 - 2j]
    assert k.fallbacks == ["add"]


# -- threads --------------------------------------------------------------------------------


@pytest.mark.parametrize("op", ["add", "exp", "sin", "lt", "where", "copy_", "bf16add"])
def test_results_do_not_depend_on_threads(op):
    rng = np.random.default_rng(7)
    n = 300_000  # several grains
    dtype = torch.bfloat16 if op == "bf16add" else torch.float32
    kernel_name = "add" if op == "bf16add" else op
    a = torch.tensor(rng.standard_normal(n) * 10).to(dtype)
    b = torch.tensor(rng.standard_normal(n) * 10).to(dtype)
    strided_a = torch.tensor(rng.standard_normal((600, 1000))).to(dtype)[:, ::2]
    strided_b = torch.tensor(rng.standard_normal((500, 600))).to(dtype).transpose(0, 1)
    args = {
        "add": [(a, b), (strided_a, strided_b)],
        "exp": [(a,), (strided_a,)],
        "sin": [(a,), (strided_b,)],
        "lt": [(a, b), (strided_a, strided_b)],
        "where": [(a > 0, a, b), (strided_a > 0, strided_a, strided_b)],
        "copy_": [(a,), (strided_b,)],
    }[kernel_name if op != "bf16add" else "add"]
    results = []
    previous = C.get_num_threads()
    try:
        for threads in (1, 2):
            C.set_num_threads(threads)
            k = Kernels()
            outs = []
            for inputs in args:
                out_dtype = torch.bool if op == "lt" else inputs[-1].dtype
                out = torch.empty(*inputs[-1].shape, dtype=out_dtype)
                k[kernel_name](out, *inputs)
                outs.append(_bits(out))
            assert not k.fallbacks
            results.append(outs)
    finally:
        C.set_num_threads(previous)
    for one, two in zip(*results):
        np.testing.assert_array_equal(one, two)
    # and against the reference
    for inputs, got in zip(args, results[1]):
        out_dtype = torch.bool if op == "lt" else inputs[-1].dtype
        expected = torch.empty(*inputs[-1].shape, dtype=out_dtype)
        torch._refs.CPU_KERNELS[kernel_name](expected, *inputs)
        if op in {"exp", "sin"}:
            np.testing.assert_allclose(got, _bits(expected), rtol=3e-7, atol=1e-30)
        else:
            np.testing.assert_array_equal(got, _bits(expected))


# -- special values of the vectorised float32 functions ---------------------------------------

F32_SPECIAL = np.array(
    [math.nan, -math.nan, math.inf, -math.inf, 0.0, -0.0, 1e-45, -1e-45, 1e-40, 1.17549435e-38,
     3.4028235e38, -3.4028235e38, 1.0, -1.0, 88.72, 88.73, 89.0, -87.3, -103.0, -103.9, -104.5,
     -150.0, 128.0, 127.9, -149.0, -126.5, 0.5, 1e-8, -1e-8, 8191.9, 8192.0, 8192.5, 1e5, 1e30,
     -1e30, 3.14159265, 1.5707964, 20.0, -20.0, 9.0, 0.625, 0.6249],
    dtype=np.float32,
)


@pytest.mark.parametrize("op", ["exp", "exp2", "log", "log2", "log10", "sin", "cos", "tanh",
                                "erf", "sigmoid"])
def test_float32_special_values(k, op):
    x = torch.tensor(F32_SPECIAL)
    out = torch.empty_like(x)
    k[op](out, x)
    fn = {"exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "log10": np.log10,
          "sin": np.sin, "cos": np.cos, "tanh": np.tanh,
          "erf": np.vectorize(math.erf, otypes=[np.float64]), "sigmoid": _sigmoid64}[op]
    with np.errstate(all="ignore"):
        expected = fn(F32_SPECIAL.astype(np.float64)).astype(np.float32)
    got = out.numpy()
    nan = np.isnan(expected)
    np.testing.assert_array_equal(np.isnan(got), nan)
    distance = np.abs(_ordered(got[~nan]) - _ordered(expected[~nan]))
    assert distance.max() <= 2, list(zip(F32_SPECIAL[~nan][distance > 2], got[~nan][distance > 2]))
    # signed zeros are kept where the function is odd
    if op in {"sin", "tanh", "erf"}:
        assert np.signbit(got[F32_SPECIAL == 0]).tolist() == [False, True]
    assert not k.fallbacks


def _sigmoid64(x: np.ndarray) -> np.ndarray:
    """sigmoid in float64 by the textbook formula, 1 / (1 + e^-x) (inf below -709: 0)."""
    with np.errstate(over="ignore"):
        return 1 / (1 + np.exp(-x))


def test_float32_vector_functions_on_a_wide_sweep(k):
    """Every float32 in a sweep of exponents: exp/log/sin/cos/tanh/erf/sigmoid within 2 ulp."""
    rng = np.random.default_rng(8)
    mant = rng.random(200_000).astype(np.float32) + 1
    x = (mant * np.exp2(rng.integers(-149, 127, 200_000)).astype(np.float32)).astype(np.float32)
    x[::2] *= -1
    for op, fn, domain in [("exp", np.exp, (-110, 90)), ("log", np.log, None),
                           ("log2", np.log2, None), ("sin", np.sin, None), ("cos", np.cos, None),
                           ("tanh", np.tanh, None), ("exp2", np.exp2, (-160, 130)),
                           ("erf", np.vectorize(math.erf, otypes=[np.float64]), (-6, 6)),
                           ("sigmoid", _sigmoid64, (-120, 120))]:
        v = x if domain is None else np.clip(x, *domain).astype(np.float32)
        if op.startswith("log"):
            v = np.abs(v)
        out = torch.empty(v.size, dtype=torch.float32)
        k[op](out, torch.tensor(v))
        with np.errstate(all="ignore"):
            expected = fn(v.astype(np.float64)).astype(np.float32)
        got = out.numpy()
        nan = np.isnan(expected)
        np.testing.assert_array_equal(np.isnan(got), nan)
        distance = np.abs(_ordered(got[~nan]) - _ordered(expected[~nan]))
        assert distance.max() <= 2, (op, distance.max())
    assert not k.fallbacks


def test_half_conversions_round_to_nearest_even(k):
    """float32 -> float16/bfloat16 via copy_: numpy's float16 rounding, bfloat16 by bits."""
    rng = np.random.default_rng(11)
    bits = rng.integers(0, 2**32, 200_000, dtype=np.uint64).astype(np.uint32)
    x = bits.view(np.float32)
    src = torch.tensor(x)
    half = torch.empty(x.size, dtype=torch.float16)
    k["copy_"](half, src)
    with np.errstate(all="ignore"):
        expected = x.astype(np.float16)
    got = half.numpy()
    nan = np.isnan(expected)
    np.testing.assert_array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(got[~nan].view(np.uint16), expected[~nan].view(np.uint16))
    bf = torch.empty(x.size, dtype=torch.bfloat16)
    k["copy_"](bf, src)
    expected_bf = torch.empty(x.size, dtype=torch.bfloat16)
    torch._refs.CPU_KERNELS["copy_"](expected_bf, src)
    np.testing.assert_array_equal(_bits(bf), _bits(expected_bf))
    # and back: exact
    back = torch.empty(x.size, dtype=torch.float32)
    k["copy_"](back, half)
    np.testing.assert_array_equal(back.numpy()[~nan], got[~nan].astype(np.float32))
    assert not k.fallbacks


def test_copy_in_place_between_dtypes_of_one_size(k):
    x = torch.tensor([1.5, -2.0, 3.25] * 300, dtype=torch.float32)
    as_int = x.view(torch.int32)
    expected = torch.empty(x.shape, dtype=torch.int32)
    torch._refs.CPU_KERNELS["copy_"](expected, x)
    k["copy_"](as_int, x)
    assert as_int.tolist() == expected.tolist()
    assert not k.fallbacks


@pytest.mark.parametrize("dtype", sorted(FLOATS))
def test_pow_by_small_scalar_exponents(k, dtype):
    """x ** 2 and friends have their own vectorised loops (2 and -1 correctly rounded, 3 and
    -2 with two roundings): within the pow tolerance of the reference."""
    rng = np.random.default_rng(12)
    a = tensor(random_values((5, 41), dtype, rng), dtype)
    for exponent in (1.0, 2.0, 3.0, -1.0, -2.0, 0.5, 2.5, 0.0):
        b = tensor(np.asarray(exponent), dtype).expand(5, 41)
        out = torch.empty(5, 41, dtype=getattr(torch, dtype))
        expected = torch.empty(5, 41, dtype=getattr(torch, dtype))
        k["pow"](out, a, b)
        torch._refs.CPU_KERNELS["pow"](expected, a, b)
        assert_close(out, expected, dtype, "pow", f"pow {exponent} {dtype}")
    assert not k.fallbacks


def _hypotf(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """C's hypotf: the square root of the float64 sum of the float64 squares, rounded to float32
    (the squares are exact), inf when either operand is infinite, even beside a NaN."""
    wide = np.sqrt(x.astype(np.float64) ** 2 + y.astype(np.float64) ** 2).astype(np.float32)
    return np.where(np.isinf(x) | np.isinf(y), np.float32(np.inf), wide)


def test_float32_hypot_has_the_bits_of_c_hypotf(k):
    """float32 hypot: the same bits on every path (unit-stride arrays by blocks of roots,
    a number or a broadcast row, strided operands), inf for an infinite operand beside a NaN."""
    rng = np.random.default_rng(12)
    x = np.concatenate([rng.standard_normal(3000).astype(np.float32) * 1e3,
                        np.repeat(F32_SPECIAL, F32_SPECIAL.size)])
    y = np.concatenate([rng.standard_normal(3000).astype(np.float32),
                        np.tile(F32_SPECIAL, F32_SPECIAL.size)])
    with np.errstate(all="ignore"):
        expected = _hypotf(x, y)
    out = torch.empty(x.size, dtype=torch.float32)
    k["hypot"](out, torch.tensor(x), torch.tensor(y))
    np.testing.assert_array_equal(out.numpy(), expected)
    # a broadcast number (one scalar operand) and strided operands
    wide = torch.tensor(np.stack([x, y], 1))  # x and y interleaved: stride 2
    strided = torch.empty(x.size, dtype=torch.float32)
    k["hypot"](strided, wide[:, 0], wide[:, 1])
    np.testing.assert_array_equal(strided.numpy(), expected)
    for number in (np.float32(3.5), np.float32(np.inf), np.float32(np.nan)):
        one = torch.empty(x.size, dtype=torch.float32)
        k["hypot"](one, torch.tensor(x), torch.tensor(np.full(1, number)).expand(x.size))
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(one.numpy(), _hypotf(x, np.full_like(x, number)))
    assert not k.fallbacks


def test_complex_magnitude_follows_the_layout_with_hypot_bits():
    """|z| of complex64 is hypotf of its parts (what PyTorch's CPU abs gives), of complex128
    hypot's to within an ulp, and its result keeps the input's layout (a transposed spectrum's
    magnitude is transposed too, as with any elementwise op)."""
    rng = np.random.default_rng(13)
    parts = rng.standard_normal((2, 6, 5, 4)).astype(np.float32)
    parts[:, 0, 0, 0] = [np.inf, np.nan]
    values = np.empty(parts.shape[1:], dtype=np.complex64)  # (x + 1j * nan has a NaN real part)
    values.real, values.imag = parts
    z = torch.tensor(values).transpose(0, 2)
    got = z.abs()
    assert got.dtype == torch.float32 and got.stride() == (1, 4, 20)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(got.numpy(), _hypotf(parts[0], parts[1]).transpose(2, 1, 0))
    z128 = torch.tensor(values.astype(np.complex128))
    with np.errstate(all="ignore"):
        wide = parts.astype(np.float64)
        np.testing.assert_allclose(z128.abs().numpy(), np.hypot(wide[0], wide[1]), rtol=2.3e-16)
