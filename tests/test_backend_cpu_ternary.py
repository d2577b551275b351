"""The fused addcmul / addcdiv / lerp kernels of plait-backend-cpu: values against numpy references
(float64 within each dtype's tolerance, and PyTorch's CPU formulas replicated exactly), against
core's composites, over dtypes, broadcasts, layouts and threads; in-place forms; autograd
through them; errors unchanged."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

pytest.importorskip("plait_backend_cpu._C")

from plait_backend_cpu import _C as C

import torch
from torch._core import dispatch as _dispatch
from torch.backends import contract

FUSED = ["aten::addcmul", "aten::addcdiv", "aten::lerp.Tensor", "aten::addcmul_",
         "aten::addcdiv_", "aten::lerp_.Tensor"]
FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
# (rtol, atol) of one rounding to each dtype, a little widened for the intermediate steps
TOL = {torch.float32: (2e-6, 1e-6), torch.float64: (1e-14, 1e-14),
       torch.float16: (2e-3, 1e-3), torch.bfloat16: (1.6e-2, 1e-2)}
_BITS = {torch.float32: torch.int32, torch.float64: torch.int64, torch.float16: torch.int16,
         torch.bfloat16: torch.int16}


def _np(t: torch.Tensor) -> np.ndarray:
    return np.asarray(t.detach().to(torch.float64).tolist(), dtype=np.float64).reshape(t.shape)


def _rand(shape, dtype, seed, low=-2.0, high=2.0) -> torch.Tensor:
    rng = np.random.default_rng(seed)
    values = rng.uniform(low, high, size=shape)
    return torch.tensor(values.tolist() if shape else float(values), dtype=dtype)


def _close(got: torch.Tensor, want: np.ndarray, dtype) -> None:
    assert got.dtype == dtype and tuple(got.shape) == want.shape
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(_np(got), want, rtol=rtol, atol=atol)


def _same_bits(got: torch.Tensor, want: torch.Tensor) -> None:
    assert got.dtype == want.dtype and tuple(got.shape) == tuple(want.shape)
    a = got.contiguous().view(_BITS[got.dtype]).reshape(-1).tolist()
    b = want.contiguous().view(_BITS[want.dtype]).reshape(-1).tolist()
    assert a == b


def _lerp_ref(s, e, w):
    return np.where(np.abs(w) < 0.5, s + w * (e - s), e - (e - s) * (1 - w))


@pytest.fixture
def threads():
    before = C.get_num_threads()
    yield C.set_num_threads
    C.set_num_threads(before)


@pytest.mark.parametrize("qualname", FUSED)
def test_the_cpu_kernel_is_the_backends(qualname):
    torch.zeros(1)  # the backend registers its kernels on first use of the device
    kernel = _dispatch.get(qualname).kernels.get("CPU")
    assert kernel is not None and kernel.__module__.startswith("plait_backend_cpu")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(), (1,), (7,), (3, 5), (1100,), (0, 3)])
def test_values_against_float64_references(dtype, shape):
    s, a, b = (_rand(shape, dtype, seed) for seed in (1, 2, 3))
    b = b.abs() + 0.5  # a divisor away from zero
    w = _rand(shape, dtype, 4, -0.5, 1.5)
    S, A, B, W = _np(s), _np(a), _np(b), _np(w)
    _close(torch.addcmul(s, a, b, value=0.25), S + 0.25 * A * B, dtype)
    _close(torch.addcdiv(s, a, b, value=-1.5), S - 1.5 * A / B, dtype)
    _close(torch.lerp(s, a, w), _lerp_ref(S, A, W), dtype)
    _close(torch.lerp(s, a, 0.75), _lerp_ref(S, A, 0.75), dtype)


def _fma32(x: float, y: float, z: float) -> float:
    """float32(x * y + z) rounded once (exact rational arithmetic)."""
    return float(np.float32(float(Fraction(x) * Fraction(y) + Fraction(z))))


def test_float32_is_pytorchs_cpu_formula_bit_for_bit():
    # PyTorch's CPU kernels: value rounded to float, addcmul = fma(value * t1, t2, self),
    # addcdiv = self + value * t1 / t2, lerp = fma(w or w - 1, end - self, self or end)
    n = 300
    s, a, b = (_rand((n,), torch.float32, seed) for seed in (5, 6, 7))
    w = _rand((n,), torch.float32, 8, -0.5, 1.5)
    S, A, B, W = (np.asarray(t.tolist(), dtype=np.float32) for t in (s, a, b, w))
    v = np.float32(0.1)
    addcmul = [_fma32(float(v * A[i]), float(B[i]), float(S[i])) for i in range(n)]
    assert torch.addcmul(s, a, b, value=0.1).tolist() == addcmul
    assert torch.addcdiv(s, a, b, value=0.1).tolist() == (S + v * A / B).tolist()
    d = A - S
    small = np.abs(W) < 0.5
    lerp = [_fma32(float(W[i]), float(d[i]), float(S[i])) if small[i]
            else _fma32(float(W[i] - np.float32(1)), float(d[i]), float(A[i])) for i in range(n)]
    assert torch.lerp(s, a, w).tolist() == lerp


@pytest.mark.parametrize("dtype", FLOATS)
def test_against_the_composites(dtype, threads):
    s, a, b = (_rand((2049,), dtype, seed) for seed in (9, 10, 11))
    b = b.abs() + 0.25
    w = _rand((2049,), dtype, 12, -0.5, 1.5)
    calls = [("aten::addcmul", (s, a, b), {"value": 0.5}),
             ("aten::addcdiv", (s, a, b), {"value": 2}),
             ("aten::lerp.Tensor", (s, a, w), {}),
             ("aten::lerp.Tensor", (s, a, 0.3), {})]
    for n_threads in (1, 2):
        threads(n_threads)
        for qualname, args, kwargs in calls:
            got = _dispatch.get(qualname)(*args, **kwargs)
            want = contract.composite(qualname)(*args, **kwargs)
            # the composites compute in float64 and round once, the kernels in the compute
            # type: within one rounding of the dtype
            _close(got, _np(want), dtype)
    # float64 addcdiv is the same formula in both: the same bits
    if dtype == torch.float64:
        _same_bits(torch.addcdiv(s, a, b, value=2), contract.composite("aten::addcdiv")(
            s, a, b, value=2))


def test_threads_split_the_same_values(threads):
    s, a, b = (_rand((100_003,), torch.float32, seed) for seed in (13, 14, 15))
    threads(1)
    one = [torch.addcmul(s, a, b, value=0.3), torch.lerp(s, a, b), torch.addcdiv(s, a, b)]
    threads(2)
    two = [torch.addcmul(s, a, b, value=0.3), torch.lerp(s, a, b), torch.addcdiv(s, a, b)]
    for x, y in zip(one, two):
        _same_bits(x, y)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_edge_values(dtype):
    inf, nan = math.inf, math.nan
    s = torch.tensor([0.0, -0.0, inf, -inf, nan, 1.0, 3.0, inf, 2.0], dtype=dtype)
    e = torch.tensor([1.0, 0.0, inf, 1.0, 1.0, nan, -3.0, inf, 2.0], dtype=dtype)
    # exact at both ends: lerp(s, e, 0) is s and lerp(s, e, 1) is e where e - s is finite
    finite = [0, 1, 6, 8]
    for weight, want in ((0.0, s), (1.0, e)):
        got = torch.lerp(s, e, weight)
        assert [got[i].item() for i in finite] == [want[i].item() for i in finite]
    got = torch.lerp(s, e, 0.5)
    S, E = _np(s), _np(e)
    with np.errstate(invalid="ignore", divide="ignore"):
        np.testing.assert_array_equal(_np(got), _lerp_ref(S, E, 0.5).astype(np.float64))
        w = torch.tensor([0.0, 0.5, 1.0, nan, inf, -inf, 0.25, 2.0, 0.5], dtype=dtype)
        np.testing.assert_array_equal(_np(torch.lerp(s, e, w)), _lerp_ref(S, E, _np(w)))
        np.testing.assert_array_equal(_np(torch.addcmul(s, e, e, value=1)), S + E * E)
        np.testing.assert_array_equal(_np(torch.addcdiv(s, e, s, value=1)), S + E / S)


@pytest.mark.parametrize("dtype", FLOATS)
def test_broadcast_one_element_operands(dtype):
    s, a = _rand((4, 3), dtype, 16), _rand((4, 3), dtype, 17)
    S, A = _np(s), _np(a)
    for one in (torch.tensor(1.5, dtype=dtype), torch.tensor([1.5], dtype=dtype),
                torch.tensor([[1.5]], dtype=dtype)):
        _close(torch.addcmul(s, a, one, value=2), S + 2 * A * 1.5, dtype)
        _close(torch.addcmul(s, one, a), S + 1.5 * A, dtype)
        _close(torch.addcdiv(one, a, one), 1.5 + A / 1.5, dtype)
        w = one * 0.5
        _close(torch.lerp(s, a, w), _lerp_ref(S, A, 0.75), dtype)
    # every operand one element: the longest shape
    x = torch.addcmul(torch.tensor([2.0], dtype=dtype), torch.tensor(3.0, dtype=dtype),
                      torch.tensor([[0.5]], dtype=dtype))
    _close(x, np.array([[3.5]]), dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_strided_operands_give_the_contiguous_values(dtype, threads):
    # the strided kernels compute what the contiguous ones do: a result never depends on its
    # operands' layout (PyTorch's does not either)
    s, a, b = (_rand((37, 29), dtype, seed) for seed in (18, 19, 20))
    w = _rand((37, 29), dtype, 21, -0.5, 1.5)
    b = b.abs() + 0.5
    calls = [(lambda x, y, z: torch.addcmul(x, y, z, value=0.3), b),
             (lambda x, y, z: torch.addcdiv(x, y, z, value=-2), b),
             (torch.lerp, w),
             (lambda x, y, z: torch.lerp(x, y, 0.7), b)]
    for n_threads in (1, 2):
        threads(n_threads)
        for call, z in calls:
            want = call(s, a, z)
            got = call(s.t().contiguous().t(), a.t().contiguous().t(), z.t().contiguous().t())
            assert got.stride() == (1, 37)  # follows its inputs' layout, as PyTorch's
            _same_bits(got, want)
            wide = [torch.empty(37, 58, dtype=dtype) for _ in range(3)]
            for view, t in zip(wide, (s, a, z)):
                view[:, ::2] = t
            got = call(*(v[:, ::2] for v in wide))
            assert got.is_contiguous()
            _same_bits(got, want)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_partial_broadcasts(dtype):
    s, a, b = _rand((5, 1), dtype, 22), _rand((1, 4), dtype, 23), _rand((5, 4), dtype, 24)
    S, A, B = _np(s), _np(a), _np(b)
    _close(torch.addcmul(s, a, b, value=0.5), S + 0.5 * A * B, dtype)
    _same_bits(torch.addcmul(s, a, b, value=0.5),
               torch.addcmul(s.expand(5, 4).contiguous(), a.expand(5, 4).contiguous(), b,
                             value=0.5))
    _same_bits(torch.lerp(s, a, 0.25),
               torch.lerp(s.expand(5, 4).contiguous(), a.expand(5, 4).contiguous(), 0.25))
    _close(torch.lerp(b, a, s), _lerp_ref(B, A, S), dtype)


def test_other_dtypes_run_the_composite():
    s, a, b = (_rand((5, 4), torch.float32, seed) for seed in (25, 26, 27))
    S, A, B = _np(s), _np(a), _np(b)
    mixed = torch.addcdiv(s, a.double(), b.abs().double() + 1, value=3)
    _close(mixed, S + 3 * A / (np.abs(B) + 1), torch.float64)
    ints = torch.addcmul(torch.tensor([1, 2]), torch.tensor([3, 4]), torch.tensor([5, 6]),
                         value=2)
    assert ints.dtype == torch.int64 and ints.tolist() == [31, 50]


def test_inplace_forms():
    s, a, b = (_rand((6, 7), torch.float32, seed) for seed in (21, 22, 23))
    S, A, B = _np(s), _np(a), _np(b)
    x = s.clone()
    assert x.addcmul_(a, b, value=-0.5) is x
    _close(x, S - 0.5 * A * B, torch.float32)
    x = s.clone()
    assert x.addcdiv_(a, b.abs() + 1, value=2) is x
    _close(x, S + 2 * A / (np.abs(B) + 1), torch.float32)
    x = s.clone()
    assert x.lerp_(a, 0.9) is x
    _close(x, _lerp_ref(S, A, 0.9), torch.float32)
    x = s.clone()
    x.lerp_(a, b)
    _close(x, _lerp_ref(S, A, B), torch.float32)
    # a strided self: the same values as a contiguous one
    x = torch.empty(7, 6).t()
    x.copy_(s)
    x.addcmul_(a, b, value=0.25)
    _same_bits(x.contiguous(), torch.addcmul(s, a, b, value=0.25))
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        s[:1].clone().addcmul_(a, b)


@pytest.mark.parametrize("dtype", FLOATS)
def test_inplace_writes_the_out_of_place_values(dtype):
    s, a, b = (_rand((33, 31), dtype, seed) for seed in (28, 29, 30))
    w = _rand((33, 31), dtype, 31, -0.5, 1.5)
    calls = [(lambda x, *r: x.addcmul_(*r, value=0.3), lambda *r: torch.addcmul(*r, value=0.3)),
             (lambda x, *r: x.addcdiv_(*r, value=-2), lambda *r: torch.addcdiv(*r, value=-2)),
             (lambda x, y, z: x.lerp_(y, z), torch.lerp)]
    for inplace, out_of_place in calls:
        z = w if out_of_place is torch.lerp else b.abs() + 0.5
        want = out_of_place(s, a, z)
        for x in (s.clone(), s.t().contiguous().t()):  # contiguous and strided self
            version = x._version
            assert inplace(x, a, z) is x
            assert x._version == version + 1
            _same_bits(x.contiguous(), want)
    x = s.clone()
    x.lerp_(a, 0.3)
    _same_bits(x, torch.lerp(s, a, 0.3))
    # operands that are `self` itself, or broadcast one-element tensors
    x = s.clone()
    x.addcmul_(x, x, value=0.5)
    _same_bits(x, torch.addcmul(s, s, s, value=0.5))
    x = s.clone()
    x.addcdiv_(a, torch.tensor(4.0, dtype=dtype))
    _same_bits(x, torch.addcdiv(s, a, torch.tensor(4.0, dtype=dtype)))
    x = s.clone()
    x[:, :1].lerp_(a[:, :1], x[:1, :1])
    ref = s.clone()
    ref[:, :1] = torch.lerp(s[:, :1], a[:, :1], s[:1, :1].clone())
    _same_bits(x, ref)


def test_inplace_overlaps_and_refusals():
    # an operand partly overlapping self: refused before anything is written, as PyTorch 2.13
    # refuses it ("... refer to a single memory location")
    x = torch.arange(6.0)
    with pytest.raises(RuntimeError, match="refer to a single memory location"):
        x[1:].addcmul_(x[:5], torch.ones(5))
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    with torch.inference_mode():
        frozen = torch.ones(3)
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor"):
        frozen.addcmul_(torch.ones(3), torch.ones(3))
    leaf = torch.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        leaf.lerp_(torch.zeros(3), 0.5)
    with pytest.raises(RuntimeError, match="result type Float can't be cast"):
        torch.ones(3, dtype=torch.int64).addcmul_(torch.ones(3), torch.ones(3))
    with torch.no_grad():
        leaf.addcdiv_(torch.ones(3), torch.full((3,), 2.0))
    assert leaf.tolist() == [1.5, 1.5, 1.5]


def test_autograd_through_them():
    torch.manual_seed(0)
    s, a, b, w = (torch.randn(3, 4, dtype=torch.float64, requires_grad=True) for _ in range(4))
    d = (b.detach().abs() + 0.5).requires_grad_()
    assert torch.autograd.gradcheck(lambda x, y, z: torch.addcmul(x, y, z, value=0.7), (s, a, b))
    assert torch.autograd.gradcheck(lambda x, y, z: torch.addcdiv(x, y, z, value=-2), (s, a, d))
    assert torch.autograd.gradcheck(torch.lerp, (s, a, w))
    assert torch.autograd.gradcheck(lambda x, y: torch.lerp(x, y, 0.3), (s, a))
    assert torch.autograd.gradgradcheck(lambda x, y, z: torch.addcdiv(x, y, z), (s, a, d))
    assert torch.autograd.gradgradcheck(torch.lerp, (s, a, w))
    # the in-place forms: the node keeps `self` as it was before the write
    assert torch.autograd.gradcheck(lambda x, y, z: (x * 1).lerp_(y, z), (s, a, w))
    assert torch.autograd.gradcheck(lambda x, y, z: (x * 1).addcmul_(y, z, value=-3), (s, a, b))
    assert torch.autograd.gradcheck(lambda x, y, z: (x * 1).addcdiv_(y, z), (s, a, d))
    assert type((s * 1).addcmul_(a, b).grad_fn).__name__ == "AddcmulBackward0"
    # broadcast operands get gradients summed to their shapes
    one = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
    torch.addcmul(s, a, one, value=3).sum().backward()
    assert one.grad.item() == pytest.approx(3 * a.detach().sum().item())
    assert type(torch.addcmul(s, a, b).grad_fn).__name__ == "AddcmulBackward0"
    assert type(torch.addcdiv(s, a, d).grad_fn).__name__ == "AddcdivBackward0"


def test_errors_unchanged():
    i = torch.arange(4)
    with pytest.raises(RuntimeError, match="Integer division with addcdiv"):
        torch.addcdiv(i, i, i)
    with pytest.raises(NotImplementedError, match="lerp_kernel_scalar"):
        torch.lerp(i, i, 0.5)
    with pytest.raises(RuntimeError, match="must match the size"):
        torch.addcmul(torch.ones(3), torch.ones(4), torch.ones(3))
    with pytest.raises(RuntimeError, match="expected dtype float for `end`"):
        torch.lerp(torch.ones(3), torch.ones(3, dtype=torch.float64), 0.5)
    with pytest.raises(RuntimeError, match="expected dtype float for `weight`"):
        torch.lerp(torch.ones(3), torch.ones(3), torch.ones(3, dtype=torch.float64))
