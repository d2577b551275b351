"""The foundation ops: creation, copies across dtypes and devices, add/mul/sum, host views,
printing, and the same ops on the ``toy`` plugin device.

Expected values come from numpy or are written by hand, never from the code under test.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import torch

ALL = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
       "float64", "complex64", "complex128"]
INTS = ["uint8", "int8", "int16", "int32", "int64"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]
COMPLEX = ["complex64", "complex128"]
NO_BF16 = [n for n in ALL if n != "bfloat16"]


def dt(name: str) -> torch.dtype:
    return getattr(torch, name)


@pytest.fixture
def warn_always():
    """Make the CPU fallback warn on every call, not once per op."""
    torch.set_warn_always(True)
    try:
        yield
    finally:
        torch.set_warn_always(False)


@pytest.fixture
def default_float64():
    torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        torch.set_default_dtype(torch.float32)


# -- creation --------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [(2, 3), ((2, 3),), ([2, 3],), (torch.Size([2, 3]),)])
def test_factories_accept_every_size_form(size):
    for factory in (torch.empty, torch.zeros, torch.ones):
        t = factory(*size)
        assert t.shape == (2, 3)
        assert t.stride() == (3, 1)
        assert t.dtype is torch.float32
        assert t.device == torch.device("cpu")
        assert not t.requires_grad


def test_zeros_ones_full_values():
    assert torch.zeros(2, 2).tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert torch.ones(3, dtype=torch.int32).tolist() == [1, 1, 1]
    assert torch.full((2,), 7.5).tolist() == [7.5, 7.5]
    assert torch.full((2, 1), -3, dtype=torch.int8).tolist() == [[-3], [-3]]
    assert torch.zeros(()).shape == ()
    assert torch.ones(()).item() == 1.0
    assert torch.zeros(0, 4).shape == (0, 4)
    assert torch.ones(2, dtype=torch.bool).tolist() == [True, True]
    assert torch.ones(2, dtype=torch.complex64).tolist() == [1 + 0j, 1 + 0j]


@pytest.mark.parametrize("fill, expected", [
    (1, torch.int64), (True, torch.bool), (1.5, torch.float32), (1j, torch.complex64),
])
def test_full_infers_dtype_from_fill_value(fill, expected):
    assert torch.full((2,), fill).dtype is expected


def test_full_infers_default_dtype(default_float64):
    assert torch.full((2,), 1.5).dtype is torch.float64
    assert torch.full((2,), 1j).dtype is torch.complex128
    assert torch.zeros(2).dtype is torch.float64


@pytest.mark.parametrize("name", ALL)
def test_factories_with_dtype(name):
    for t in (torch.empty(2, dtype=dt(name)), torch.zeros(2, dtype=dt(name)),
              torch.ones(2, 1, dtype=dt(name)), torch.full((2,), 1, dtype=dt(name))):
        assert t.dtype is dt(name)
    assert torch.zeros(3, dtype=dt(name)).tolist() == [0, 0, 0]
    assert torch.ones(3, dtype=dt(name)).tolist() == [1, 1, 1]


def test_factories_with_device():
    for device in ("meta", torch.device("meta")):
        t = torch.zeros(2, 3, device=device)
        assert t.device == torch.device("meta")
        assert t.shape == (2, 3)
    t = torch.full((2,), 4.0, device="toy")
    assert t.device == torch.device("toy:0")
    assert t.tolist() == [4.0, 4.0]


def test_requires_grad():
    for t in (torch.zeros(2, requires_grad=True), torch.ones(2, requires_grad=True),
              torch.empty(2, requires_grad=True), torch.full((2,), 1.0, requires_grad=True),
              torch.tensor([1.0], requires_grad=True)):
        assert t.requires_grad
        assert t.is_leaf
    with pytest.raises(RuntimeError, match="floating point and complex"):
        torch.zeros(2, dtype=torch.int64, requires_grad=True)
    with pytest.raises(RuntimeError, match="floating point and complex"):
        torch.tensor([1, 2], requires_grad=True)


@pytest.mark.parametrize("factory", [torch.empty, torch.zeros, torch.ones])
def test_negative_size(factory):
    with pytest.raises(RuntimeError,
                       match=r"Trying to create tensor with negative dimension -1: \[2, -1\]"):
        factory(2, -1)
    with pytest.raises(RuntimeError, match="negative dimension"):
        torch.full((-2,), 1.0)


def test_size_must_be_integers():
    with pytest.raises(TypeError):
        torch.zeros(2.5)
    with pytest.raises(TypeError):
        torch.zeros("2")


def test_empty_strided():
    t = torch.empty_strided((2, 3), (1, 2))
    assert t.shape == (2, 3)
    assert t.stride() == (1, 2)
    assert not t.is_contiguous()
    assert t.untyped_storage().nbytes() == 6 * 4
    t.fill_(2.0)
    assert t.tolist() == [[2.0] * 3] * 2
    e = torch.empty_strided((2, 2), (0, 1), dtype=torch.int16)
    assert e.untyped_storage().nbytes() == 2 * 2
    with pytest.raises(RuntimeError, match="mismatch in length of strides and shape"):
        torch.empty_strided((2, 3), (1,))


def test_like_factories():
    base = torch.tensor([[1, 2, 3], [4, 5, 6]], dtype=torch.int16)
    z = torch.zeros_like(base)
    assert (z.shape, z.dtype, z.tolist()) == ((2, 3), torch.int16, [[0, 0, 0], [0, 0, 0]])
    o = torch.ones_like(base, dtype=torch.float64)
    assert (o.dtype, o.tolist()) == (torch.float64, [[1.0] * 3] * 2)
    f = torch.full_like(base, 9)
    assert f.tolist() == [[9] * 3] * 2
    e = torch.empty_like(base, device="meta")
    assert (e.device, e.dtype, e.shape) == (torch.device("meta"), torch.int16, (2, 3))
    g = torch.zeros_like(base, dtype=torch.float32, requires_grad=True)
    assert g.requires_grad
    assert base.new_zeros((2,)).dtype is torch.int16
    assert base.new_ones(3).tolist() == [1, 1, 1]
    assert base.new_full((1,), 4).tolist() == [4]
    assert base.new_tensor([7, 8]).dtype is torch.int16
    assert base.new_empty((4, 1)).shape == (4, 1)


def test_like_and_clone_keep_a_dense_layout():
    # PyTorch's preserve_format: a transposed (still dense) tensor gives a transposed result
    base = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    tr = base.t()
    for result in (torch.zeros_like(tr), torch.empty_like(tr), tr.clone(), tr.to(torch.float64)):
        assert result.shape == (3, 2)
        assert result.stride() == (1, 3)
    assert tr.clone().tolist() == [[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]]
    assert tr.to(torch.float64).tolist() == [[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]]
    assert tr.clone(memory_format=torch.contiguous_format).stride() == (2, 1)
    assert tr.contiguous().stride() == (2, 1)
    # size-1 dims keep their strides too
    col = base[:1].t()  # (3, 1) with strides (1, 3)
    assert col.clone().stride() == (1, 3)
    # a non-dense input (every other column) gives a dense result
    sparse_cols = base[:, ::2].clone()
    assert sparse_cols.is_contiguous()
    assert sparse_cols.tolist() == [[1.0, 3.0], [4.0, 6.0]]


def test_clone_is_independent():
    t = torch.tensor([1, 2, 3])
    c = t.clone()
    c.fill_(0)
    assert t.tolist() == [1, 2, 3]
    assert c.untyped_storage() is not t.untyped_storage()


# -- torch.tensor ----------------------------------------------------------------------------


@pytest.mark.parametrize("data, expected", [
    (True, torch.bool),
    ([True, False], torch.bool),
    (3, torch.int64),
    ([1, 2], torch.int64),
    ([True, 2], torch.int64),
    (2.5, torch.float32),
    ([1, 2.0], torch.float32),
    ([[1], [2.5]], torch.float32),
    (1j, torch.complex64),
    ([1, 2j], torch.complex64),
    ([1.5, True, 2j], torch.complex64),
    ([], torch.float32),
    ([[], []], torch.float32),
    ((1, 2), torch.int64),
    (range(3), torch.int64),
])
def test_tensor_dtype_inference(data, expected):
    assert torch.tensor(data).dtype is expected


def test_tensor_dtype_inference_follows_default(default_float64):
    assert torch.tensor(2.5).dtype is torch.float64
    assert torch.tensor([1, 2.5]).dtype is torch.float64
    assert torch.tensor(1j).dtype is torch.complex128
    assert torch.tensor([1, 2]).dtype is torch.int64


def test_tensor_shapes_and_values():
    t = torch.tensor([[1, 2, 3], [4, 5, 6]])
    assert t._version == 0
    assert torch.tensor([1.0], device="toy")._version == 0
    assert torch.zeros(2)._version == 0
    assert t.shape == (2, 3)
    assert t.tolist() == [[1, 2, 3], [4, 5, 6]]
    assert torch.tensor(5).shape == ()
    assert torch.tensor([]).shape == (0,)
    assert torch.tensor([[]]).shape == (1, 0)
    assert torch.tensor(((1.5,), (2.5,))).tolist() == [[1.5], [2.5]]
    assert torch.tensor([1.7, -1.7], dtype=torch.int32).tolist() == [1, -1]
    assert torch.tensor([0, 2, 0], dtype=torch.bool).tolist() == [False, True, False]


def test_tensor_from_numpy_array_copies():
    a = np.array([[1, 2], [3, 4]], dtype=np.int16)
    t = torch.tensor(a)
    assert t.dtype is torch.int16
    assert t.tolist() == a.tolist()
    a[0, 0] = 100
    assert t[0, 0].item() == 1
    assert torch.tensor(np.array([1.5], np.float64)).dtype is torch.float64
    assert torch.tensor(np.array([1.5], np.float32), dtype=torch.float16).dtype is torch.float16


def test_tensor_of_tensor_copies_and_warns():
    src = torch.tensor([1.0, 2.0])
    with pytest.warns(UserWarning, match="clone"):
        t = torch.tensor(src)
    assert t.tolist() == [1.0, 2.0]
    assert t.untyped_storage() is not src.untyped_storage()


def test_ragged_list():
    with pytest.raises(ValueError, match=r"expected sequence of length 2 at dim 1 \(got 1\)"):
        torch.tensor([[1, 2], [3]])
    with pytest.raises(ValueError):
        torch.tensor([[1, 2], [3, 4], [5, 6, 7]])


@pytest.mark.parametrize("data", ["abc", [1, "a"], None, {1: 2}, [object()]])
def test_invalid_data(data):
    with pytest.raises(TypeError):
        torch.tensor(data)


@pytest.mark.parametrize("data, name", [
    ([300], "uint8"), (-1, "uint8"), ([128], "int8"), ([-129], "int8"), (40000, "int16"),
    (2**31, "int32"), (2**63, "int64"),
])
def test_integer_overflow(data, name):
    with pytest.raises(RuntimeError, match="overflow"):
        torch.tensor(data, dtype=dt(name))
    if name == "int64":  # also without a dtype: 2**63 does not fit the inferred int64
        with pytest.raises(RuntimeError):
            torch.tensor(data)


def test_fill_overflow():
    with pytest.raises(RuntimeError, match="overflow"):
        torch.zeros(2, dtype=torch.uint8).fill_(-1)
    with pytest.raises(RuntimeError, match="overflow"):
        torch.full((2,), 300, dtype=torch.uint8)
    with pytest.raises(RuntimeError):
        torch.zeros(2).fill_(1j)
    t = torch.zeros(2, dtype=torch.int8)
    t.fill_(-128)
    assert t.tolist() == [-128, -128]
    t.fill_(2.9)  # a float fills an integer tensor truncated
    assert t.tolist() == [2, 2]
    assert t._version == 2


def test_integer_bounds_fit():
    assert torch.tensor([0, 255], dtype=torch.uint8).tolist() == [0, 255]
    assert torch.tensor([-128, 127], dtype=torch.int8).tolist() == [-128, 127]
    assert torch.tensor([-(2**63), 2**63 - 1]).tolist() == [-(2**63), 2**63 - 1]


# -- copies across dtypes --------------------------------------------------------------------

SOURCE_VALUES = {
    "bool": [True, False, True, False],
    "uint8": [0, 1, 200, 100],
    "int8": [0, 1, -5, 100],
    "int16": [0, 1, -5, 100],
    "int32": [0, 1, -5, 100],
    "int64": [0, 1, -5, 100],
    # exactly representable in every floating dtype, bfloat16 included
    "float16": [0.0, 1.5, 2.75, 100.5],
    "bfloat16": [0.0, 1.5, 2.75, 100.5],
    "float32": [0.0, 1.5, 2.75, 100.5],
    "float64": [0.0, 1.5, 2.75, 100.5],
    "complex64": [0j, 2j, 1.5 + 2j, 100.5 - 1j],
    "complex128": [0j, 2j, 1.5 + 2j, 100.5 - 1j],
}
BITS = {"uint8": 8, "int8": 8, "int16": 16, "int32": 32, "int64": 64}


def expected_cast(values: list, dst: str) -> list:
    """PyTorch's casting rules written out: nonzero -> True, integers truncate toward zero and
    wrap modulo 2**bits, complex -> real keeps the real part."""
    real = [v.real if isinstance(v, complex) else v for v in values]
    if dst == "bool":
        return [v != 0 for v in values]
    if dst in BITS:
        bits = BITS[dst]
        out = []
        for v in real:
            x = int(v) % 2**bits  # int() truncates toward zero
            if dst != "uint8" and x >= 2 ** (bits - 1):
                x -= 2**bits
            out.append(x)
        return out
    if dst in FLOATS:
        return [float(v) for v in real]
    return [complex(v) for v in values]


def _quiet(fn):
    """Run ``fn`` hiding the complex -> real warning (tested on its own)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return fn()


