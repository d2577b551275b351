"""Creation: ranges, eye, triangles, complex, factories' overloads, and the bridges to numpy
and DLPack (memory is shared, not copied). Expected values come from numpy or from PyTorch
2.13, written down."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import torch


def values(t: torch.Tensor) -> list:
    return t.tolist()


# -- arange and range ------------------------------------------------------------------------

ARANGE = [  # (args, kwargs, PyTorch 2.13's values, dtype)
    ((5,), {}, [0, 1, 2, 3, 4], torch.int64),
    ((0, 5.5, 1.5), {}, [0.0, 1.5, 3.0, 4.5], torch.float32),
    ((0, 5.5, 1.5), {"dtype": torch.int64}, [0, 1, 2, 3, 4], torch.int64),
    ((10, 0, -3), {}, [10, 7, 4, 1], torch.int64),
    ((1, 2.5, 0.5), {}, [1.0, 1.5, 2.0], torch.float32),
    ((-1.5, 2), {"dtype": torch.int32}, [-1, 0, 1, 2], torch.int32),
    ((0, 10, 2.5), {"dtype": torch.uint8}, [0, 2, 4, 6], torch.uint8),
    ((True,), {}, [0], torch.int64),
    ((3, 3), {}, [], torch.int64),
]


@pytest.mark.parametrize("args, kwargs, expected, dtype", ARANGE)
def test_arange(args, kwargs, expected, dtype):
    t = torch.arange(*args, **kwargs)
    assert t.dtype == dtype
    assert values(t) == expected


def test_arange_lengths_and_inputs():
    assert torch.arange(0.0, 1.0, 0.1).shape == (10,)
    assert torch.arange(0, 1, 0.3).shape == (4,)  # ceil(1 / 0.3)
    assert values(torch.arange(torch.tensor(3))) == [0, 1, 2]
    assert values(torch.arange(np.int64(3))) == [0, 1, 2]
    assert torch.arange(np.float32(2.5)).dtype == torch.float32
    t = torch.arange(4, dtype=torch.float64)
    assert np.array_equal(t.numpy(), np.arange(4, dtype=np.float64))
    assert torch.arange(3, requires_grad=True, dtype=torch.float32).requires_grad
    out = torch.empty(0)
    assert torch.arange(5, out=out) is out and values(out) == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert torch.arange(5.0, out=torch.empty(0, dtype=torch.int64)).dtype == torch.int64


def test_arange_errors():
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        torch.arange(0, 1, 0)
    with pytest.raises(RuntimeError, match="inconsistent with step sign"):
        torch.arange(0, 5, -1)
    with pytest.raises(RuntimeError, match="inconsistent with step sign"):
        torch.arange(5, 0)
    with pytest.raises(RuntimeError, match="unsupported range"):
        torch.arange(float("inf"))
    with pytest.raises(NotImplementedError):
        torch.arange(5, dtype=torch.bool)
    with pytest.raises(ValueError, match="step must be nonzero"):
        torch.arange(0, 1, 0.5, dtype=torch.int64)


def test_range_is_inclusive_and_deprecated():
    with pytest.warns(UserWarning, match="torch.range is deprecated"):
        t = torch.range(0, 3)
    assert t.dtype == torch.float32 and values(t) == [0.0, 1.0, 2.0, 3.0]
    with pytest.warns(UserWarning):
        assert torch.range(0, 3, 0.5).shape == (7,)
        assert values(torch.range(0, 3, dtype=torch.int64)) == [0, 1, 2, 3]
    with pytest.raises(TypeError):
        torch.range(3)


# -- linspace, logspace ----------------------------------------------------------------------


@pytest.mark.parametrize("start, end, steps", [(0, 1, 5), (3, 1, 4), (-2.5, 7.25, 9),
                                               (0, 1, 1), (0, 1, 0), (1e3, -1e3, 101)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_linspace_matches_numpy(start, end, steps, dtype):
    t = torch.linspace(start, end, steps, dtype=dtype)
    np_dtype = np.float32 if dtype == torch.float32 else np.float64
    expected = np.linspace(start, end, steps, dtype=np.float64).astype(np_dtype)
    assert t.dtype == dtype and t.shape == (steps,)
    assert np.allclose(t.numpy(), expected, rtol=1e-6, atol=1e-4)
    if steps > 1:  # both ends are exact
        assert t[0].item() == np_dtype(start) and t[-1].item() == np_dtype(end)


def test_linspace_integer_and_complex_and_errors():
    # PyTorch 2.13's values: truncation of start + i * step and end - (n-1-i) * step
    assert values(torch.linspace(0, 10, 4, dtype=torch.int64)) == [0, 3, 6, 10]
    assert values(torch.linspace(-2, 7, 6, dtype=torch.int32)) == [-2, 0, 1, 3, 5, 7]
    assert values(torch.linspace(0, 1, 5, dtype=torch.int64)) == [0, 0, 0, 0, 1]
    c = torch.linspace(0j, 1 + 1j, 3)
    assert c.dtype == torch.complex64 and values(c) == [0j, 0.5 + 0.5j, 1 + 1j]
    assert values(torch.linspace(torch.tensor(0.0), torch.tensor(1.0), 3)) == [0.0, 0.5, 1.0]
    assert torch.linspace(1, 2, 3, dtype=torch.float16).dtype == torch.float16
    with pytest.raises(RuntimeError, match="non-negative"):
        torch.linspace(0, 1, -1)


def test_logspace():
    assert values(torch.logspace(0, 2, 3)) == [1.0, 10.0, 100.0]
    assert values(torch.logspace(0, 2, 3, base=2)) == [1.0, 2.0, 4.0]
    assert values(torch.logspace(0, 3, 4, dtype=torch.int64)) == [1, 10, 100, 1000]
    t = torch.logspace(-1, 1, 7, dtype=torch.float64)
    assert np.allclose(t.numpy(), np.logspace(-1, 1, 7))
    assert torch.logspace(0, 1, 0).shape == (0,)


# -- eye, scalar_tensor, factories' overloads ------------------------------------------------


def test_eye():
    assert np.array_equal(torch.eye(3).numpy(), np.eye(3, dtype=np.float32))
    assert values(torch.eye(2, 3, dtype=torch.int64)) == [[1, 0, 0], [0, 1, 0]]
    assert values(torch.eye(3, 2, dtype=torch.bool)) == [[True, False], [False, True],
                                                          [False, False]]
    assert torch.eye(0).shape == (0, 0)
    out = torch.empty(0)
    assert torch.eye(2, out=out) is out and values(out) == [[1.0, 0.0], [0.0, 1.0]]
    with pytest.raises(RuntimeError, match="n must be greater or equal to 0"):
        torch.eye(-1)
    with pytest.raises(RuntimeError, match="m must be greater or equal to 0"):
        torch.eye(2, -1)


def test_scalar_tensor():
    t = torch.scalar_tensor(3)
    assert t.shape == () and t.dtype == torch.float32 and t.item() == 3.0
    assert torch.scalar_tensor(True).item() == 1.0
    assert torch.scalar_tensor(3, dtype=torch.int8).dtype == torch.int8
    with pytest.raises(RuntimeError):
        torch.scalar_tensor(1j)


def test_factory_overloads():
    assert torch.zeros(size=(2, 3)).shape == (2, 3)
    assert torch.ones(size=[2]).tolist() == [1.0, 1.0]
    assert torch.empty(size=(2,)).shape == (2,)
    assert torch.zeros(2, 3).shape == torch.zeros((2, 3)).shape == torch.zeros([2, 3]).shape
    assert torch.zeros(torch.Size([4])).shape == (4,)
    assert torch.zeros([]).shape == () and torch.ones(()).item() == 1.0
    assert torch.full(size=(2,), fill_value=1).dtype == torch.int64
    assert torch.full((2,), True).dtype == torch.bool
    assert torch.full((), 1.5).dtype == torch.float32
    with pytest.raises(TypeError):
        torch.zeros(2, size=(2,))


# -- tril / triu -----------------------------------------------------------------------------


@pytest.mark.parametrize("diagonal", [-4, -1, 0, 1, 2, 5])
@pytest.mark.parametrize("shape", [(3, 4), (4, 3), (2, 3, 3), (0, 3), (1, 1)])
def test_tril_triu_match_numpy(shape, diagonal):
    a = np.arange(1, 1 + int(np.prod(shape)), dtype=np.float64).reshape(shape)
    t = torch.tensor(a)
    assert np.array_equal(torch.tril(t, diagonal).numpy(), np.tril(a, diagonal))
    assert np.array_equal(torch.triu(t, diagonal).numpy(), np.triu(a, diagonal))
    assert np.array_equal(t.tril(diagonal).numpy(), np.tril(a, diagonal))
    assert np.array_equal(t.triu(diagonal=diagonal).numpy(), np.triu(a, diagonal))


def test_tril_triu_layouts_dtypes_and_in_place():
    a = np.arange(24, dtype=np.int32).reshape(4, 6)
    t = torch.tensor(a)
    strided = t[:, ::2]  # non-contiguous (4, 3)
    assert np.array_equal(torch.tril(strided).numpy(), np.tril(a[:, ::2]))
    assert np.array_equal(torch.triu(t.t(), 1).numpy(), np.triu(a.T, 1))
    b = torch.ones(2, 3, dtype=torch.bool)
    assert values(torch.tril(b)) == [[True, False, False], [True, True, False]]
    nan = torch.tensor([[1.0, float("nan")], [float("inf"), 2.0]])
    assert values(torch.tril(nan)) == [[1.0, 0.0], [float("inf"), 2.0]]  # no nan * 0
    m = torch.ones(3, 3)
    assert m.tril_(1) is m
    assert values(m) == [[1.0, 1.0, 0.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    m2 = torch.ones(3, 3)
    m2.triu_(-1)
    assert values(m2) == [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [0.0, 1.0, 1.0]]
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        torch.tril(torch.ones(3))
    out = torch.empty(0)
    assert torch.triu(torch.ones(2, 2), out=out) is out and values(out) == [[1.0, 1.0],
                                                                           [0.0, 1.0]]


@pytest.mark.parametrize("row, col, offset", [(3, 3, 0), (3, 4, 1), (4, 3, -1), (5, 2, 3),
                                              (0, 3, 0), (3, 3, -5), (3, 3, 7)])
def test_triangle_indices_match_numpy(row, col, offset):
    lo = torch.tril_indices(row, col, offset)
    hi = torch.triu_indices(row, col, offset)
    assert lo.dtype == torch.int64 and lo.shape[0] == 2
    assert np.array_equal(lo.numpy(), np.stack(np.tril_indices(row, offset, col)))
    assert np.array_equal(hi.numpy(), np.stack(np.triu_indices(row, offset, col)))


def test_triangle_indices_dtype_and_errors():
    assert torch.tril_indices(3, 3, dtype=torch.int32).dtype == torch.int32
    with pytest.raises(RuntimeError, match="row must be non-negative"):
        torch.tril_indices(-1, 3)
    with pytest.raises(RuntimeError, match="col must be non-negative"):
        torch.triu_indices(3, -1)
    with pytest.raises(NotImplementedError):
        torch.tril_indices(3, 3, dtype=torch.float32)


# -- complex, polar --------------------------------------------------------------------------


def test_complex_and_polar():
    re = np.array([[1.0], [2.0]], np.float32)
    im = np.array([0.5, -1.0, 3.0], np.float32)
    c = torch.complex(torch.tensor(re), torch.tensor(im))
    assert c.dtype == torch.complex64 and c.shape == (2, 3)
    assert np.array_equal(np.array(values(c)), re + 1j * im)
    d = torch.complex(torch.ones(2, dtype=torch.float64), torch.zeros(2, dtype=torch.float64))
    assert d.dtype == torch.complex128
    r = np.array([1.0, 2.0, 0.5])
    theta = np.array([0.0, 1.5, -2.0])
    p = torch.polar(torch.tensor(r), torch.tensor(theta))
    assert p.dtype == torch.complex128
    assert np.allclose(np.array(values(p)), r * np.exp(1j * theta))
    with pytest.raises(RuntimeError, match="scalar type Float"):
        torch.complex(torch.ones(2), torch.zeros(2, dtype=torch.float64))
    with pytest.raises(RuntimeError, match="Half, Float or Double"):
        torch.complex(torch.ones(2, dtype=torch.int64), torch.zeros(2, dtype=torch.int64))
    with pytest.raises(TypeError, match="must be Tensor"):
        torch.complex(torch.ones(2), 1.0)


# -- numpy -----------------------------------------------------------------------------------


@pytest.mark.parametrize("np_dtype", [np.float64, np.float32, np.float16, np.complex64,
                                      np.complex128, np.int64, np.int32, np.int16, np.int8,
                                      np.uint8, np.bool_])
def test_from_numpy_shares_memory(np_dtype):
    a = np.arange(12).reshape(3, 4).astype(np_dtype)
    t = torch.from_numpy(a)
    assert t.shape == (3, 4) and t.stride() == (4, 1)
    assert t.data_ptr() == a.ctypes.data
    assert str(t.dtype) == f"torch.{np.dtype(np_dtype).name}"
    a[1, 2] = 1
    assert t[1, 2].item() == 1
    t[0, 0] = 0
    assert a[0, 0] == 0


def test_from_numpy_layouts():
    a = np.arange(24.0).reshape(4, 6)
    s = torch.from_numpy(a[1:, ::2])
    assert s.shape == (3, 3) and s.stride() == (6, 2)
    assert np.array_equal(s.numpy(), a[1:, ::2])
    s[0, 0] = -1.0
    assert a[1, 0] == -1.0
    tr = torch.from_numpy(a.T)
    assert tr.stride() == (1, 6) and np.array_equal(tr.numpy(), a.T)
    z = torch.from_numpy(np.array(3.5))
    assert z.shape == () and z.item() == 3.5
    assert torch.from_numpy(np.zeros((0, 3))).shape == (0, 3)


def test_from_numpy_errors_and_warning():
    with pytest.raises(ValueError, match="negative"):
        torch.from_numpy(np.arange(3.0)[::-1])
    with pytest.raises(ValueError, match="byte order"):
        torch.from_numpy(np.arange(3, dtype=">f4"))
    with pytest.raises(TypeError, match=r"expected np\.ndarray"):
        torch.from_numpy([1])
    with pytest.raises(TypeError, match="can't convert"):
        torch.from_numpy(np.zeros(2, dtype=np.longdouble))
    assert torch.from_numpy(np.zeros(2, dtype=np.uint16)).dtype is torch.uint16  # PyTorch 2.3+
    odd = np.ndarray((3,), np.int32, np.zeros(13, np.uint8).data, 1, (3,))
    with pytest.raises(ValueError, match="multiple of the element byte size"):
        torch.from_numpy(odd)
    from torch._aten import creation as _creation_ops

    _creation_ops._warned_not_writable = False
    ro = np.arange(3.0)
    ro.flags.writeable = False
    with pytest.warns(UserWarning, match="not writable"):
        t = torch.from_numpy(ro)
    assert values(t) == [0.0, 1.0, 2.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per process, like PyTorch
        torch.from_numpy(ro)


def test_as_tensor():
    x = torch.ones(3)
    assert torch.as_tensor(x) is x
    assert torch.as_tensor(x, dtype=torch.float64).dtype == torch.float64
    a = np.arange(4.0)
    t = torch.as_tensor(a)
    assert t.data_ptr() == a.ctypes.data  # shared
    assert torch.as_tensor(a, dtype=torch.float32).data_ptr() != a.ctypes.data
    assert values(torch.as_tensor([1, 2])) == [1, 2]
    with pytest.raises(ValueError, match="negative"):
        torch.as_tensor(a[::-1])


def test_asarray():
    x = torch.ones(3)
    assert torch.asarray(x) is x
    assert torch.asarray(x, copy=True).data_ptr() != x.data_ptr()
    with pytest.raises(ValueError, match="can't alias tensor with dtype 'Float' into dtype"):
        torch.asarray(x, dtype=torch.float64, copy=False)
    a = np.arange(6.0).reshape(2, 3)
    shared = torch.asarray(a)
    assert shared.data_ptr() == a.ctypes.data and shared.dtype == torch.float64
    assert torch.asarray(a, copy=True).data_ptr() != a.ctypes.data
    with pytest.raises(ValueError, match="can't alias tensor"):
        torch.asarray(a, dtype=torch.float32, copy=False)
    with pytest.raises(ValueError, match="arbitrary sequence"):
        torch.asarray([1, 2], copy=False)
    assert values(torch.asarray([1.5, 2], dtype=torch.int64)) == [1, 2]
    assert torch.asarray(3.5).dtype == torch.float32
    assert torch.asarray(np.int64(3)).dtype == torch.int64
    r = torch.asarray(a, requires_grad=True)
    assert r.requires_grad and not x.requires_grad
    buf = bytearray(b"abcd")
    b = torch.asarray(buf, dtype=torch.uint8)
    assert values(b) == [97, 98, 99, 100]
    buf[0] = 65
    assert b[0].item() == 65  # shares the buffer


def test_frombuffer():
    buf = bytearray(np.arange(4, dtype=np.int32).tobytes())
    t = torch.frombuffer(buf, dtype=torch.int32)
    assert values(t) == [0, 1, 2, 3]
    t[0] = 7
    assert np.frombuffer(bytes(buf), np.int32)[0] == 7
    assert values(torch.frombuffer(buf, dtype=torch.int32, count=2, offset=4)) == [1, 2]
    with pytest.raises(ValueError, match="multiple of element size"):
        torch.frombuffer(bytearray(7), dtype=torch.int32)
    with pytest.raises(ValueError, match="must not be 0"):
        torch.frombuffer(bytearray(0), dtype=torch.int32)


def test_array_protocol():
    x = torch.tensor([1.0, 2.0, 3.0])
    a = np.asarray(x)
    assert a.dtype == np.float32 and np.shares_memory(a, x.numpy())
    assert np.asarray(x, dtype=np.int64).dtype == np.int64
    assert np.array(x, copy=True).ctypes.data != x.data_ptr()
    assert torch.Tensor.__array_priority__ == 1000
    y = np.float64(2.0) * x
    assert isinstance(y, torch.Tensor) and values(y) == [2.0, 4.0, 6.0]
    with pytest.raises(RuntimeError, match="requires grad"):
        np.asarray(torch.ones(2, requires_grad=True))
    with pytest.raises(TypeError, match="BFloat16"):
        np.asarray(torch.ones(2, dtype=torch.bfloat16))


# -- DLPack ----------------------------------------------------------------------------------


def test_dlpack_round_trip_with_numpy_shares_memory():
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)[:, 1:]
    assert x.__dlpack_device__() == (1, 0)
    a = np.from_dlpack(x)
    assert a.shape == (2, 2) and a.dtype == np.float32
    assert a.ctypes.data == x.data_ptr()
    a[0, 0] = 100.0
    assert x[0, 0].item() == 100.0
    n = np.arange(5, dtype=np.int16)
    t = torch.from_dlpack(n)
    assert t.dtype == torch.int16 and t.data_ptr() == n.ctypes.data
    t[1] = -7
    assert n[1] == -7
    back = torch.from_dlpack(torch.from_dlpack(np.from_dlpack(t)))
    assert back.data_ptr() == n.ctypes.data
    cap = torch.from_dlpack(np.arange(3.0).__dlpack__())
    assert values(cap) == [0.0, 1.0, 2.0]
    alias = torch.from_dlpack(x)
    assert alias is not x and alias.data_ptr() == x.data_ptr()


def test_dlpack_errors():
    with pytest.raises(BufferError, match="require gradient"):
        torch.ones(2, requires_grad=True).__dlpack__()
    with pytest.raises(BufferError):
        torch.ones(2, dtype=torch.bfloat16).__dlpack__()
    with pytest.raises(RuntimeError, match="invalid capsule"):
        torch.from_dlpack([1])
