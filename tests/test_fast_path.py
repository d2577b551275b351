"""The eager fast tier (DESIGN.md §4, "Hot path"): same-layout plain tensors skip the generic
dispatcher. It must give exactly what the generic path gives, and step aside whenever the
generic path has something to do (grad, modes, other layouts, subclasses, new kernels)."""

from __future__ import annotations

import operator
import warnings

import numpy as np
import pytest

import torch
from torch import _arith, _dispatch

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64,
          torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool]
OPS = [(operator.add, torch.ops.aten.add.Tensor), (operator.mul, torch.ops.aten.mul.Tensor)]


def values(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    if dtype is torch.bool:
        return torch.tensor(rng.integers(0, 2, shape).astype(bool).tolist())
    if dtype.is_floating_point:
        return torch.tensor(rng.normal(0, 10, shape).tolist(), dtype=dtype)
    return torch.tensor(rng.integers(0, 100, shape).tolist(), dtype=dtype)


@pytest.fixture
def generic_only(monkeypatch):
    """Make the generic binary path fail, to prove a call took the fast tier."""

    def boom(*args, **kwargs):
        raise AssertionError("generic path taken")

    monkeypatch.setattr(_arith, "_binary", boom)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize(("fast", "generic"), OPS, ids=["add", "mul"])
@pytest.mark.parametrize("shape", [(), (4,), (3, 5), (2, 0, 3)], ids=str)
def test_fast_tier_matches_generic_path(fast, generic, dtype, shape):
    a, b = values(dtype, shape, 0), values(dtype, shape, 1)
    assert a._fk is not None and a._fk is b._fk  # fresh tensors of one layout
    want = generic(a, b)
    got = fast(a, b)
    assert got.dtype is want.dtype and got.shape == want.shape
    assert got.stride() == want.stride() and got.device == want.device
    assert got.tolist() == want.tolist()


def test_fast_tier_is_taken(generic_only):
    a, b = torch.ones(3), torch.full((3,), 2.0)
    assert (a + b).tolist() == [3.0, 3.0, 3.0]
    assert (a * b).tolist() == [2.0, 2.0, 2.0]


@pytest.mark.parametrize("case", ["view", "dtype", "shape", "scalar", "grad", "subclass"])
def test_fast_tier_steps_aside(case, generic_only):
    a = torch.ones(4)
    other = {
        "view": lambda: torch.ones(8)[::2],
        "dtype": lambda: torch.ones(4, dtype=torch.float64),
        "shape": lambda: torch.ones(1, 4),
        "scalar": lambda: 2.0,
        "grad": lambda: torch.ones(4, requires_grad=True),
        "subclass": lambda: None,
    }[case]()
    if case == "subclass":
        class Sub(torch.Tensor):
            pass

        a = Sub([1.0, 1.0, 1.0, 1.0])
        other = torch.ones(4)
    with pytest.raises(AssertionError, match="generic path taken"):
        a + other


def test_fast_tier_respects_dispatch_modes():
    seen = []

    class Recorder:
        def __torch_dispatch__(self, func, types, args, kwargs):
            seen.append(func.qualname)
            return func(*args, **kwargs)

    a, b = torch.ones(2), torch.ones(2)
    _dispatch.push_mode(Recorder())
    try:
        a + b
    finally:
        _dispatch.pop_mode()
    assert seen == ["aten::add.Tensor"]


def test_fast_tier_sees_new_kernels_and_their_removal():
    a, b = torch.ones(3), torch.ones(3)
    lib = torch.library.Library("prims", "IMPL", "CPU")
    lib.impl("add", lambda out, x, y: out.fill_(42.0))
    try:
        assert (a + b).tolist() == [42.0, 42.0, 42.0]
    finally:
        lib._destroy()
    assert (a + b).tolist() == [2.0, 2.0, 2.0]


def test_fast_tier_on_a_plugin_device():
    from plait_toy_device import _runtime

    a = torch.tensor([1.0, 2.0], device="toy")
    b = torch.tensor([3.0, 4.0], device="toy")
    before = _runtime.CALLS["add"]
    assert (a + b).tolist() == [4.0, 6.0]
    assert _runtime.CALLS["add"] == before + 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # mul runs through the CPU fallback
        assert (a * b).tolist() == [3.0, 8.0]