@pytest.mark.parametrize("src", ALL)
@pytest.mark.parametrize("dst", ALL)
def test_to_dtype_all_pairs(src, dst):
    t = torch.tensor(SOURCE_VALUES[src], dtype=dt(src))
    assert t.tolist() == SOURCE_VALUES[src]
    out = _quiet(lambda: t.to(dt(dst)))
    assert out.dtype is dt(dst)
    assert out.tolist() == expected_cast(SOURCE_VALUES[src], dst)
    if src == dst:
        assert out is t


@pytest.mark.parametrize("src", ALL)
@pytest.mark.parametrize("dst", ALL)
def test_copy_all_pairs_with_strides(src, dst):
    values = SOURCE_VALUES[src]
    expected = expected_cast(values, dst)
    t = torch.tensor(values, dtype=dt(src))
    d = torch.empty(4, dtype=dt(dst))
    assert _quiet(lambda: d.copy_(t)) is d
    assert d.tolist() == expected
    assert d._version == 1
    # into a transposed destination, from a transposed source
    d2 = torch.zeros(2, 2, dtype=dt(dst)).t()
    _quiet(lambda: d2.copy_(t.view(2, 2)))
    assert d2.tolist() == [expected[0:2], expected[2:4]]
    d3 = torch.zeros(2, 2, dtype=dt(dst))
    _quiet(lambda: d3.copy_(t.view(2, 2).t()))
    assert d3.tolist() == [[expected[0], expected[2]], [expected[1], expected[3]]]


