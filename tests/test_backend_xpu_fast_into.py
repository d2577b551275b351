"""plait-backend-xpu's launches into existing memory (``FastPath.prepare_into``): in-place
arithmetic (``c.add_(b)``, ``c.mul_(2.0)``), ``copy_`` between two tensors of one layout and
the ``out=`` results written through it, and the kernel-argument cache every launch shares.

Each case runs through the fast path (a signature's first call plans, its later calls replay)
and through the generic path (under inference mode, where core takes neither tiers nor plans):
the results must agree bit for bit, the tensor written must be the one returned, its version
must move by one per call, and views of its memory must see the write.
"""

from __future__ import annotations

import pytest

import torch

XC = pytest.importorskip("plait_backend_xpu._C", reason="plait-backend-xpu is not installed")
from plait_backend_xpu import kernels as xpu_kernels, render_launch_elementwise  # noqa: E402

COUNT, REASON = XC.device_count("all")
needs_device = pytest.mark.skipif(COUNT == 0, reason=f"no OpenCL device: {REASON}")
# PoCL (a CPU OpenCL device) counts as an xpu device here
pytestmark = [needs_device, pytest.mark.usefixtures("xpu_all_devices")]

BASE = [[-2.5, -0.0, 0.0, 1.0], [0.5, 3.0, -1.25, float("nan")]]
OTHER = [[1.5, 2.0, -0.0, -4.0], [0.25, 3.0, 8.0, 1.0]]

# (name, in-place call on the inputs t): what core's in-place plans serve
INPLACE = [
    ("c.add_(b)", lambda t: t["c"].add_(t["b"])),
    ("c.sub_(b)", lambda t: t["c"].sub_(t["b"])),
    ("c.mul_(b)", lambda t: t["c"].mul_(t["b"])),
    ("c.div_(b)", lambda t: t["c"].div_(t["b"])),
    ("c.add_(row)", lambda t: t["c"].add_(t["row"])),  # other broadcast over c
    ("c.mul_(2.5)", lambda t: t["c"].mul_(2.5)),  # a number
    ("c.sub_(3)", lambda t: t["c"].sub_(3)),
    ("c.add_(c)", lambda t: t["c"].add_(t["c"])),  # other is c itself
    ("c += b", lambda t: t["c"].__iadd__(t["b"])),
    ("c.copy_(b)", lambda t: t["c"].copy_(t["b"])),
    ("torch.add(a, b, out=c)", lambda t: torch.add(t["a"], t["b"], out=t["c"])),
    ("torch.mul(a, b, out=c)", lambda t: torch.mul(t["a"], t["b"], out=t["c"])),
    ("torch.exp(a, out=c)", lambda t: torch.exp(t["a"], out=t["c"])),
]


def _inputs(dtype: torch.dtype) -> dict[str, torch.Tensor]:
    a = torch.tensor(BASE).to(dtype).to("xpu")
    b = torch.tensor(OTHER).to(dtype).to("xpu")
    return {"a": a, "b": b, "c": a.clone(), "row": b[1].clone()}


def _bits(t: torch.Tensor) -> list:
    """The values bit for bit (NaN where NaN, the sign of zero)."""
    host = t.cpu()
    view = {torch.float32: torch.int32, torch.float64: torch.int64,
            torch.float16: torch.int16, torch.bfloat16: torch.int16}[host.dtype]
    return host.view(view).tolist()


def _run(fn, dtype: torch.dtype, generic: bool) -> tuple[list[list], list[int]]:
    """(c's bits after each of three calls, c's version step at each) on fresh inputs."""
    t = _inputs(dtype)
    c = t["c"]
    alias = c.view(-1)  # another view of c's memory: it must see every write
    states, steps = [], []
    for _ in range(3):  # the first call plans, the later ones replay
        before = c._version
        if generic:
            with torch.inference_mode():
                result = fn(t)
        else:
            result = fn(t)
        assert result is c
        assert result.dtype == dtype and result.shape == (2, 4) and result.stride() == (4, 1)
        states.append(_bits(c))
        assert _bits(alias) == [x for row in states[-1] for x in row]
        steps.append(c._version - before)
    assert alias._version == c._version  # one counter for the memory
    return states, steps


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16,
                                   torch.bfloat16], ids=str)
@pytest.mark.parametrize("name,fn", INPLACE, ids=[c[0] for c in INPLACE])
def test_writes_into_memory_give_the_generic_paths_result(name, fn, dtype):
    fast, fast_steps = _run(fn, dtype, generic=False)
    generic, generic_steps = _run(fn, dtype, generic=True)
    assert fast == generic
    assert fast_steps == generic_steps == [1, 1, 1]


