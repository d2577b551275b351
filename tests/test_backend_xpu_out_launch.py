"""``out=`` of the planned elementwise operators as one launch straight into ``out``
(``torch._core.plan.call_out`` over ``FastPath.prepare_out``) on plait-backend-xpu.

Each call is compared bit for bit with the generic path (inference mode, where core takes no
plans: compute, then copy) and with numpy; the launch counts show that a repeated call runs the
op's kernel once and copies nothing. PyTorch's out= rules are checked too: a resized ``out``
with its warning, the partial-overlap and autograd errors, version counters.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import torch

XC = pytest.importorskip("plait_backend_xpu._C", reason="plait-backend-xpu is not installed")
from plait_backend_xpu import kernels as xpu_kernels  # noqa: E402

COUNT, REASON = XC.device_count("all")
pytestmark = [pytest.mark.skipif(COUNT == 0, reason=f"no OpenCL device: {REASON}"),
              pytest.mark.usefixtures("xpu_all_devices")]

A = [[-2.5, -0.0, 0.0, 1.0], [0.5, 3.0, -1.25, float("nan")]]
B = [[1.5, 2.0, -0.0, -4.0], [0.25, 3.0, 8.0, 1.0]]

# (name, out= call, the primitive's kernel name, numpy's computation in float64 then cast)
CALLS = [
    ("add", lambda a, b, out: torch.add(a, b, out=out), "add", lambda a, b: a + b),
    ("sub", lambda a, b, out: torch.sub(a, b, out=out), "sub", lambda a, b: a - b),
    ("mul", lambda a, b, out: torch.mul(a, b, out=out), "mul", lambda a, b: a * b),
    ("maximum", lambda a, b, out: torch.maximum(a, b, out=out), "maximum",
     lambda a, b: np.where(np.isnan(a) | np.isnan(b), np.nan, np.maximum(a, b))),
    ("add row", lambda a, b, out: torch.add(a, b[1], out=out), "add", lambda a, b: a + b[1]),
    ("exp", lambda a, b, out: torch.exp(a, out=out), "exp", lambda a, b: np.exp(a)),
    ("neg", lambda a, b, out: torch.neg(a, out=out), "neg", lambda a, b: -a),
]
DTYPES = {torch.float32: np.float32, torch.float64: np.float64, torch.float16: np.float16}


def _bits(t: torch.Tensor) -> list:
    host = t.cpu()
    view = {torch.float32: torch.int32, torch.float64: torch.int64,
            torch.float16: torch.int16, torch.bfloat16: torch.int16}[host.dtype]
    return host.view(view).tolist()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16,
                                   torch.bfloat16], ids=str)
@pytest.mark.parametrize("name,fn,kernel,ref", CALLS, ids=[c[0] for c in CALLS])
def test_out_is_one_launch_with_the_generic_paths_bits(name, fn, kernel, ref, dtype):
    a = torch.tensor(A).to(dtype).to("xpu")
    b = torch.tensor(B).to(dtype).to("xpu")
    out = torch.empty(2, 4, dtype=dtype).to("xpu")
    alias = out.view(-1)
    for k in range(4):  # the first call plans, the later ones replay
        before_kernels = xpu_kernels.CALLS.copy()
        version = out._version
        assert fn(a, b, out) is out
        assert out._version == version + 1 == alias._version
        if k >= 1:
            launched = {key: n - before_kernels.get(key, 0)
                        for key, n in xpu_kernels.CALLS.items() if n != before_kernels.get(key, 0)}
            assert launched == {kernel: 1}  # the op's one launch, no copy
    got = _bits(out)
    assert _bits(alias) == [x for row in got for x in row]
    generic = torch.full((2, 4), 7.0, dtype=dtype).to("xpu")
    with torch.inference_mode():
        fn(a, b, generic)
    assert got == _bits(generic)
    if dtype in DTYPES:
        want = ref(np.array(A, dtype=DTYPES[dtype]), np.array(B, dtype=DTYPES[dtype]))
        if kernel == "exp":  # (not correctly rounded: within the device's ulp bound)
            np.testing.assert_allclose(out.cpu().numpy(), want.astype(DTYPES[dtype]),
                                       rtol={torch.float16: 1e-3}.get(dtype, 1e-6))
        else:
            np.testing.assert_array_equal(out.cpu().numpy(), want.astype(DTYPES[dtype]))


def test_out_of_another_shape_is_resized_with_pytorchs_warning():
    a = torch.tensor([1.0, 2.0, 3.0]).to("xpu")
    for _ in range(3):
        out = torch.empty(2).to("xpu")
        with pytest.warns(UserWarning, match="was resized"):
            assert torch.add(a, a, out=out) is out
        assert out.shape == (3,) and out.cpu().tolist() == [2.0, 4.0, 6.0]
        empty = torch.empty(0).to("xpu")
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # an empty out resizes silently
            torch.add(a, a, out=empty)
        assert empty.cpu().tolist() == [2.0, 4.0, 6.0]


def test_out_of_another_dtype_casts_or_refuses_as_pytorch():
    a = torch.tensor([1.5, 2.5]).to("xpu")
    wide = torch.empty(2, dtype=torch.float64).to("xpu")
    for _ in range(3):
        torch.add(a, a, out=wide)
    assert wide.cpu().tolist() == [3.0, 5.0]
    narrow = torch.empty(2, dtype=torch.int64).to("xpu")
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
        torch.add(a, a, out=narrow)


def test_out_overlapping_an_input():
    for _ in range(3):
        x = torch.arange(8, dtype=torch.float32).to("xpu")
        with pytest.raises(RuntimeError, match="single memory location"):
            torch.add(x[:4], x[:4], out=x[1:5])
        with pytest.raises(RuntimeError, match="single memory location"):
            torch.exp(x[:4], out=x[2:6])
        assert x.cpu().tolist() == list(range(8))
        # out that is exactly an input: allowed, as in PyTorch
        y = torch.arange(4, dtype=torch.float32).to("xpu")
        assert torch.add(y, y, out=y) is y
        assert y.cpu().tolist() == [0.0, 2.0, 4.0, 6.0]


@pytest.mark.parametrize("call", [lambda a, b, c: torch.add(a, b, out=c),
                                  lambda a, b, c: torch.sub(b, a, out=c),
                                  lambda a, b, c: torch.exp(a, out=c)],
                         ids=["add", "sub", "exp"])
def test_out_under_autograd_is_pytorchs_error(call):
    a = torch.ones(3).to("xpu").requires_grad_()
    b = torch.ones(3).to("xpu")
    c = torch.empty(3).to("xpu")
    for _ in range(2):
        with pytest.raises(RuntimeError, match=r"functions with out=\.\.\. arguments don't "
                                               "support automatic differentiation"):
            call(a, b, c)
    assert not c.requires_grad and c.grad_fn is None
    with torch.no_grad():  # nothing recorded: allowed
        for _ in range(3):
            call(a, b, c)
    assert not c.requires_grad
    leaf = torch.empty(3).to("xpu").requires_grad_()
    with pytest.raises(RuntimeError, match="functions with out="):
        torch.add(b, b, out=leaf)


def test_out_on_a_strided_view_and_numbers_keep_the_values():
    a = torch.tensor(A).to("xpu")
    base = torch.zeros(4, 2).to("xpu")
    for _ in range(3):  # a transposed out: the generic route, the same values
        torch.mul(a, 2.0, out=base.t())
    np.testing.assert_array_equal(base.t().cpu().numpy(), np.array(A, np.float32) * 2)
    out = torch.empty(2, 4).to("xpu")
    for _ in range(3):
        torch.add(a, 1.5, out=out)
    np.testing.assert_array_equal(out.cpu().numpy(), np.array(A, np.float32) + np.float32(1.5))