def test_copy_broadcasts_source():
    d = torch.zeros(2, 3, dtype=torch.int32)
    d.copy_(torch.tensor([1.9, 2.1, -3.9]))
    assert d.tolist() == [[1, 2, -3], [1, 2, -3]]
    d.copy_(torch.tensor(7))
    assert d.tolist() == [[7] * 3] * 2
    with pytest.raises(RuntimeError):
        d.copy_(torch.zeros(4))
    with pytest.raises(TypeError):
        d.copy_([1, 2, 3])


@pytest.mark.parametrize("src", ["float16", "float32", "float64"])
@pytest.mark.parametrize("dst", ["int8", "int16", "int32", "int64"])
def test_float_to_int_truncates_toward_zero(src, dst):
    t = torch.tensor([-2.75, -0.5, 0.5, 2.75, -100.75, 99.5], dtype=dt(src))
    assert t.to(dt(dst)).tolist() == [-2, 0, 0, 2, -100, 99]


def test_nonzero_becomes_true():
    t = torch.tensor([0.0, -0.0, 1e-30, -3.0, float("nan"), float("inf")], dtype=torch.float64)
    assert t.to(torch.bool).tolist() == [False, False, True, True, True, True]
    c = torch.tensor([0j, 1e-20j, -1 + 0j])
    assert c.to(torch.bool).tolist() == [False, True, True]


def test_complex_to_real_warns():
    c = torch.tensor([1.5 + 2j])
    with pytest.warns(UserWarning, match="discards the imaginary part"):
        r = c.to(torch.float32)
    assert r.tolist() == [1.5]


def _f32(bits: int) -> float:
    return float(np.array([bits], np.uint32).view(np.float32)[0])


BF16_ROUNDING = [
    # float32 bit pattern, expected bfloat16 value (round to nearest, ties to even)
    (0x3F808000, 1.0),  # 1.00390625: exactly half way, 0x3F80 is even: down
    (0x3F818000, 1.015625),  # 1.01171875: half way, 0x3F81 is odd: up to 0x3F82
    (0x3F80A000, 1.0078125),  # just above half: up
    (0x3F806000, 1.0),  # below half: down
    (0xBF818000, -1.015625),  # sign does not matter
    (0x43808000, 256.0),  # 257: half way between 256 and 258, 256 is even
    (0x43818000, 260.0),  # 259: half way between 258 and 260, 260 is even
    (0x7F7FFFFF, math.inf),  # float32 max rounds up past bfloat16's max
    (0x7F800000, math.inf),
    (0xFF800000, -math.inf),
    (0x3F800001, 1.0),
    (0x00000000, 0.0),
]


def test_bfloat16_test_values_are_what_they_claim():
    assert _f32(0x3F808000) == 1.00390625
    assert _f32(0x3F818000) == 1.01171875
    assert _f32(0x43808000) == 257.0


@pytest.mark.parametrize("bits, expected", BF16_ROUNDING)
def test_bfloat16_round_to_nearest_even(bits, expected):
    value = _f32(bits)
    assert torch.tensor([value]).to(torch.bfloat16).item() == expected
    assert torch.tensor([value], dtype=torch.float64).to(torch.bfloat16).item() == expected
    assert torch.tensor([value], dtype=torch.bfloat16).item() == expected
    assert torch.full((1,), value, dtype=torch.bfloat16).item() == expected
    d = torch.empty(1, dtype=torch.bfloat16)
    d.copy_(torch.tensor([value]))
    assert d.item() == expected


def test_bfloat16_nan_and_integers():
    t = torch.tensor([float("nan")]).to(torch.bfloat16)
    assert math.isnan(t.item())
    assert torch.tensor([257, 259, -257]).to(torch.bfloat16).tolist() == [256.0, 260.0, -256.0]
    # bfloat16 -> float32 is exact
    assert torch.tensor([1.015625], dtype=torch.bfloat16).to(torch.float32).item() == 1.015625


def test_float16_rounding_matches_numpy():
    values = [0.1, 1.0009765625, 65504.0, 65520.0, 1e-8, 3.14159]
    with np.errstate(over="ignore"):  # 65520 rounds to inf
        expected = np.array(values, np.float32).astype(np.float16).astype(np.float64).tolist()
    assert expected[3] == math.inf
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # PyTorch does not warn about the overflow
        assert torch.tensor(values).to(torch.float16).tolist() == expected
        assert torch.tensor(values, dtype=torch.float16).tolist() == expected
        assert torch.tensor([1e39], dtype=torch.bfloat16).item() == math.inf


# -- to() ------------------------------------------------------------------------------------


