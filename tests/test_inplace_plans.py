"""In-place arithmetic by plan (``torch._aten.arith._write_into``): a repeated ``a.add_(b)``
runs the native call bound to its signature. Every case here is compared with the same call
with plans off, and with values written out in the test."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import torch
from torch._aten import arith
from torch.utils._python_dispatch import TorchDispatchMode


@pytest.fixture
def unplanned(monkeypatch: pytest.MonkeyPatch) -> Callable[[], Any]:
    """A switch: ``unplanned()`` is a context in which no in-place call takes a plan."""

    @contextlib.contextmanager
    def off() -> Iterator[None]:
        with monkeypatch.context() as m:
            m.setattr(arith, "_inplace_plan", lambda *args: False)
            arith._inplace_plans.clear()
            yield
        arith._inplace_plans.clear()

    return off


def _planned(prim: str) -> bool:
    """Whether some signature of ``prim`` holds a plan (not the "unplanned" mark)."""
    return any(key[0] == prim and plan for key, plan in arith._inplace_plans.items())


def _pair(dtype: torch.dtype, shape: tuple[int, ...] = (2, 3)) -> tuple[torch.Tensor, ...]:
    a = torch.tensor([[1.5, -2.0, 3.25], [4.0, 0.5, -6.0]], dtype=dtype)
    b = torch.tensor([[0.5, 4.0, -1.0], [2.0, -0.25, 3.0]], dtype=dtype)
    return a, b


# (method, operand, expected elementwise rule)
_CASES = [
    ("add_", lambda x, y: x + y),
    ("sub_", lambda x, y: x - y),
    ("mul_", lambda x, y: x * y),
    ("div_", lambda x, y: x / y),
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize(("method", "rule"), _CASES)
def test_tensor_operand_matches_rule_and_unplanned(method: str, rule: Any, dtype: torch.dtype,
                                                   unplanned: Any) -> None:
    arith._inplace_plans.clear()
    for _ in range(3):  # the first call makes the plan, the next ones run it
        a, b = _pair(dtype)
        expected = [rule(x, y) for x, y in zip(a.flatten().tolist(), b.flatten().tolist())]
        vc = a._version
        assert getattr(a, method)(b) is a
        assert a._version == vc + 1
        assert a.flatten().tolist() == pytest.approx(expected, rel=1e-6)
    assert _planned(method[:-1])
    with unplanned():
        c, d = _pair(dtype)
        getattr(c, method)(d)
    assert torch.equal(a, c)


@pytest.mark.parametrize("number", [2.5, 3, -0.75])
@pytest.mark.parametrize(("method", "rule"), _CASES)
def test_number_operand(method: str, rule: Any, number: Any, unplanned: Any) -> None:
    arith._inplace_plans.clear()
    for _ in range(3):
        a, _ = _pair(torch.float64)
        expected = [rule(x, number) for x in a.flatten().tolist()]
        vc = a._version
        assert getattr(a, method)(number) is a
        assert a._version == vc + 1
        assert a.flatten().tolist() == pytest.approx(expected, rel=1e-12)
    assert _planned(method[:-1])
    with unplanned():
        c, _ = _pair(torch.float64)
        getattr(c, method)(number)
    assert torch.equal(a, c)


def test_bool_number() -> None:
    for _ in range(3):
        a = torch.tensor([1.5, -2.0])
        a.add_(True)
        a.mul_(False)
        assert a.tolist() == [0.0, 0.0]
        with pytest.raises(RuntimeError, match="Subtraction"):
            a.sub_(True)


def test_broadcast_operand() -> None:
    for _ in range(3):
        a = torch.zeros(3, 4)
        row = torch.tensor([1.0, 2.0, 3.0, 4.0])
        a.add_(row)
        assert a.tolist() == [[1.0, 2.0, 3.0, 4.0]] * 3
        col = torch.tensor([[1.0], [10.0], [100.0]])
        a.mul_(col)
        assert a.tolist() == [[1.0, 2.0, 3.0, 4.0], [10.0, 20.0, 30.0, 40.0],
                              [100.0, 200.0, 300.0, 400.0]]
    assert _planned("add") and _planned("mul")


def test_self_must_not_broadcast() -> None:
    for _ in range(2):
        a = torch.ones(4)
        with pytest.raises(RuntimeError, match="broadcast"):
            a.add_(torch.ones(3, 4))
        assert a.tolist() == [1.0] * 4
        assert a._version == 0


def test_aliasing_self_operand() -> None:
    for _ in range(3):
        a = torch.tensor([1.0, -2.0, 3.0])
        a.add_(a)
        assert a.tolist() == [2.0, -4.0, 6.0]
        a.mul_(a)
        assert a.tolist() == [4.0, 16.0, 36.0]


def test_overlapping_views_of_one_storage(unplanned: Any) -> None:
    # row 0 of `rows` is the operand: a partial overlap, which PyTorch refuses (2.13 raises
    # "unsupported operation: some elements of the input tensor and the written-to tensor
    # refer to a single memory location"), planned or not, and nothing is written
    def run() -> list[float]:
        base = torch.arange(8.0)
        rows = base.view(2, 4)
        with pytest.raises(RuntimeError, match="refer to a single memory location"):
            rows.add_(base[:4])
        return base.tolist()

    got = [run() for _ in range(3)]
    with unplanned():
        ref = run()
    assert got == [ref] * 3 == [[float(i) for i in range(8)]] * 3


def test_integer_self_with_float_operand_raises() -> None:
    for _ in range(2):
        a = torch.tensor([1, 2, 3])
        with pytest.raises(RuntimeError, match="can't be cast"):
            a.add_(1.5)
        with pytest.raises(RuntimeError, match="can't be cast"):
            a.mul_(torch.tensor([1.0, 2.0, 3.0]))
        assert a.tolist() == [1, 2, 3]


def test_float_self_with_double_operand_keeps_its_dtype() -> None:
    for _ in range(2):
        a = torch.ones(3)
        a.add_(torch.tensor([0.5, 1.5, 2.5], dtype=torch.float64))
        assert a.dtype == torch.float32
        assert a.tolist() == [1.5, 2.5, 3.5]


def test_strided_self() -> None:
    for _ in range(3):
        base = torch.zeros(3, 2)
        t = base.t()
        t.add_(torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
        assert base.tolist() == [[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]]


def test_leaf_requiring_grad_raises_and_no_grad_allows() -> None:
    for _ in range(2):
        w = torch.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf"):
            w.add_(torch.ones(3))
        with pytest.raises(RuntimeError, match=r"leaf|view"):
            w[:2].mul_(2.0)
        with torch.no_grad():
            w.add_(torch.tensor([1.0, 2.0, 3.0]))
            w.mul_(2.0)
        assert w.tolist() == [4.0, 6.0, 8.0]
        assert w._version == 2
        assert w.requires_grad and w.grad_fn is None


def test_graph_is_recorded_with_grad() -> None:
    for _ in range(2):
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        w = torch.tensor([0.5, 0.5, 0.5], requires_grad=True)
        y = x * 1.0
        y.mul_(3.0)
        z = torch.zeros(3)
        z.add_(w)  # self needs no grad, other does: z joins the graph
        assert z.requires_grad
        (y + z).sum().backward()
        assert x.grad.tolist() == [3.0, 3.0, 3.0]
        assert w.grad.tolist() == [1.0, 1.0, 1.0]


def test_inference_tensors() -> None:
    with torch.inference_mode():
        t = torch.ones(3)
        for _ in range(2):
            t.add_(torch.ones(3))
        assert t.tolist() == [3.0, 3.0, 3.0]
    for _ in range(2):
        with pytest.raises(RuntimeError, match="inference tensor"):
            t.add_(torch.ones(3))
        with pytest.raises(RuntimeError, match="inference tensor"):
            t.mul_(2.0)
    assert t.tolist() == [3.0, 3.0, 3.0]


def test_dispatch_mode_sees_planned_signature() -> None:
    a, b = torch.ones(3), torch.ones(3)
    for _ in range(3):
        a.add_(b)
    assert _planned("add")
    seen = []

    class Record(TorchDispatchMode):
        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (),
                               kwargs: Any = None) -> Any:
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    with Record():
        a.add_(b)
    assert any("add" in name for name in seen)
    assert a.tolist() == [5.0, 5.0, 5.0]


def test_kernel_registration_drops_plans() -> None:
    a, b = torch.ones(3), torch.ones(3)
    a.add_(b)
    assert arith._inplace_plans
    lib = torch.library.Library("plait_inplace_test", "DEF")
    lib.define("noop(Tensor x) -> Tensor")
    lib.impl("noop", lambda x: x, "CPU")
    assert not arith._inplace_plans


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_reduced_precision_matches_unplanned(dtype: torch.dtype, unplanned: Any) -> None:
    def run() -> list[float]:
        x = torch.linspace(-3, 3, 7).to(dtype)
        for _ in range(3):  # (the numbers round to the dtype first, as the general path's do)
            x.add_(0.1)
            x.mul_(1.37)
            x.div_(3)
            x.sub_(torch.full((7,), 0.77).to(dtype))
        return x.float().tolist()

    arith._inplace_plans.clear()
    got = run()
    assert _planned("mul") and _planned("sub")
    with unplanned():
        assert got == run()


def test_plans_serve_while_a_torch_dispatch_subclass_exists() -> None:
    # Defining a __torch_dispatch__ subclass (importing torch._dynamo defines two) keeps the
    # process's keys counter up for good; plain tensors must keep their plans.
    class Logged(torch.Tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            raise AssertionError("never called here")

    assert Logged.__torch_dispatch__ is not None
    arith._inplace_plans.clear()
    for _ in range(2):
        a, b = _pair(torch.float32)
        a.add_(b)
        assert a.tolist() == [[2.0, 2.0, 2.25], [6.0, 0.25, -3.0]]
    assert _planned("add")