def test_in_place_values_match_independent_arithmetic():
    # (not only the generic path's word: the values a plain float computation gives)
    c = torch.tensor([1.0, 2.0, 3.0, 4.0]).to("xpu")
    b = torch.tensor([0.5, -1.0, 2.0, 8.0]).to("xpu")
    want = [1.0, 2.0, 3.0, 4.0]
    for _ in range(3):
        c.add_(b)
        c.mul_(0.5)
        c.sub_(1)
        want = [(x + y) * 0.5 - 1 for x, y in zip(want, [0.5, -1.0, 2.0, 8.0])]
    assert c.cpu().tolist() == want
    out = torch.empty(4).to("xpu")
    for _ in range(3):
        assert torch.mul(c, b, out=out) is out
    assert out.cpu().tolist() == [x * y for x, y in zip(want, [0.5, -1.0, 2.0, 8.0])]


def test_writes_into_memory_run_without_the_primitive_kernels(monkeypatch):
    c = torch.zeros(8).to("xpu")
    b = torch.arange(8, dtype=torch.float32).to("xpu")
    out = torch.empty(8).to("xpu")
    calls = [lambda: c.add_(b), lambda: c.mul_(2.0), lambda: c.copy_(b),
             lambda: torch.add(b, b, out=out)]
    for fn in calls:  # planned at the first call, which may run the primitive kernels
        fn()

    def refuse(*args, **kwargs):
        raise AssertionError("a planned write called a primitive kernel")

    # every primitive kernel ends in the shared launch code (its cache of contiguous kernels
    # emptied, so that a primitive call cannot bypass it)
    monkeypatch.setattr(xpu_kernels, "_CONTIGUOUS", {})
    monkeypatch.setattr(render_launch_elementwise, "run_row", refuse)
    monkeypatch.setattr(render_launch_elementwise, "launch", refuse)
    before = xpu_kernels.CALLS.copy()
    for fn in calls:
        fn()
    # the prepared launches count their kernels as the primitive kernels do
    assert xpu_kernels.CALLS["add"] == before["add"] + 2  # add_ and the out= op
    assert xpu_kernels.CALLS["mul"] == before["mul"] + 1
    assert xpu_kernels.CALLS["copy_"] == before["copy_"] + 1  # copy_ (out= is one launch)
    assert c.cpu().tolist() == list(range(8))
    assert out.cpu().tolist() == [2.0 * k for k in range(8)]


def test_writes_that_keep_the_generic_path():
    c = torch.ones(4).to("xpu")
    w = torch.ones(4).to("xpu").requires_grad_()
    with pytest.raises(RuntimeError):  # a leaf that requires grad: PyTorch's error
        w.add_(c)
    i = torch.ones(4, dtype=torch.int32).to("xpu")
    for _ in range(2):  # integers keep the general route (wrapping, division)
        i.add_(torch.full((4,), 2, dtype=torch.int32).to("xpu"))
    assert i.cpu().tolist() == [5, 5, 5, 5]
    wide = torch.arange(8, dtype=torch.float32).to("xpu")
    for _ in range(2):  # a partly overlapping operand is refused, as in PyTorch
        with pytest.raises(RuntimeError, match="single memory location"):
            wide[1:5].add_(wide[:4])
    half = torch.ones(4).to("xpu")
    for _ in range(2):  # a copy across dtypes: the cast primitive
        half.copy_(torch.tensor([0.5, 1.5, 2.5, 3.5], dtype=torch.float64).to("xpu"))
    assert half.cpu().tolist() == [0.5, 1.5, 2.5, 3.5]


def test_launches_sharing_a_kernel_see_their_own_arguments():
    # One add kernel serves every contiguous float32 size: its arguments are set only when
    # they change, so calls alternating sizes, operands and outputs must each get their own.
    xs = {n: torch.arange(n, dtype=torch.float32).to("xpu") for n in (4, 8, 1000)}
    ys = {n: torch.full((n,), 0.5).to("xpu") for n in (4, 8, 1000)}
    for _ in range(3):
        for n in (4, 1000, 8, 4):
            got = (xs[n] + ys[n]).cpu().tolist()
            assert got == [k + 0.5 for k in range(n)]
            swapped = (ys[n] + xs[n] * 2.0).cpu().tolist()
            assert swapped == [2.0 * k + 0.5 for k in range(n)]
        with torch.inference_mode():  # the generic path's launches set the same kernels
            assert (xs[8] + ys[8]).cpu().tolist() == [k + 0.5 for k in range(8)]