def test_to_returns_self_when_nothing_changes():
    t = torch.tensor([1.0, 2.0])
    assert t.to(torch.float32) is t
    assert t.to("cpu") is t
    assert t.to(torch.device("cpu")) is t
    assert t.to("cpu", torch.float32) is t
    assert t.to(torch.zeros(1)) is t
    assert t.to(dtype=torch.float32, device="cpu") is t
    assert t.cpu() is t
    assert t.float() is t


def test_to_copy_returns_a_new_tensor():
    t = torch.tensor([1.0, 2.0])
    for c in (t.to(torch.float32, copy=True), t.to("cpu", copy=True),
              t.to("cpu", torch.float32, False, True), t.to(t, copy=True)):
        assert c is not t
        assert c.tolist() == [1.0, 2.0]
        assert c.untyped_storage() is not t.untyped_storage()
        c.fill_(0.0)
    assert t.tolist() == [1.0, 2.0]


def test_to_forms():
    t = torch.tensor([1.5, -2.5])
    d = t.to(torch.float64)
    assert (d.dtype, d.device, d.tolist()) == (torch.float64, torch.device("cpu"), [1.5, -2.5])
    assert t.to(dtype=torch.int32).tolist() == [1, -2]
    other = torch.zeros(1, dtype=torch.int16)
    assert t.to(other).dtype is torch.int16
    toy = t.to("toy")
    assert (toy.device, toy.dtype) == (torch.device("toy:0"), torch.float32)
    toy64 = t.to("toy", torch.float64)
    assert (toy64.device, toy64.dtype) == (torch.device("toy:0"), torch.float64)
    toy_int = t.to(device="toy", dtype=torch.int32)
    assert (toy_int.device, toy_int.dtype) == (torch.device("toy:0"), torch.int32)
    assert toy_int.cpu().tolist() == [1, -2]
    like_toy = t.to(toy_int)
    assert (like_toy.device, like_toy.dtype) == (torch.device("toy:0"), torch.int32)
    assert t.to(torch.device("toy", 1)).device == torch.device("toy:1")
    assert toy.to(toy) is toy
    assert toy.to("toy") is toy
    assert toy.to("toy:0") is toy
    assert toy.cpu().tolist() == [1.5, -2.5]
    assert d._version == 0
    with pytest.raises(TypeError):
        t.to(torch.float64, bogus=True)


@pytest.mark.parametrize("method, name", [
    ("float", "float32"), ("double", "float64"), ("half", "float16"), ("bfloat16", "bfloat16"),
    ("int", "int32"), ("long", "int64"), ("short", "int16"), ("char", "int8"),
    ("byte", "uint8"), ("bool", "bool"),
])
def test_cast_methods(method, name):
    t = torch.tensor([0.0, 2.0, 3.0])
    out = getattr(t, method)()
    assert out.dtype is dt(name)
    assert out.tolist() == expected_cast([0.0, 2.0, 3.0], name)


def test_type_method():
    assert torch.zeros(1).type() == "torch.FloatTensor"
    assert torch.zeros(1, dtype=torch.float64).type() == "torch.DoubleTensor"
    assert torch.zeros(1, dtype=torch.int64).type() == "torch.LongTensor"
    assert torch.zeros(1).type(torch.int32).dtype is torch.int32


# -- add / mul -------------------------------------------------------------------------------


@pytest.mark.parametrize("shape_a, shape_b", [
    ((2, 3), (2, 3)), ((2, 1, 3), (4, 1)), ((3,), (2, 3)), ((), (2, 2)), ((2, 2), ()),
    ((1,), (5,)), ((4, 1, 1), (1, 3, 2)), ((0, 3), (1, 3)),
])
@pytest.mark.parametrize("name", ["int64", "float32", "float64", "int16"])
def test_add_mul_broadcast_match_numpy(shape_a, shape_b, name):
    rng = np.random.default_rng(0)
    a = rng.integers(-50, 50, size=shape_a).astype(name)
    b = rng.integers(-50, 50, size=shape_b).astype(name)
    # (tolist() loses the shape of empty arrays, hence the reshape)
    ta = torch.tensor(a.tolist(), dtype=dt(name)).reshape(shape_a)
    tb = torch.tensor(b.tolist(), dtype=dt(name)).reshape(shape_b)
    for result, expected in ((ta + tb, a + b), (ta * tb, a * b), (torch.add(ta, tb), a + b),
                             (torch.mul(ta, tb), a * b), (ta.add(tb), a + b),
                             (ta.mul(tb), a * b), (ta.multiply(tb), a * b)):
        assert result.shape == expected.shape
        assert result.dtype is dt(name)
        assert result.tolist() == expected.tolist()


def test_add_mul_on_strided_inputs():
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    t = torch.tensor(a.tolist(), dtype=torch.float64)
    assert (t.t() + t.t()).tolist() == (a.T + a.T).tolist()
    assert (t[:, ::2] * t[:, 1::2]).tolist() == (a[:, ::2] * a[:, 1::2]).tolist()
    assert (t[1] + t[:, :1]).tolist() == (a[1] + a[:, :1]).tolist()


def test_broadcast_error():
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(3\) must match the size of "
                                           r"tensor b \(4\) at non-singleton dimension 1"):
        torch.zeros(2, 3) + torch.zeros(4)


def test_scalar_operands():
    i = torch.tensor([1, 2, 3])
    assert (i + 2).tolist() == [3, 4, 5]
    assert (i + 2).dtype is torch.int64
    assert (2 + i).tolist() == [3, 4, 5]
    assert (i * 3).tolist() == [3, 6, 9]
    assert (3 * i).tolist() == [3, 6, 9]
    f = i * 2.5
    assert (f.dtype, f.tolist()) == (torch.float32, [2.5, 5.0, 7.5])
    assert (2.5 + i).dtype is torch.float32
    assert (i + True).tolist() == [2, 3, 4]
    c = i * 1j
    assert (c.dtype, c.tolist()) == (torch.complex64, [1j, 2j, 3j])
    s = torch.tensor(2, dtype=torch.int32) + 3
    assert (s.shape, s.dtype, s.item()) == ((), torch.int32, 5)


def test_small_dtypes_keep_their_dtype_with_scalars():
    h = torch.tensor([1.0, 2.0], dtype=torch.float16)
    out = h + 1.0
    assert out.dtype is torch.float16
    assert out.tolist() == [2.0, 3.0]
    # the sum is rounded to float16: 1 + 0.0001 is 1 in half precision
    assert (torch.tensor([1.0], dtype=torch.float16) + 0.0001).item() == 1.0
    b = torch.tensor([1.0, 3.0], dtype=torch.bfloat16) * 1.5
    assert (b.dtype, b.tolist()) == (torch.bfloat16, [1.5, 4.5])
    u = torch.tensor([250], dtype=torch.uint8) + 10
    assert (u.dtype, u.tolist()) == (torch.uint8, [4])  # wraps modulo 256


