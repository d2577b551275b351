"""plait-backend-xpu's fast path (plait_backend_xpu/fast.py): core's hot tiers and plan cache
on prepared native launches.

Each case runs twice on xpu tensors: through the fast path (a signature's first call plans,
its later calls replay) and through the generic path (under inference mode, where core takes
neither tiers nor plans). Both run the same kernels, so the results must agree bit for bit,
with the same dtype, shape and strides; gradients are compared with formulas written here.
The cases the fast path leaves alone (complex values, a device without double precision)
must still give the generic path's results.
"""

from __future__ import annotations

import math

import pytest

import torch
import torch.nn.functional as F

XC = pytest.importorskip("plait_backend_xpu._C", reason="plait-backend-xpu is not installed")
from plait_backend_xpu import (  # noqa: E402
    kernels as xpu_kernels,
    render_launch_reductions as shared_reductions,
)

COUNT, REASON = XC.device_count("all")
needs_device = pytest.mark.skipif(COUNT == 0, reason=f"no OpenCL device: {REASON}")
# PoCL (a CPU OpenCL device) counts as an xpu device here
pytestmark = [needs_device, pytest.mark.usefixtures("xpu_all_devices")]



def _inputs(dtype: torch.dtype = torch.float32) -> dict[str, torch.Tensor]:
    base = torch.tensor([[-2.5, -0.0, 0.0, 1.0], [0.5, 3.0, -1.25, float("nan")]])
    other = torch.tensor([[1.5, 2.0, -0.0, -4.0], [0.25, 3.0, 8.0, 1.0]])
    a = base.to(dtype).to("xpu")
    b = other.to(dtype).to("xpu")
    wide = torch.arange(12, dtype=torch.float32).reshape(3, 4).to(dtype).to("xpu")
    return {"a": a, "b": b, "row": b[0].clone(), "wide": wide,
            "a64": base.to(torch.float64).to("xpu")}


# (name, function of the inputs): every tier and every kind of plan the fast path serves
CASES = [
    ("a + b", lambda t: t["a"] + t["b"]),  # tier 1: one layout
    ("a * 2.0", lambda t: t["a"] * 2.0),  # tier 2: a number
    ("2.0 - a", lambda t: 2.0 - t["a"]),  # tier 2, reversed
    ("a / 3", lambda t: t["a"] / 3),  # tier 2, an int
    ("a ** 2.0", lambda t: t["a"] ** 2.0),
    ("a.exp()", lambda t: t["a"].exp()),  # tier 4
    ("-a", lambda t: -t["a"]),
    ("a + row", lambda t: t["a"] + t["row"]),  # tier 3: a broadcast pair of layouts
    ("torch.sub(a, b)", lambda t: torch.sub(t["a"], t["b"])),  # plans
    ("torch.sub(a, b, alpha=2)", lambda t: torch.sub(t["a"], t["b"], alpha=2)),
    ("F.relu(a)", lambda t: F.relu(t["a"])),
    ("torch.maximum(a, b)", lambda t: torch.maximum(t["a"], t["b"])),
    ("a < b", lambda t: t["a"] < t["b"]),  # a comparison: bool out
    ("torch.where(a < b, a, b)", lambda t: torch.where(t["a"] < t["b"], t["a"], t["b"])),
    ("a.t() + b.t()", lambda t: t["a"].t() + t["b"].t()),  # strided operands
    ("a.t().exp()", lambda t: t["a"].t().exp()),
    ("a[1] + b[1]", lambda t: t["a"][1] + t["b"][1]),  # views at an offset
    ("a[:, 1:] * b[:, :3]", lambda t: t["a"][:, 1:] * t["b"][:, :3]),
    ("a + a64", lambda t: t["a"] + t["a64"]),  # mixed dtypes: a cast, then the op
    ("wide[1:] - a", lambda t: t["wide"][1:] - t["a"]),
    ("torch.div(a, b, rounding_mode='floor')",
     lambda t: torch.div(t["a"], t["b"], rounding_mode="floor")),
    ("a.to(float64)", lambda t: t["a"].to(torch.float64)),
    ("wide.sum()", lambda t: t["wide"].sum()),  # tier 4: a full sum
    ("wide.sum(1)", lambda t: t["wide"].sum(1)),  # reductions over dims: plans
    ("wide.amax(0)", lambda t: t["wide"].amax(0)),
    ("wide.t().sum(1, keepdim=True)", lambda t: t["wide"].t().sum(1, keepdim=True)),
    ("a.sum(0)", lambda t: t["a"].sum(0)),
    ("wide.amin(-1)", lambda t: t["wide"].amin(-1)),  # the last-dimension tier
    ("wide.sum(-1, keepdim=True)", lambda t: t["wide"].sum(-1, keepdim=True)),
    ("a.amax(dim=1)", lambda t: t["a"].amax(dim=1)),
]


def _same(fast: torch.Tensor, generic: torch.Tensor) -> None:
    assert fast.device.type == "xpu"
    assert fast.dtype == generic.dtype and fast.shape == generic.shape
    assert fast.stride() == generic.stride()
    got, want = fast.cpu(), generic.cpu()
    if got.dtype.is_floating_point:
        # bit for bit: NaN where NaN, and the sign of zero
        got, want = got.view(torch.int32 if got.dtype == torch.float32 else torch.int64), \
            want.view(torch.int32 if want.dtype == torch.float32 else torch.int64)
    assert got.tolist() == want.tolist()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("name,fn", CASES, ids=[c[0] for c in CASES])
