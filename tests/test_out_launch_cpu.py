"""``out=`` of the planned elementwise operators written by the kernel itself on the CPU
backend (``torch._core.plan.call_out`` over ``FastPath.prepare_out``): values against numpy and
the generic path (inference mode: no plans, compute then copy), one write per call (no
compute-then-copy once planned), PyTorch's out= errors."""

from __future__ import annotations

import numpy as np
import pytest

import torch
from torch._aten import convert

A = np.array([[-2.5, -0.0, 0.0, 1.0], [0.5, 3.0, -1.25, np.nan]])
B = np.array([[1.5, 2.0, -0.0, -4.0], [0.25, 3.0, 8.0, 1.0]])

CALLS = [
    ("add", lambda a, b, out: torch.add(a, b, out=out), lambda a, b: a + b),
    ("sub", lambda a, b, out: torch.sub(a, b, out=out), lambda a, b: a - b),
    ("mul", lambda a, b, out: torch.mul(a, b, out=out), lambda a, b: a * b),
    ("add row", lambda a, b, out: torch.add(a, b[1], out=out), lambda a, b: a + b[1]),
    ("add transposed", lambda a, b, out: torch.add(a, b.t().contiguous().t(), out=out),
     lambda a, b: a + b),
    ("neg", lambda a, b, out: torch.neg(a, out=out), lambda a, b: -a),
    ("abs", lambda a, b, out: torch.abs(a, out=out), lambda a, b: np.abs(a)),
]


def _refuse(*args, **kwargs):
    raise AssertionError("a planned out= call computed, then copied")


@pytest.mark.parametrize("dtype,np_dtype", [(torch.float32, np.float32),
                                            (torch.float64, np.float64),
                                            (torch.int32, np.int32)], ids=str)
@pytest.mark.parametrize("name,fn,ref", CALLS, ids=[c[0] for c in CALLS])
def test_out_is_written_by_the_kernel(name, fn, ref, dtype, np_dtype, monkeypatch):
    an, bn = np.nan_to_num(A, nan=7.0) if dtype is torch.int32 else A, B
    a = torch.tensor(an.astype(np_dtype))
    b = torch.tensor(bn.astype(np_dtype))
    out = torch.empty(2, 4, dtype=dtype)
    alias = out.view(-1)
    fn(a, b, out)  # the first call plans (and copies)
    monkeypatch.setattr(convert, "write_out", _refuse)
    for _ in range(3):
        version = out._version
        assert fn(a, b, out) is out
        assert out._version == version + 1 == alias._version
    monkeypatch.undo()
    want = ref(an.astype(np_dtype), bn.astype(np_dtype)).astype(np_dtype)
    np.testing.assert_array_equal(out.numpy(), want)
    generic = torch.full((2, 4), 9, dtype=dtype)
    with torch.inference_mode():
        fn(a, b, generic)
    np.testing.assert_array_equal(out.numpy(), generic.numpy())  # (NaN where NaN)


def test_out_rules_as_pytorch():
    a = torch.tensor([1.0, 2.0, 3.0])
    with pytest.warns(UserWarning, match="was resized"):
        out = torch.empty(2)
        torch.add(a, a, out=out)
    assert out.tolist() == [2.0, 4.0, 6.0]
    x = torch.arange(8.0)
    with pytest.raises(RuntimeError, match="single memory location"):
        torch.add(x[:4], x[:4], out=x[1:5])
    assert x.tolist() == list(map(float, range(8)))
    y = torch.arange(4.0)
    for _ in range(3):
        torch.add(y, y, out=y)  # exactly an input: allowed
    assert y.tolist() == [0.0, 8.0, 16.0, 24.0]
    w = torch.ones(3, requires_grad=True)
    c = torch.empty(3)
    with pytest.raises(RuntimeError, match=r"^add\(\): functions with out=\.\.\. arguments"):
        torch.add(w, a, out=c)
    with pytest.raises(RuntimeError, match=r"^exp\(\): functions with out="):
        torch.exp(w, out=c)
    assert not c.requires_grad
    with torch.no_grad():
        torch.add(w, a, out=c)
    assert c.tolist() == [2.0, 3.0, 4.0] and not c.requires_grad