def test_mixed_dtype_arithmetic_values():
    u = torch.tensor([200, 100], dtype=torch.uint8)
    s = torch.tensor([-100, 50], dtype=torch.int8)
    r = u + s
    assert (r.dtype, r.tolist()) == (torch.int16, [100, 150])
    h = torch.tensor([1.5], dtype=torch.float16) + torch.tensor([2.5], dtype=torch.bfloat16)
    assert (h.dtype, h.tolist()) == (torch.float32, [4.0])
    m = torch.tensor([3], dtype=torch.int32) * torch.tensor(2.5)
    assert (m.dtype, m.tolist()) == (torch.float32, [7.5])
    z = torch.tensor([1 + 2j]) * torch.tensor([3 - 1j])
    assert z.tolist() == [5 + 5j]


def test_integer_overflow_wraps():
    t = torch.tensor([100, -100], dtype=torch.int8)
    assert (t + t).tolist() == [-56, 56]
    assert (t * 2).tolist() == [-56, 56]
    big = torch.tensor([2**62])
    assert (big * 4).tolist() == [0]


def test_bool_arithmetic():
    a = torch.tensor([True, False, False, True])
    b = torch.tensor([True, True, False, False])
    s = a + b
    assert (s.dtype, s.tolist()) == (torch.bool, [True, True, False, True])  # logical or
    p = a * b
    assert (p.dtype, p.tolist()) == (torch.bool, [True, False, False, False])  # logical and
    n = a + 1
    assert (n.dtype, n.tolist()) == (torch.int64, [2, 1, 1, 2])


def test_add_alpha():
    a = torch.tensor([1, 2])
    b = torch.tensor([10, 20])
    assert torch.add(a, b, alpha=2).tolist() == [21, 42]
    assert a.add(b, alpha=-1).tolist() == [-9, -18]
    assert a.add(3, alpha=2).tolist() == [7, 8]
    f = torch.tensor([1.0, 2.0])
    assert f.add(b, alpha=0.5).tolist() == [6.0, 12.0]
    assert torch.add(f, f, alpha=2.5).tolist() == [3.5, 7.0]
    with pytest.raises(RuntimeError, match="For integral input tensors, argument alpha must not "
                                           "be a floating point number"):
        a.add(b, alpha=2.5)


def test_add_mul_type_errors():
    t = torch.tensor([1.0])
    with pytest.raises(TypeError):
        t + "a"
    with pytest.raises(TypeError):
        t * [1]
    with pytest.raises(TypeError):
        torch.add(1, t)


def test_out_argument():
    a = torch.tensor([1, 2, 3])
    out = torch.empty(3, dtype=torch.int64)
    assert torch.add(a, a, out=out) is out
    assert out.tolist() == [2, 4, 6]
    narrow = torch.empty(3, dtype=torch.int32)  # a narrower dtype of the same category is fine
    torch.mul(a, a, out=narrow)
    assert (narrow.dtype, narrow.tolist()) == (torch.int32, [1, 4, 9])
    wide = torch.empty(3, dtype=torch.float64)  # a higher category is fine
    torch.add(a, 1, out=wide)
    assert wide.tolist() == [2.0, 3.0, 4.0]
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                           "output type Long"):
        torch.add(a, 0.5, out=out)
    with pytest.raises(RuntimeError, match="result type Long can't be cast to the desired "
                                           "output type Bool"):
        torch.add(a, 1, out=torch.empty(3, dtype=torch.bool))
    empty = torch.empty(0, dtype=torch.int64)
    torch.add(a, 1, out=empty)
    assert (empty.shape, empty.tolist()) == ((3,), [2, 3, 4])


def test_out_argument_of_the_wrong_shape_is_resized_with_a_warning():
    out = torch.zeros(2)
    with pytest.warns(UserWarning, match="An output with one or more elements was resized"):
        torch.add(torch.ones(3), 1, out=out)
    assert out.tolist() == [2.0, 2.0, 2.0]


def test_in_place_ops():
    t = torch.tensor([1.0, 2.0, 3.0])
    same = t
    assert t.add_(1) is t
    assert t.tolist() == [2.0, 3.0, 4.0]
    assert t.mul_(2) is t
    assert t.tolist() == [4.0, 6.0, 8.0]
    t += torch.tensor([1.0, 1.0, 1.0])
    assert t is same
    t *= 0.5
    assert t is same
    assert t.tolist() == [2.5, 3.5, 4.5]
    t.add_(torch.tensor([1.0, 2.0, 3.0]), alpha=2)
    assert t.tolist() == [4.5, 7.5, 10.5]
    assert t._version == 5


def test_in_place_broadcasts_into_self():
    t = torch.zeros(2, 3, dtype=torch.int64)
    t += torch.tensor([1, 2, 3])
    assert t.tolist() == [[1, 2, 3], [1, 2, 3]]
    t *= torch.tensor([[2], [3]])
    assert t.tolist() == [[2, 4, 6], [3, 6, 9]]
    with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the broadcast "
                                           r"shape \[2, 3\]"):
        torch.zeros(3).add_(torch.zeros(2, 3))


def test_in_place_keeps_dtype_and_checks_casts():
    i = torch.tensor([1, 2])
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output "
                                           "type Long"):
        i.add_(1.5)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output "
                                           "type Long"):
        i *= 1.5
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output "
                                           "type Int"):
        torch.tensor([1], dtype=torch.int32).add_(torch.tensor([1.0]))
    with pytest.raises(RuntimeError, match="result type Long can't be cast to the desired output "
                                           "type Bool"):
        torch.tensor([True]).add_(1)
    with pytest.raises(RuntimeError, match="result type ComplexFloat can't be cast to the "
                                           "desired output type Float"):
        torch.tensor([1.0]).mul_(1j)
    assert i.tolist() == [1, 2]  # a failed op leaves self alone
    # narrowing within a category is allowed: the result is cast back to self's dtype
    s = torch.tensor([100, 200], dtype=torch.int32)
    s.add_(torch.tensor([1, 2]))
    assert (s.dtype, s.tolist()) == (torch.int32, [101, 202])
    b = torch.tensor([100], dtype=torch.int8)
    b.add_(torch.tensor([100]))  # computed in int64, wrapped into int8
    assert b.tolist() == [-56]
    f = torch.tensor([1.0])
    f.mul_(torch.tensor([0.1], dtype=torch.float64))
    assert (f.dtype, f.item()) == (torch.float32, float(np.float32(0.1)))
    h = torch.tensor([1.0], dtype=torch.float16)
    h += 2.0
    assert (h.dtype, h.tolist()) == (torch.float16, [3.0])
    flag = torch.tensor([True, False])
    flag += torch.tensor([False, True])
    assert flag.tolist() == [True, True]