def test_fast_path_gives_the_generic_paths_result(name, fn, dtype):
    t = _inputs(dtype)
    with torch.inference_mode():
        generic = fn(t)
    for _ in range(3):  # the first call plans, the later ones replay
        _same(fn(t), generic)
    # the replay reads the next call's operands, not the first call's
    t2 = {k: v * 2 for k, v in t.items()}
    with torch.inference_mode():
        generic2 = fn(t2)
    _same(fn(t2), generic2)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8, torch.float16,
                                   torch.bfloat16], ids=str)
def test_other_dtypes_give_the_generic_paths_result(dtype):
    a = torch.tensor([1, 2, 3, 250]).to(dtype).to("xpu")
    b = torch.tensor([7, 0, 5, 9]).to(dtype).to("xpu")
    for fn in (lambda: a + b, lambda: a * b, lambda: torch.sub(a, b), lambda: a.abs(),
               lambda: torch.maximum(a, b), lambda: a * 2.5, lambda: 3 - a, lambda: a.sum(0)):
        with torch.inference_mode():
            generic = fn()
        for _ in range(2):
            out = fn()
            assert out.dtype == generic.dtype and out.stride() == generic.stride()
            assert out.cpu().tolist() == generic.cpu().tolist()


def test_the_fast_path_runs_without_the_primitive_kernels(monkeypatch):
    t = _inputs()
    calls = [lambda: t["a"] + t["b"], lambda: t["a"] * 2.0, lambda: t["a"].exp(),
             lambda: torch.sub(t["a"], t["b"]), lambda: F.relu(t["a"]),
             lambda: t["a"] + t["row"], lambda: t["a"].t() + t["b"].t(),
             lambda: t["wide"].sum(), lambda: t["wide"].sum(1), lambda: t["wide"].amax(-1)]
    expected = []
    for fn in calls:  # planned at the first call, which runs the primitive kernels
        fn()
        expected.append(fn().cpu())

    def refuse(*args, **kwargs):
        raise AssertionError("the fast path called a primitive kernel")

    monkeypatch.setattr(xpu_kernels, "_run_row", refuse)
    monkeypatch.setattr(shared_reductions, "_reduce", refuse)  # the reduction kernels' body
    before = xpu_kernels.CALLS.copy()
    for fn, want in zip(calls, expected):
        assert fn().cpu().tolist().__repr__() == want.tolist().__repr__()  # (NaN as text)
    # the prepared launches count their kernels as the primitive kernels do
    assert xpu_kernels.CALLS["add"] >= before["add"] + 3
    assert xpu_kernels.CALLS["exp"] == before["exp"] + 1
    assert xpu_kernels.CALLS["sum"] == before["sum"] + 2


def test_gradients_through_the_fast_path():
    a = torch.tensor([0.5, -1.0, 2.0, 3.0]).to("xpu").requires_grad_()
    b = torch.tensor([1.5, 4.0, -2.0, 0.25]).to("xpu").requires_grad_()
    for _ in range(2):  # tier 5 and the plans record the nodes the generic path records
        a.grad = b.grad = None
        y = (a + b) * b - torch.sub(a, b).exp() + F.relu(a) * 3.0
        y.sum().backward()
        av, bv = [0.5, -1.0, 2.0, 3.0], [1.5, 4.0, -2.0, 0.25]
        # d/da = b - exp(a - b) + 3 [a > 0]; d/db = a + 2b + exp(a - b)
        want_a = [y_ - math.exp(x - y_) + (3.0 if x > 0 else 0.0) for x, y_ in zip(av, bv)]
        want_b = [x + 2 * y_ + math.exp(x - y_) for x, y_ in zip(av, bv)]
        assert a.grad.cpu().tolist() == pytest.approx(want_a, rel=1e-6)
        assert b.grad.cpu().tolist() == pytest.approx(want_b, rel=1e-6)


def test_cases_left_to_the_generic_path():
    z = torch.tensor([1 + 2j, -3j]).to("xpu")
    w = torch.tensor([2 - 1j, 0.5 + 0.5j]).to("xpu")
    for _ in range(2):  # complex values: their own kernels, through the generic path
        assert (z * w).cpu().tolist() == [(1 + 2j) * (2 - 1j), (-3j) * (0.5 + 0.5j)]
        assert (z + 1.0).cpu().tolist() == [2 + 2j, 1 - 3j]
    empty = torch.empty(0, 3).to("xpu")
    for _ in range(2):  # no elements
        out = empty + empty
        assert out.shape == (0, 3) and out.device.type == "xpu"
    x = torch.tensor([1.0, 2.0]).to("xpu")
    with torch.inference_mode():
        assert (x + x).cpu().tolist() == [2.0, 4.0]


def test_locate_finds_a_block_from_an_address():
    x = torch.zeros(64).to("xpu")
    ptr = x.untyped_storage().data_ptr()
    device, offset = XC.locate(ptr)
    assert device == (x.device.index or 0) and offset == 0
    assert XC.locate(ptr + 12) == (device, 12)
    assert XC.locate(x[3:].data_ptr()) == (device, 12)
    assert XC.locate(0) is None
    capacity = XC.size_class(64 * 4)
    assert XC.locate(ptr + capacity) != (device, capacity)  # past the block: another or none
