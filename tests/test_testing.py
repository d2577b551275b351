"""torch.testing: assert_close's verdicts and messages, make_tensor's ranges and layouts.

Every expected message below was produced by real PyTorch 2.13 on the same inputs and written
down here.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest

import torch
from torch.testing import assert_close, make_tensor

T = torch.tensor
F16, BF16, F64 = torch.float16, torch.bfloat16, torch.float64


def _close(*args: Any, **kwargs: Any) -> tuple[str, str]:
    """(exception type name, message) of assert_close, or ("OK", "")."""
    try:
        assert_close(*args, **kwargs)
    except Exception as exc:
        return type(exc).__name__, str(exc)
    return "OK", ""


NOT_CLOSE = "Tensor-likes are not close!\n\nMismatched elements: "
NOT_EQUAL = "Tensor-likes are not equal!\n\nMismatched elements: "

# (case, exception, message) with PyTorch 2.13's message for each
CASES: list[tuple[str, Any, str, str]] = [
    ("float32 one of three", lambda: _close(T([1., 2., 3.]), T([1., 2.5, 3.])), "AssertionError",
     NOT_CLOSE + "1 / 3 (33.3%)\nGreatest absolute difference: 0.5 at index (1,) (up to 1e-05 "
     "allowed)\nGreatest relative difference: 0.20000000298023224 at index (1,) (up to 1.3e-06 "
     "allowed)"),
    ("2-d index", lambda: _close(T([[1., 2.], [3., 4.]]), T([[1., 2.], [3., 5.]])),
     "AssertionError",
     NOT_CLOSE + "1 / 4 (25.0%)\nGreatest absolute difference: 1.0 at index (1, 1) (up to "
     "1e-05 allowed)\nGreatest relative difference: 0.20000000298023224 at index (1, 1) (up to "
     "1.3e-06 allowed)"),
    ("int64 exact", lambda: _close(T([1, 2, 3]), T([1, 2, 4])), "AssertionError",
     NOT_EQUAL + "1 / 3 (33.3%)\nGreatest absolute difference: 1 at index (2,)\nGreatest "
     "relative difference: 0.25 at index (2,)"),
    ("dtype", lambda: _close(T([1, 2, 3]), T([1., 2, 3])), "AssertionError",
     "The values for attribute 'dtype' do not match: torch.int64 != torch.float32."),
    ("shape", lambda: _close(T([1, 2, 3]), T([1, 2])), "AssertionError",
     "The values for attribute 'shape' do not match: torch.Size([3]) != torch.Size([2])."),
    ("0-d is a scalar", lambda: _close(T(1.), T(2.)), "AssertionError",
     "Scalars are not close!\n\nExpected 2.0 but got 1.0.\nAbsolute difference: 1.0 (up to "
     "1e-05 allowed)\nRelative difference: 0.5 (up to 1.3e-06 allowed)"),
    ("python floats", lambda: _close(1.0, 1.5), "AssertionError",
     "Scalars are not close!\n\nExpected 1.5 but got 1.0.\nAbsolute difference: 0.5 (up to "
     "1e-07 allowed)\nRelative difference: 0.3333333333333333 (up to 1e-07 allowed)"),
    ("python ints", lambda: _close(1, 2), "AssertionError",
     "Scalars are not equal!\n\nExpected 2 but got 1.\nAbsolute difference: 1\nRelative "
     "difference: 0.5"),
    ("mapping item", lambda: _close({"a": T(1.)}, {"a": T(2.)}), "AssertionError",
     "Scalars are not close!\n\nExpected 2.0 but got 1.0.\nAbsolute difference: 1.0 (up to "
     "1e-05 allowed)\nRelative difference: 0.5 (up to 1.3e-06 allowed)\n\nThe failure occurred "
     "for item ['a']"),
    ("nested item", lambda: _close([T([1.]), [T([2.]), {"x": 3.0}]],
                                   [T([1.]), [T([2.]), {"x": 3.5}]]), "AssertionError",
     "Scalars are not close!\n\nExpected 3.5 but got 3.0.\nAbsolute difference: 0.5 (up to "
     "1e-07 allowed)\nRelative difference: 0.14285714285714285 (up to 1e-07 allowed)\n\nThe "
     "failure occurred for item [1][1]['x']"),
    ("sequence length", lambda: _close([1, 2], [1, 2, 3]), "AssertionError",
     "The length of the sequences mismatch: 2 != 3"),
    ("numpy arrays", lambda: _close(np.array([1., 2.]), np.array([1., 3.])), "AssertionError",
     NOT_CLOSE + "1 / 2 (50.0%)\nGreatest absolute difference: 1.0 at index (1,) (up to 1e-07 "
     "allowed)\nGreatest relative difference: 0.3333333333333333 at index (1,) (up to 1e-07 "
     "allowed)"),
    ("nan", lambda: _close(T([math.nan]), T([math.nan])), "AssertionError",
     NOT_CLOSE + "1 / 1 (100.0%)\nGreatest absolute difference: nan at index (0,) (up to 1e-05 "
     "allowed)\nGreatest relative difference: nan at index (0,) (up to 1.3e-06 allowed)"),
    ("nan equal", lambda: _close(T([math.nan]), T([math.nan]), equal_nan=True), "OK", ""),
    ("rtol alone", lambda: _close(T([1.]), T([1.]), rtol=0), "ValueError",
     "Both 'rtol' and 'atol' must be either specified or omitted, but got no atol."),
    ("tensor and array", lambda: _close(T([1.]), np.array([1.])), "TypeError",
     "No comparison pair was able to handle inputs of type <class 'torch.Tensor'> and <class "
     "'numpy.ndarray'>."),
    ("msg", lambda: _close(T([1.]), T([2.]), msg="custom"), "AssertionError", "custom"),
    ("msg callable", lambda: _close(T([1., 2.]), T([1., 3.]), msg=lambda m: "X" + m[:10]),
     "AssertionError", "XTensor-lik"),
    ("bool tensors", lambda: _close(T([True, False]), T([True, True])), "AssertionError",
     NOT_EQUAL + "1 / 2 (50.0%)\nGreatest absolute difference: 1 at index (1,)\nGreatest "
     "relative difference: 1.0 at index (1,)"),
    ("int and float", lambda: _close(1, 1.0), "AssertionError",
     "The (d)types do not match: <class 'int'> != <class 'float'>."),
    ("str", lambda: _close("a", "a"), "TypeError",
     "No comparison pair was able to handle inputs of type <class 'str'> and <class 'str'>."),
    ("None", lambda: _close(None, None), "OK", ""),
    ("within atol", lambda: _close(T([0., 1e-6]), T([0., 0.])), "OK", ""),
    ("greatest differences at different indices",
     lambda: _close(T([1., 2, 3, 4]), T([1.1, 2, 3.3, 4])), "AssertionError",
     NOT_CLOSE + "2 / 4 (50.0%)\nGreatest absolute difference: 0.2999999523162842 at index (2,) "
     "(up to 1e-05 allowed)\nGreatest relative difference: 0.09090910851955414 at index (0,) "
     "(up to 1.3e-06 allowed)"),
    ("float16", lambda: _close(T([1., 2., 3.], dtype=F16), T([1., 2.1, 3.], dtype=F16)),
     "AssertionError",
     NOT_CLOSE + "1 / 3 (33.3%)\nGreatest absolute difference: 0.099609375 at index (1,) (up to "
     "1e-05 allowed)\nGreatest relative difference: 0.047454833984375 at index (1,) (up to "
     "0.001 allowed)"),
    ("bfloat16", lambda: _close(T([1., 2., 3.], dtype=BF16), T([1., 2.1, 3.], dtype=BF16)),
     "AssertionError",
     NOT_CLOSE + "1 / 3 (33.3%)\nGreatest absolute difference: 0.09375 at index (1,) (up to "
     "1e-05 allowed)\nGreatest relative difference: 0.044677734375 at index (1,) (up to 0.016 "
     "allowed)"),
    ("float64", lambda: _close(T([1., 2., 3.], dtype=F64), T([1., 2.1, 3.], dtype=F64)),
     "AssertionError",
     NOT_CLOSE + "1 / 3 (33.3%)\nGreatest absolute difference: 0.10000000000000009 at index "
     "(1,) (up to 1e-07 allowed)\nGreatest relative difference: 0.04761904761904766 at index "
     "(1,) (up to 1e-07 allowed)"),
    ("uint8 differences do not wrap",
     lambda: _close(T([255, 200], dtype=torch.uint8), T([5, 100], dtype=torch.uint8)),
     "AssertionError",
     NOT_EQUAL + "2 / 2 (100.0%)\nGreatest absolute difference: 250 at index (0,)\nGreatest "
     "relative difference: 50.0 at index (0,)"),
    ("promoted when dtypes may differ",
     lambda: _close(T([1, 2], dtype=torch.int8), T([1, 2], dtype=torch.int16),
                    check_dtype=False), "OK", ""),
    ("looser tolerance of two dtypes",
     lambda: _close(T([1., 2.], dtype=F16), T([1., 2.001], dtype=F64), check_dtype=False),
     "OK", ""),
    ("infinities", lambda: _close(T([math.inf]), T([-math.inf])), "AssertionError",
     NOT_CLOSE + "1 / 1 (100.0%)\nGreatest absolute difference: inf at index (0,) (up to 1e-05 "
     "allowed)\nGreatest relative difference: nan at index (0,) (up to 1.3e-06 allowed)"),
    ("equal infinities", lambda: _close(T([math.inf]), T([math.inf])), "OK", ""),
    ("explicit tolerances", lambda: _close(T([1.]), T([2.]), atol=0.5, rtol=0),
     "AssertionError",
     NOT_CLOSE + "1 / 1 (100.0%)\nGreatest absolute difference: 1.0 at index (0,) (up to 0.5 "
     "allowed)\nGreatest relative difference: 0.5 at index (0,) (up to 0 allowed)"),
    ("tuple item", lambda: _close((1, 2), (1, 3)), "AssertionError",
     "Scalars are not equal!\n\nExpected 3 but got 2.\nAbsolute difference: 1\nRelative "
     "difference: 0.3333333333333333\n\nThe failure occurred for item [1]"),
    ("device", lambda: _close(T([1.]), T([1.], device="meta")), "AssertionError",
     "The values for attribute 'device' do not match: cpu != meta."),
    ("meta values are not compared",
     lambda: _close(T([1.], device="meta"), T([2.], device="meta")), "OK", ""),
    ("booleans", lambda: _close(True, False), "AssertionError",
     "Booleans mismatch: True is not False"),
    ("complex scalars", lambda: _close(1 + 1j, 1 + 2j), "AssertionError",
     "Scalars are not close!\n\nExpected (1+2j) but got (1+1j).\nAbsolute difference: 1.0 (up "
     "to 1e-07 allowed)\nRelative difference: 0.4472135954999579 (up to 1e-07 allowed)"),
    ("empty", lambda: _close(torch.zeros(0), torch.zeros(0)), "OK", ""),
    ("relative to zero", lambda: _close(T([1., 2.]), T([0., 2.])), "AssertionError",
     NOT_CLOSE + "1 / 2 (50.0%)\nGreatest absolute difference: 1.0 at index (0,) (up to 1e-05 "
     "allowed)\nGreatest relative difference: inf at index (0,) (up to 1.3e-06 allowed)"),
    ("nan is the greatest", lambda: _close(T([1., 2., math.nan]), T([0., 2., 1.])),
     "AssertionError",
     NOT_CLOSE + "2 / 3 (66.7%)\nGreatest absolute difference: nan at index (2,) (up to 1e-05 "
     "allowed)\nGreatest relative difference: nan at index (2,) (up to 1.3e-06 allowed)"),
    ("mapping keys", lambda: _close({"a": 1}, {"b": 1}), "AssertionError",
     "The keys of the mappings do not match:\nMissing keys in the actual mapping: ['b']\n"
     "Additional keys in the actual mapping: ['a']"),
    ("list and tuple", lambda: _close([1], (1,)), "OK", ""),
    ("only mismatches count", lambda: _close(T([100., 0.]), T([100.5, 0.1]), rtol=0.01, atol=0),
     "AssertionError",
     NOT_CLOSE + "1 / 2 (50.0%)\nGreatest absolute difference: 0.10000000149011612 at index "
     "(1,) (up to 0 allowed)\nGreatest relative difference: 1.0 at index (1,) (up to 0.01 "
     "allowed)"),
    ("0-d int8", lambda: _close(T(1, dtype=torch.int8), T(3, dtype=torch.int8)),
     "AssertionError",
     "Scalars are not equal!\n\nExpected 3 but got 1.\nAbsolute difference: 2\nRelative "
     "difference: 0.6666666666666666"),
    ("0-d bool", lambda: _close(T(True), T(False)), "AssertionError",
     "Scalars are not equal!\n\nExpected False but got True.\nAbsolute difference: 1\nRelative "
     "difference: inf"),
    ("nan scalars", lambda: _close(math.nan, math.nan, equal_nan=True), "OK", ""),
    ("percent", lambda: _close(T([0.] * 12), T([0.] * 11 + [1.])), "AssertionError",
     NOT_CLOSE + "1 / 12 (8.3%)\nGreatest absolute difference: 1.0 at index (11,) (up to 1e-05 "
     "allowed)\nGreatest relative difference: 1.0 at index (11,) (up to 1.3e-06 allowed)"),
    ("int rel diff in float32",
     lambda: _close(T([1, 2], dtype=torch.int32), T([1, 3]), check_dtype=False),
     "AssertionError",
     NOT_EQUAL + "1 / 2 (50.0%)\nGreatest absolute difference: 1 at index (1,)\nGreatest "
     "relative difference: 0.3333333432674408 at index (1,)"),
    ("ints with atol", lambda: _close(T([1, 2]), T([1, 4]), atol=1, rtol=0), "AssertionError",
     NOT_CLOSE + "1 / 2 (50.0%)\nGreatest absolute difference: 2 at index (1,) (up to 1 "
     "allowed)\nGreatest relative difference: 0.5 at index (1,) (up to 0 allowed)"),
    ("strides", lambda: _close(T([1., 2, 3, 4, 5, 6]).reshape(2, 3),
                               T([1., 2, 3, 4, 5, 6]).reshape(3, 2).t(), check_stride=True),
     "AssertionError", "The values for attribute 'stride()' do not match: (3, 1) != (1, 2)."),
    ("strides before dtype",
     lambda: _close(torch.ones(2, 2), torch.ones(2, 2, dtype=F64).t(), check_stride=True),
     "AssertionError", "The values for attribute 'stride()' do not match: (2, 1) != (1, 2)."),
    ("zero tolerances say equal", lambda: _close(1.0, 2.0, rtol=0, atol=0), "AssertionError",
     "Scalars are not equal!\n\nExpected 2.0 but got 1.0.\nAbsolute difference: 1.0\nRelative "
     "difference: 0.5"),
    ("numpy scalars", lambda: _close(np.float32(1.0), np.float32(1.00001)), "AssertionError",
     "Scalars are not close!\n\nExpected 1.0000100135803223 but got 1.0.\nAbsolute difference: "
     "1.0013580322265625e-05 (up to 1e-07 allowed)\nRelative difference: "
     "1.0013480051478824e-05 (up to 1e-07 allowed)"),
    ("numpy int and int", lambda: _close(np.int64(1), 1), "OK", ""),
    ("tensor and float", lambda: _close(T(1.), 1.0), "TypeError",
     "No comparison pair was able to handle inputs of type <class 'torch.Tensor'> and <class "
     "'float'>."),
    ("transposed values", lambda: _close(T([[1., 2], [3, 4]]).t(), T([[1., 3], [2, 4]])),
     "OK", ""),
]


@pytest.mark.parametrize(("call", "kind", "message"), [pytest.param(c, k, m, id=i)
                                                       for i, c, k, m in CASES])
def test_assert_close_matches_pytorch(call: Any, kind: str, message: str) -> None:
    assert call() == (kind, message)


def test_assert_close_toy_device_and_check_device() -> None:
    try:
        on_toy = torch.ones(3, device="toy")
    except (RuntimeError, ValueError):
        pytest.skip("the toy device plugin is not installed")
    with pytest.raises(AssertionError, match="attribute 'device'"):
        assert_close(on_toy, torch.ones(3))
    assert_close(on_toy, torch.ones(3), check_device=False)
    with pytest.raises(AssertionError, match="Mismatched elements: 3 / 3"):
        assert_close(on_toy, torch.zeros(3), check_device=False)


def test_assert_close_subclasses() -> None:
    class Sub(torch.Tensor):
        pass

    sub = Sub([1.0])
    assert type(sub) is Sub
    assert_close(sub, T([1.]))
    with pytest.raises(TypeError, match="No comparison pair"):
        assert_close(sub, T([1.]), allow_subclasses=False)


def test_default_tolerances_table() -> None:
    from torch.testing._comparison import default_tolerances

    assert default_tolerances(F16) == (1e-3, 1e-5)
    assert default_tolerances(BF16) == (1.6e-2, 1e-5)
    assert default_tolerances(torch.float32) == (1.3e-6, 1e-5)
    assert default_tolerances(F64) == (1e-7, 1e-7)
    assert default_tolerances(torch.complex64) == (1.3e-6, 1e-5)
    assert default_tolerances(torch.int32) == (0, 0)
    assert default_tolerances(F16, F64) == (1e-3, 1e-5)


def test_tolerance_boundary_float32() -> None:
    # |a - e| <= atol + rtol * |e|: 1e-5 + 1.3e-6 * 100 = 1.4e-4
    assert_close(T([100.0]), T([100.0001]))
    with pytest.raises(AssertionError):
        assert_close(T([100.0]), T([100.001]))


# -- make_tensor -------------------------------------------------------------------------------

RANGES = [
    (torch.bool, 0, 1), (torch.uint8, 0, 9), (torch.int8, -9, 9), (torch.int16, -9, 9),
    (torch.int32, -9, 9), (torch.int64, -9, 9), (torch.float16, -9, 9), (BF16, -9, 9),
    (torch.float32, -9, 9), (F64, -9, 9),
]


@pytest.mark.parametrize(("dtype", "lo", "hi"), RANGES, ids=[str(r[0]) for r in RANGES])
def test_make_tensor_default_ranges(dtype: torch.dtype, lo: int, hi: int) -> None:
    x = make_tensor(2000, dtype=dtype, device="cpu")
    assert x.dtype is dtype and tuple(x.shape) == (2000,) and x.device.type == "cpu"
    values = np.array(x.tolist(), dtype=np.float64)
    assert values.min() >= lo and values.max() <= hi
    if dtype.is_floating_point:
        # float16/bfloat16 may round a value just below 9 up to it, as in PyTorch
        assert values.max() < 9 or dtype in (F16, BF16)
        assert values.min() < -8 and values.max() > 8
        assert len(np.unique(values)) > 100
    else:
        assert values.min() == lo and values.max() == hi  # 2000 draws hit both ends


def test_make_tensor_limits() -> None:
    x = make_tensor(500, dtype=torch.int32, device="cpu", low=2.5, high=5.5)
    assert set(x.tolist()) == {3, 4, 5}  # fractional limits round up, high exclusive
    y = make_tensor(500, dtype=torch.float16, device="cpu", low=-1e6, high=1e6)
    values = np.array(y.tolist())
    assert np.isfinite(values).all() and np.abs(values).max() <= 65504
    u = make_tensor(500, dtype=torch.uint8, device="cpu", low=-5, high=300)
    assert min(u.tolist()) >= 0 and max(u.tolist()) <= 255
    f = make_tensor(100, dtype=torch.float32, device="cpu", low=0.25, high=0.5)
    assert all(0.25 <= v < 0.5 for v in f.tolist())


def test_make_tensor_shapes() -> None:
    assert tuple(make_tensor(2, 3, dtype=torch.float32, device="cpu").shape) == (2, 3)
    assert tuple(make_tensor((2, 3), dtype=torch.float32, device="cpu").shape) == (2, 3)
    assert tuple(make_tensor([4], dtype=torch.float32, device="cpu").shape) == (4,)
    assert tuple(make_tensor(dtype=torch.float32, device="cpu").shape) == ()
    assert tuple(make_tensor(0, 3, dtype=torch.int64, device="cpu").shape) == (0, 3)


def test_make_tensor_layouts() -> None:
    x = make_tensor(4, 4, dtype=torch.float32, device="cpu", noncontiguous=True)
    assert not x.is_contiguous() and x.stride() == (8, 2)
    assert make_tensor(4, dtype=torch.float32, device="cpu", noncontiguous=True).stride() == (2,)
    assert make_tensor(1, dtype=torch.float32, device="cpu", noncontiguous=True).stride() == (1,)
    c = make_tensor(2, 3, 4, 5, dtype=torch.float32, device="cpu",
                    memory_format=torch.channels_last)
    assert tuple(c.shape) == (2, 3, 4, 5) and c.stride() == (60, 1, 15, 3)


def test_make_tensor_exclude_zero_and_grad() -> None:
    i = make_tensor(50, dtype=torch.int64, device="cpu", low=0, high=1, exclude_zero=True)
    assert set(i.tolist()) == {1}
    h = make_tensor(8, dtype=torch.float16, device="cpu", low=0, high=1e-30, exclude_zero=True)
    assert set(h.tolist()) == {2.0 ** -14}  # everything rounds to 0 in float16: finfo.tiny
    b = make_tensor(50, dtype=torch.bool, device="cpu", exclude_zero=True)
    assert all(b.tolist())
    g = make_tensor(3, dtype=torch.float32, device="cpu", requires_grad=True)
    assert g.requires_grad and g.is_leaf


def test_make_tensor_is_reproducible_under_a_seed() -> None:
    torch.manual_seed(7)
    a = make_tensor(6, dtype=torch.float32, device="cpu")
    b = make_tensor(6, dtype=torch.float32, device="cpu")
    torch.manual_seed(7)
    assert make_tensor(6, dtype=torch.float32, device="cpu").tolist() == a.tolist()
    assert a.tolist() != b.tolist()


def test_make_tensor_on_a_plugin_device() -> None:
    try:
        x = make_tensor(3, dtype=torch.float32, device="toy")
    except (RuntimeError, ValueError):
        pytest.skip("the toy device plugin is not installed")
    assert x.device.type == "toy"


ERRORS = [
    ({"dtype": torch.int64, "low": 1, "high": 1}, ValueError,
     "`low` must be less than `high`, but got 1 >= 1"),
    ({"dtype": torch.int64, "low": 3, "high": 1}, ValueError,
     "`low` must be less than `high`, but got 3 >= 1"),
    ({"dtype": torch.float32, "low": math.nan}, ValueError,
     "`low` and `high` cannot be NaN, but got low=nan and high=9"),
    ({"dtype": torch.int64, "requires_grad": True}, ValueError,
     "`requires_grad=True` is not supported for boolean and integral dtypes, but got "
     "dtype=torch.int64"),
    ({"dtype": torch.float32, "noncontiguous": True, "memory_format": torch.channels_last},
     ValueError, "The parameters `noncontiguous` and `memory_format` are mutually exclusive, "
     "but got noncontiguous=True and memory_format=torch.channels_last"),
    ({"dtype": torch.bool, "low": 5, "high": 3}, ValueError,
     "`low` must be less than `high`, but got 5 >= 3"),
]


@pytest.mark.parametrize(("kwargs", "kind", "message"), ERRORS)
def test_make_tensor_errors(kwargs: dict[str, Any], kind: type, message: str) -> None:
    with pytest.raises(kind) as info:
        make_tensor(2, 3, device="cpu", **kwargs)
    assert str(info.value) == message


def test_make_tensor_low_equals_high_for_floats_is_deprecated() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        x = make_tensor(2, 3, dtype=torch.float32, device="cpu", low=1, high=1)
    assert x.tolist() == [[1.0] * 3] * 2
    assert any(issubclass(w.category, FutureWarning) for w in caught)