def test_can_cast():
    assert torch.can_cast(torch.int64, torch.int32)
    assert torch.can_cast(torch.float64, torch.float16)
    assert torch.can_cast(torch.int32, torch.float32)
    assert torch.can_cast(torch.bool, torch.uint8)
    assert not torch.can_cast(torch.float32, torch.int64)
    assert not torch.can_cast(torch.complex64, torch.float64)
    assert not torch.can_cast(torch.int8, torch.bool)
    assert not torch.can_cast(torch.float16, torch.bool)


# -- sum -------------------------------------------------------------------------------------


@pytest.mark.parametrize("dim, keepdim", [
    (None, False), (0, False), (1, True), (-1, False), ((0, 2), False), ((0, 2), True),
    ([-1, 0], False), ((2, 1, 0), True), ((), False),
])
def test_sum_matches_numpy(dim, keepdim):
    a = np.random.default_rng(1).integers(-100, 100, size=(2, 3, 4)).astype(np.float64)
    t = torch.tensor(a.tolist(), dtype=torch.float64)
    axis = None if dim is None or dim == () else (dim if isinstance(dim, int) else tuple(dim))
    expected = a.sum(axis=axis, keepdims=keepdim)
    result = t.sum() if dim is None else t.sum(dim, keepdim=keepdim)
    assert result.shape == expected.shape
    assert result.dtype is torch.float64
    assert result.tolist() == expected.tolist()
    if dim is not None:
        assert torch.sum(t, dim=dim, keepdim=keepdim).tolist() == expected.tolist()


def test_sum_of_strided_input():
    a = np.arange(24, dtype=np.int64).reshape(4, 6)
    t = torch.tensor(a.tolist())
    assert t.t().sum(0).tolist() == a.T.sum(0).tolist()
    assert t[:, ::2].sum(1).tolist() == a[:, ::2].sum(1).tolist()
    assert t[1:3, 1::3].sum().item() == int(a[1:3, 1::3].sum())


@pytest.mark.parametrize("name", ["bool", "uint8", "int8", "int16", "int32", "int64"])
def test_integer_sum_is_int64(name):
    t = torch.tensor(SOURCE_VALUES[name] * 50, dtype=dt(name))
    s = t.sum()
    assert s.dtype is torch.int64
    assert s.item() == 50 * sum(int(v) for v in SOURCE_VALUES[name])
    assert t.view(50, 4).sum(0).dtype is torch.int64


def test_int8_sum_does_not_overflow():
    t = torch.tensor([100, 100, 100], dtype=torch.int8)
    assert t.sum().item() == 300


def test_sum_dtype_argument():
    t = torch.tensor([[1, 2], [3, 4]], dtype=torch.int32)
    s = t.sum(dtype=torch.float64)
    assert (s.dtype, s.item()) == (torch.float64, 10.0)
    s = t.sum(0, dtype=torch.int32)
    assert (s.dtype, s.tolist()) == (torch.int32, [4, 6])
    f = torch.tensor([1.5, 2.25]).sum(dtype=torch.float64)
    assert (f.dtype, f.item()) == (torch.float64, 3.75)


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_half_sum_accumulates_in_float32(name):
    ones = torch.ones(4096, dtype=dt(name))
    s = ones.sum()
    assert s.dtype is dt(name)
    assert s.item() == 4096.0  # a half-precision accumulator would stall at 2048 (256 for bf16)
    assert torch.ones(64, 64, dtype=dt(name)).sum(1).tolist() == [64.0] * 64


def test_float16_sum_rounding():
    x = np.full(1000, 0.1, np.float16)
    expected = float(x.astype(np.float32).sum(dtype=np.float32).astype(np.float16))
    assert torch.tensor(x).sum().item() == expected


def test_sum_edge_cases():
    assert torch.zeros(0).sum().item() == 0.0
    assert torch.zeros(0, 3).sum(0).tolist() == [0.0, 0.0, 0.0]
    assert torch.zeros(2, 0).sum(1).tolist() == [0.0, 0.0]
    s = torch.tensor(5.0).sum()
    assert (s.shape, s.item()) == ((), 5.0)
    assert torch.tensor(5).sum(0).item() == 5
    assert torch.tensor(5).sum(0, keepdim=True).shape == ()
    c = torch.tensor([1 + 1j, 2 - 3j]).sum()
    assert (c.dtype, c.item()) == (torch.complex64, 3 - 2j)


def test_sum_errors():
    t = torch.zeros(2, 3, 4)
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times in the list of dims"):
        t.sum((0, 0))
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times in the list of dims"):
        t.sum((0, -3))
    with pytest.raises(IndexError, match="Dimension out of range"):
        t.sum(3)
    with pytest.raises(TypeError):
        torch.sum([1, 2])


def test_sum_out():
    out = torch.empty((), dtype=torch.int64)
    torch.sum(torch.tensor([1, 2, 3]), out=out)
    assert out.item() == 6


# -- numpy(), tolist(), item() ---------------------------------------------------------------


@pytest.mark.parametrize("name", NO_BF16)
def test_numpy_shares_memory(name):
    t = torch.zeros(3, dtype=dt(name))
    n = t.numpy()
    assert n.dtype == np.dtype(name)
    assert n.shape == (3,)
    n[1] = 1
    assert t.tolist() == expected_cast([0, 1, 0], name)
    t.fill_(0)
    assert n.tolist() == expected_cast([0, 0, 0], name)
    assert np.shares_memory(n, t.numpy())


def test_numpy_of_views():
    t = torch.tensor([[1, 2, 3], [4, 5, 6]], dtype=torch.int32)
    n = t.t().numpy()
    assert n.shape == (3, 2)
    assert n.strides == (4, 12)
    assert n.tolist() == [[1, 4], [2, 5], [3, 6]]
    row = t[1].numpy()
    row[0] = 40
    assert t.tolist() == [[1, 2, 3], [40, 5, 6]]
    assert t[1, 2].numpy().shape == ()


def test_numpy_errors():
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad. "
                                           r"Use tensor.detach\(\).numpy\(\) instead."):
        torch.zeros(2, requires_grad=True).numpy()
    with pytest.raises(TypeError, match="Got unsupported ScalarType BFloat16"):
        torch.zeros(2, dtype=torch.bfloat16).numpy()
    with pytest.raises(TypeError, match=r"can't convert toy:0 device type tensor to numpy. Use "
                                        r"Tensor.cpu\(\) to copy the tensor to host memory first."):
        torch.zeros(2, device="toy").numpy()
    assert torch.zeros(2, requires_grad=True).detach().numpy().tolist() == [0.0, 0.0]


def test_numpy_force():
    assert torch.ones(2, requires_grad=True).numpy(force=True).tolist() == [1.0, 1.0]
    assert torch.full((2,), 3, device="toy").numpy(force=True).tolist() == [3, 3]


def test_tolist_types():
    assert torch.tensor(3).tolist() == 3
    assert type(torch.tensor(3).tolist()) is int
    assert type(torch.tensor(3.5).tolist()) is float
    assert type(torch.tensor(True).tolist()) is bool
    assert type(torch.tensor(1j).tolist()) is complex
    nested = torch.tensor([[1.5, 2.0], [3.0, 4.0]]).tolist()
    assert nested == [[1.5, 2.0], [3.0, 4.0]]
    assert all(type(v) is float for row in nested for v in row)
    assert torch.tensor([1, 2], dtype=torch.uint8).tolist() == [1, 2]
    assert torch.zeros(2, 0).tolist() == [[], []]


def test_item():
    assert torch.tensor([[7]]).item() == 7
    assert type(torch.tensor([[7]]).item()) is int
    assert torch.tensor(2.5).item() == 2.5
    assert type(torch.tensor(2.5, dtype=torch.float16).item()) is float
    assert torch.tensor(0.1, dtype=torch.float16).item() == float(np.float16(0.1))
    assert torch.tensor(0.1).item() == float(np.float32(0.1))
    assert torch.tensor(0.1, dtype=torch.float64).item() == 0.1
    assert torch.tensor(False).item() is False
    assert torch.tensor(1 + 2j).item() == 1 + 2j
    assert torch.tensor([[1, 2], [3, 4]])[1, 0].item() == 3
    with pytest.raises(RuntimeError, match="a Tensor with 2 elements cannot be converted to "
                                           "Scalar"):
        torch.tensor([1, 2]).item()
    with pytest.raises(RuntimeError, match="a Tensor with 0 elements cannot be converted to "
                                           "Scalar"):
        torch.tensor([]).item()


def test_python_number_conversions():
    assert int(torch.tensor(2.7)) == 2
    assert float(torch.tensor([3])) == 3.0
    assert bool(torch.tensor([0.0])) is False
    assert bool(torch.tensor(2)) is True
    assert [10, 20, 30][torch.tensor(1)] == 20
    with pytest.raises(RuntimeError, match="more than one value is ambiguous"):
        bool(torch.tensor([1, 2]))
    with pytest.raises(TypeError):
        [1, 2][torch.tensor(1.0)]


# -- printing --------------------------------------------------------------------------------


@pytest.mark.parametrize("make, expected", [
    (lambda: torch.tensor([1.0, 2.0, 3.0]), "tensor([1., 2., 3.])"),
    (lambda: torch.tensor([[1, 2], [3, 4]]), "tensor([[1, 2],\n        [3, 4]])"),
    (lambda: torch.tensor([0.1, 0.2]), "tensor([0.1000, 0.2000])"),
    (lambda: torch.tensor(3.0), "tensor(3.)"),
    (lambda: torch.tensor(7), "tensor(7)"),
    (lambda: torch.empty(0, 3), "tensor([], size=(0, 3))"),
    (lambda: torch.tensor([]), "tensor([])"),
    (lambda: torch.tensor([], dtype=torch.int64), "tensor([], dtype=torch.int64)"),
    (lambda: torch.tensor([1, 2], dtype=torch.int32), "tensor([1, 2], dtype=torch.int32)"),
    (lambda: torch.tensor([True, False]), "tensor([ True, False])"),
    (lambda: torch.tensor([1.0, 2.0], dtype=torch.float64),
     "tensor([1., 2.], dtype=torch.float64)"),
    (lambda: torch.tensor([1.5, -2.0]), "tensor([ 1.5000, -2.0000])"),
    (lambda: torch.tensor([-1, 10, 100]), "tensor([ -1,  10, 100])"),
    (lambda: torch.zeros(2, requires_grad=True), "tensor([0., 0.], requires_grad=True)"),
    (lambda: torch.tensor([1.0, 10000.0]), "tensor([1.0000e+00, 1.0000e+04])"),
    (lambda: torch.tensor([1e-5, 1.0]), "tensor([1.0000e-05, 1.0000e+00])"),
    (lambda: torch.tensor([1 + 2j]), "tensor([1.+2.j])"),
    (lambda: torch.tensor([float("nan"), 1.0]), "tensor([nan, 1.])"),
    (lambda: torch.tensor([1.0, float("-inf")]), "tensor([1., -inf])"),
    (lambda: torch.empty(2, 3, device="meta"), "tensor(..., device='meta', size=(2, 3))"),
    (lambda: torch.empty(2, device="meta", dtype=torch.int64),
     "tensor(..., device='meta', size=(2,), dtype=torch.int64)"),
    (lambda: torch.tensor([1.0, 2.0], device="toy"), "tensor([1., 2.], device='toy:0')"),
    (lambda: torch.empty(0, 3, device="toy"), "tensor([], device='toy:0', size=(0, 3))"),
    (lambda: torch.tensor([[[1, 2]], [[3, 4]]]),
     "tensor([[[1, 2]],\n\n        [[3, 4]]])"),
    (lambda: torch.tensor(list(range(2000))),
     "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])"),
])
def test_repr(make, expected):
    assert repr(make()) == expected


def test_repr_wraps_long_rows_and_suffixes():
    # 6 characters per element: (80 - 7) // (6 + 2) = 9 elements per line
    t = torch.full((12,), 0.5, dtype=torch.float64)
    first = ", ".join(["0.5000"] * 9)
    second = ", ".join(["0.5000"] * 3)
    assert repr(t) == f"tensor([{first},\n        {second}], dtype=torch.float64)"
    # a full first line leaves no room for the suffix, which moves to a line of its own
    t = torch.full((9,), 0.5, dtype=torch.float64)
    assert repr(t) == f"tensor([{first}],\n       dtype=torch.float64)"


def test_repr_follows_default_dtype(default_float64):
    assert repr(torch.tensor([1.0, 2.0])) == "tensor([1., 2.])"
    assert repr(torch.tensor([1.0], dtype=torch.float32)) == "tensor([1.], dtype=torch.float32)"
    assert repr(torch.tensor([1j])) == "tensor([0.+1.j])"


def test_repr_of_views_and_other_dtypes():
    t = torch.tensor([[1, 2, 3], [4, 5, 6]])
    assert repr(t.t()) == "tensor([[1, 4],\n        [2, 5],\n        [3, 6]])"
    assert repr(t[:, 1]) == "tensor([2, 5])"
    assert repr(torch.tensor([1.5], dtype=torch.bfloat16)) == (
        "tensor([1.5000], dtype=torch.bfloat16)")
    assert repr(torch.tensor([2.0], dtype=torch.float16)) == "tensor([2.], dtype=torch.float16)"


# -- the toy device --------------------------------------------------------------------------


def test_toy_ops_match_cpu(warn_always):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.array([10.0, 20.0, 30.0], np.float32)
    ta = torch.tensor(a.tolist(), device="toy")
    tb = torch.tensor(b.tolist(), device="toy")
    s = ta + tb  # native toy kernel: no fallback
    assert s.device == torch.device("toy:0")
    assert s.cpu().tolist() == (a + b).tolist()
    with pytest.warns(UserWarning, match=r"prims::mul.*falls back to the CPU"):
        m = ta * tb
    assert m.device == torch.device("toy:0")
    assert m.cpu().tolist() == (a * b).tolist()
    with pytest.warns(UserWarning, match="prims::sum"):
        r = ta.sum(0)
    assert r.device == torch.device("toy:0")
    assert r.cpu().tolist() == a.sum(0).tolist()
    assert (ta + 1).cpu().tolist() == (a + 1).tolist()
    assert (ta.t() + ta.t()).cpu().tolist() == (a.T + a.T).tolist()
    with pytest.warns(UserWarning, match="prims::mul"):  # alpha * other is a mul
        assert ta.add(tb, alpha=2).cpu().tolist() == (a + 2 * b).tolist()


def test_toy_add_does_not_warn():
    a = torch.ones(3, device="toy")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = a + a
        a.add_(a)
        a.fill_(2.0)
        a.copy_(torch.ones(3, device="toy"))
    assert out.cpu().tolist() == [2.0, 2.0, 2.0]


def test_toy_in_place_and_promotion(warn_always):
    t = torch.tensor([1, 2, 3], dtype=torch.int32, device="toy")
    assert t._version == 0
    t += torch.tensor([1, 1, 1], dtype=torch.int32, device="toy")
    assert (t.dtype, t.device, t.cpu().tolist()) == (torch.int32, torch.device("toy:0"),
                                                     [2, 3, 4])
    with pytest.warns(UserWarning):
        f = t * 2.5
    assert (f.dtype, f.cpu().tolist()) == (torch.float32, [5.0, 7.5, 10.0])
    with pytest.raises(RuntimeError, match="result type Float can't be cast"):
        t.add_(0.5)
    with pytest.warns(UserWarning):
        t.mul_(2)
    assert t.cpu().tolist() == [4, 6, 8]
    assert t._version == 2


def test_toy_mixes_with_cpu_scalars_only():
    t = torch.tensor([1.0, 2.0], device="toy")
    out = t + torch.tensor(3.0)  # a 0-d CPU tensor is a scalar
    assert (out.device, out.cpu().tolist()) == (torch.device("toy:0"), [4.0, 5.0])
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        t + torch.tensor([1.0, 2.0])


@pytest.mark.parametrize("name", NO_BF16)
def test_toy_round_trip(name):
    values = SOURCE_VALUES[name] + SOURCE_VALUES[name][::-1]
    c = torch.tensor(values, dtype=dt(name)).view(2, 4)
    toy = c.to("toy")
    assert (toy.device, toy.dtype, toy.shape) == (torch.device("toy:0"), dt(name), (2, 4))
    back = toy.to("cpu")
    assert (back.device, back.dtype) == (torch.device("cpu"), dt(name))
    assert back.tolist() == c.tolist()
    assert back.untyped_storage() is not c.untyped_storage()
    assert toy.tolist() == c.tolist()
    assert toy[1, 2].item() == c[1, 2].item()
    # strided device tensors come back with the right values
    assert toy.t().cpu().tolist() == c.t().tolist()
    assert toy[:, 1::2].cpu().tolist() == c[:, 1::2].tolist()
    assert toy[1].cpu().tolist() == c[1].tolist()
    assert toy[:1].expand(3, 4).cpu().tolist() == c[:1].expand(3, 4).tolist()
    assert toy.t().contiguous().cpu().tolist() == c.t().tolist()
    # toy -> cpu -> toy
    again = toy.cpu().to("toy")
    assert (again.device, again.dtype) == (torch.device("toy:0"), dt(name))
    assert again.cpu().tolist() == c.tolist()
    # and a cpu -> toy copy into a strided device view
    dst = torch.zeros(4, 2, dtype=dt(name), device="toy")
    dst.t().copy_(c)
    assert dst.cpu().tolist() == c.t().tolist()


@pytest.mark.parametrize("name", NO_BF16)
def test_toy_arithmetic_matches_cpu(name):
    values = SOURCE_VALUES[name] * 2
    a = torch.tensor(values, dtype=dt(name)).view(2, 4)
    b = torch.tensor(values[::-1], dtype=dt(name)).view(2, 4)
    ta, tb = a.to("toy"), b.to("toy")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the CPU fallback of mul and sum
        pairs = [(ta + tb, a + b), (ta * tb, a * b), (ta.sum(), a.sum()),
                 (ta.sum(1, keepdim=True), a.sum(1, keepdim=True)), (ta[0] + tb.t()[1:3, :1],
                                                                     a[0] + b.t()[1:3, :1])]
    for on_toy, on_cpu in pairs:
        assert on_toy.device == torch.device("toy:0")
        assert on_toy.dtype is on_cpu.dtype
        assert on_toy.shape == on_cpu.shape
        assert on_toy.cpu().tolist() == on_cpu.tolist()


@pytest.mark.parametrize("src, dst", [("float32", "int32"), ("int64", "float64"),
                                      ("float64", "bool"), ("int32", "int8")])
def test_toy_casts(src, dst):
    values = SOURCE_VALUES[src]
    toy = torch.tensor(values, dtype=dt(src), device="toy")
    assert toy.to(dt(dst)).cpu().tolist() == expected_cast(values, dst)
    assert torch.tensor(values, dtype=dt(src)).to("toy", dt(dst)).cpu().tolist() == (
        expected_cast(values, dst))
    assert toy.to("cpu", dt(dst)).tolist() == expected_cast(values, dst)


def test_toy_to_other_toy_device():
    t = torch.tensor([[1.0, 2.0], [3.0, 4.0]], device="toy")
    other = t.t().to("toy:1")
    assert other.device == torch.device("toy:1")
    assert other.cpu().tolist() == [[1.0, 3.0], [2.0, 4.0]]


def test_toy_tensor_repr_and_numpy_force():
    t = torch.tensor([[1, 2], [3, 4]], device="toy")
    assert repr(t) == "tensor([[1, 2],\n        [3, 4]], device='toy:0')"
    assert t.numpy(force=True).tolist() == [[1, 2], [3, 4]]
