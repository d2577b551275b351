"""The dispatcher's plan cache beyond elementwise ops (torch._core.plan): factories, strided
inputs, keyword arguments, and the Python wrappers in front of the operators.

Each case compares plans with the generic path (plans switched off) on every observable:
values (where defined), dtype, shape, strides, device, grad, and what a mode sees.
"""

from __future__ import annotations

import pytest

import torch
import torch.nn.functional as F
from torch._core import plan as _plan
from torch.utils._python_dispatch import TorchDispatchMode

aten = torch.ops.aten


def _served(op):
    """The signatures of ``op`` whose plan replays the result (not left to the generic path,
    nor to a plan that runs the kernel again)."""
    return [key for key, plan in (op._plans or {}).items()
            if plan is not False and plan[3] != _plan.KERNEL]


def _same_meta(got, want):
    assert got.__class__ is want.__class__
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.stride() == want.stride() and got.device == want.device
    assert got.requires_grad == want.requires_grad


# -- factories ---------------------------------------------------------------------------------

FILLING = {
    "zeros": lambda: torch.zeros(3, 4),
    "zeros tuple int64": lambda: torch.zeros((2, 5), dtype=torch.int64),
    "ones bool": lambda: torch.ones(4, dtype=torch.bool),
    "ones float16": lambda: torch.ones(2, 3, dtype=torch.float16),
    "full": lambda: torch.full((2, 3), 2.5),
    "full int": lambda: torch.full((3,), 7),
    "full bool": lambda: torch.full((3,), True),
    "full float64 value": lambda: torch.full((2, 2), -1.25, dtype=torch.float64),
    "zeros_like": lambda: torch.zeros_like(torch.arange(6.0).view(2, 3)),
    "ones_like int32": lambda: torch.ones_like(torch.arange(6, dtype=torch.int32)),
    "full_like": lambda: torch.full_like(torch.arange(4.0), 3.0),
    "new_zeros": lambda: torch.arange(4.0).new_zeros(2, 2),
    "new_ones": lambda: torch.arange(4).new_ones((3,)),
    "big zeros": lambda: torch.zeros(300, 200),  # above the template size: filled per call
    "big full": lambda: torch.full((300, 200), 4.0),
    "empty shape": lambda: torch.zeros(0, 3),
}


@pytest.mark.parametrize("name", FILLING)
def test_filling_factory_plans_match_the_generic_path(name, no_plans):
    make = FILLING[name]
    with no_plans():
        want = make()
    results = [make() for _ in range(4)]  # the first records, the others replay
    for got in results:
        _same_meta(got, want)
        assert got.tolist() == want.tolist()
    # each result owns fresh memory: writing one changes no other, nor a later call's
    results[1].fill_(9) if results[1].numel() else None
    assert results[2].tolist() == want.tolist() and make().tolist() == want.tolist()
    assert len({r.untyped_storage().data_ptr() for r in results if r.numel()}) == \
        len([r for r in results if r.numel()])


@pytest.mark.parametrize("make", [
    lambda: torch.empty(3, 4), lambda: torch.empty((5,), dtype=torch.int16),
    lambda: torch.empty_like(torch.ones(2, 3, dtype=torch.float64)),
    lambda: torch.ones(2).new_empty(4, 1),
], ids=["empty", "empty tuple", "empty_like", "new_empty"])
def test_empty_plans_match_the_generic_path(make, no_plans):
    with no_plans():
        want = make()
    for got in [make() for _ in range(3)]:
        _same_meta(got, want)
        assert got.untyped_storage().nbytes() == want.untyped_storage().nbytes()


def test_factory_plans_are_taken():
    torch.zeros(2, 7)
    torch.empty(2, 7)
    assert _served(aten.zeros.default) and _served(aten.empty.memory_format)


def test_factory_plans_follow_the_default_dtype_and_device():
    assert torch.zeros(2).dtype == torch.float32 and torch.zeros(2).dtype == torch.float32
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        assert torch.zeros(2).dtype == torch.float64
        assert torch.empty(2).dtype == torch.float64
        assert aten.zeros.default([2]).dtype == torch.float64  # no device argument at all
    finally:
        torch.set_default_dtype(previous)
    assert torch.zeros(2).dtype == torch.float32
    with torch.device("meta"):
        assert torch.zeros(2).device.type == "meta" and torch.ones(2).device.type == "meta"
        assert aten.ones.default([2]).device.type == "meta"
    assert torch.zeros(2).device.type == "cpu"


def test_factory_plans_keep_requires_grad_and_inference_mode():
    torch.zeros(3), torch.zeros(3)
    t = torch.zeros(3, requires_grad=True)
    assert t.requires_grad and t.is_leaf and t.grad_fn is None
    with torch.inference_mode():
        assert torch.zeros(3).is_inference() and torch.empty(3).is_inference()
    assert not torch.zeros(3).is_inference()
    x = torch.ones(3, requires_grad=True)
    assert not torch.zeros_like(x).requires_grad and not torch.zeros_like(x).requires_grad


def test_modes_see_factory_calls_that_have_plans():
    class Log(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(func.__name__.split(".")[0])
            return func(*args, **(kwargs or {}))

    torch.ones(2, 2), torch.ones(2, 2), torch.empty(2), torch.empty(2)
    with Log() as log:
        torch.ones(2, 2)
        torch.empty(2)
        torch.full((2,), 3.0)
    assert log.ops == ["ones", "empty", "full"]


def test_factory_plans_see_a_library_kernel():
    torch.ones(3), torch.ones(3)
    lib = torch.library.Library("aten", "IMPL", "CPU")
    lib.impl("ones", lambda size, **kwargs: torch.full(tuple(size), 5.0))
    try:
        assert torch.ones(3).tolist() == [5.0, 5.0, 5.0]
        assert torch.ones(3).tolist() == [5.0, 5.0, 5.0]
    finally:
        lib._destroy()
    assert torch.ones(3).tolist() == [1.0, 1.0, 1.0]
    lib = torch.library.Library("prims", "IMPL", "CPU")
    lib.impl("fill_", lambda out, value: out.copy_(torch.arange(out.numel(),
                                                                dtype=out.dtype).view(out.shape)))
    try:
        assert torch.zeros(3).tolist() == [0.0, 1.0, 2.0]
        assert torch.zeros(3).tolist() == [0.0, 1.0, 2.0]
    finally:
        lib._destroy()
    assert torch.zeros(3).tolist() == [0.0, 0.0, 0.0]


def test_factory_sizes_are_checked_as_before():
    with pytest.raises(TypeError):
        torch.zeros(2.0, 3)
    with pytest.raises(TypeError):
        torch.zeros(True)
    with pytest.raises(RuntimeError, match="negative dimension"):
        torch.zeros(2, -1)
    torch.zeros(2, 3), torch.zeros(2, 3)
    with pytest.raises(TypeError):  # (2.0, 3) hashes as (2, 3), which has a plan
        torch.zeros((2.0, 3))
    assert torch.zeros(torch.Size([2, 3])).shape == (2, 3)
    assert torch.zeros([2, 3]).shape == (2, 3) and torch.zeros(size=(2, 3)).shape == (2, 3)


# -- the Python wrappers in front of the operators ---------------------------------------------


class _DispatchLog(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.calls = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        # the overload's name without PyTorch's ".default" for the unnamed overload
        self.calls.append((func.__name__.removesuffix(".default"), dict(kwargs or {})))
        return func(*args, **(kwargs or {}))


def test_schema_defaults_are_not_passed_as_in_pytorch():
    a, b = torch.ones(2), torch.ones(2)
    with _DispatchLog() as log:
        torch.sub(a, b)
        torch.sub(a, b, alpha=1)
        torch.sub(a, b, alpha=2)
        torch.add(a, b, alpha=1.0)  # a float alpha is not the schema's int default
        a - b
        a + b
    assert [kwargs for _, kwargs in log.calls] == [{}, {}, {"alpha": 2}, {"alpha": 1.0}, {}, {}]
    x = torch.ones(3, dtype=torch.int64)
    with pytest.raises(RuntimeError):  # a float alpha still reaches the kernel's check
        torch.add(x, x, alpha=1.0)


@pytest.mark.parametrize("alpha", [1, 2, 1.0, -0.5])
def test_sub_and_add_alpha_plans_match_the_generic_path(alpha, no_plans):
    def run(op):
        a = torch.tensor([1.0, -2.0, 3.5], requires_grad=True)
        b = torch.tensor([0.5, 4.0, -1.0], requires_grad=True)
        out = op(a, b, alpha=alpha)
        out.backward(torch.tensor([1.0, 2.0, 3.0]))
        return out, a.grad, b.grad

    for op in (torch.sub, torch.add):
        with no_plans():
            want = run(op)
        for _ in range(3):
            got = run(op)
            for g, w in zip(got, want):
                assert g.tolist() == w.tolist()
            assert type(got[0].grad_fn) is type(want[0].grad_fn)


class _Sub(torch.Tensor):
    pass


def test_functional_relu_consults_torch_function_once():
    calls = []

    class Logged(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            calls.append(func)
            return super().__torch_function__(func, types, args, kwargs or {})

    x = torch.tensor([-1.0, 2.0]).as_subclass(Logged)
    out = F.relu(x)
    assert calls == [F.relu] and type(out) is Logged and out.tolist() == [0.0, 2.0]
    assert type(F.relu(torch.tensor([-1.0]).as_subclass(_Sub))) is _Sub
    with _DispatchLog() as log:
        F.relu(torch.tensor([-3.0, 1.0]))
    assert [name for name, _ in log.calls if name != "lift_fresh"] == ["relu"]
    with pytest.raises(TypeError, match="must be Tensor"):
        F.relu([1.0])
    a = torch.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    F.relu(a).sum().backward()
    assert a.grad.tolist() == [0.0, 0.0, 1.0]


# -- addmm's bias --------------------------------------------------------------------------


@pytest.mark.parametrize("bias_shape", [(2,), (1, 2), (3, 1), (3, 2), ()])
def test_addmm_adds_a_broadcast_bias_with_its_gradient(bias_shape):
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=torch.float64,
                     requires_grad=True)
    w = torch.tensor([[1.0, -1.0], [2.0, 0.5]], dtype=torch.float64, requires_grad=True)
    bias = torch.full(bias_shape, 10.0, dtype=torch.float64, requires_grad=True)
    out = torch.addmm(bias, x, w)
    # x @ w = [[5, 0], [11, -1], [17, -2]], plus 10 everywhere
    assert out.tolist() == [[15.0, 10.0], [21.0, 9.0], [27.0, 8.0]]
    out.backward(torch.ones(3, 2, dtype=torch.float64))
    # each bias element receives the sum of the gradient over the positions it was added at
    per_element = {(2,): 3.0, (1, 2): 3.0, (3, 1): 2.0, (3, 2): 1.0, (): 6.0}[bias_shape]
    assert bias.grad.shape == bias.shape
    assert set(bias.grad.reshape(-1).tolist()) == {per_element}
    assert x.grad.tolist() == [[0.0, 2.5]] * 3 and w.grad.tolist() == [[9.0, 9.0], [12.0, 12.0]]


def test_addmm_refuses_a_bias_that_does_not_broadcast_to_the_product():
    x, w = torch.ones(3, 2), torch.ones(2, 2)
    for shape in [(2, 3, 2), (4,), (3, 3)]:
        with pytest.raises(RuntimeError):
            torch.addmm(torch.ones(shape), x, w)
    assert torch.addmm(torch.ones(2), x, w, beta=2, alpha=0.5).tolist() == [[3.0, 3.0]] * 3


# -- views with several pieces, narrow --------------------------------------------------------

PIECES = {
    "chunk": lambda x: x.chunk(3, 1),
    "chunk uneven": lambda x: torch.chunk(x, 4, 0),
    "split": lambda x: x.split(2, 1),
    "split sizes": lambda x: torch.split(x, [1, 4, 2], 1),
    "unbind": lambda x: x.unbind(0),
    "unbind dim": lambda x: torch.unbind(x, 1),
}


def _geometry(t):
    return (tuple(t.shape), t.stride(), t.storage_offset(), t.dtype)


@pytest.mark.parametrize("name", PIECES)
@pytest.mark.parametrize("source", ["contiguous", "transposed", "offset"])
def test_piece_plans_match_the_generic_path(name, source, no_plans):
    def make():
        x = torch.arange(35.0).view(5, 7)
        if source == "transposed":
            x = torch.arange(35.0).view(7, 5).t()
        elif source == "offset":
            x = torch.arange(50.0)[15:].view(5, 7)
        return x

    split = PIECES[name]
    with no_plans():
        x = make()
        want = split(x)
    for _ in range(3):
        y = make()
        got = split(y)
        assert type(got) is type(want) and len(got) == len(want)
        for g, w in zip(got, want):
            assert _geometry(g) == _geometry(w) and g.tolist() == w.tolist()
            assert g._base is (y._base if y._base is not None else y)
            assert g.untyped_storage().data_ptr() == y.untyped_storage().data_ptr()
        got[0].add_(1)  # the pieces share the source's memory and version counter
        assert y._version == got[-1]._version == 1


@pytest.mark.parametrize("split", [
    lambda x: x.chunk(2, 1), lambda x: x.split(3, -1), lambda x: x.split([1, 3], 1),
    lambda x: x.unbind(0), lambda x: x.t().chunk(3)])
def test_piece_plans_record_the_graph(split, no_plans):
    def run(scale):
        x = (torch.arange(12.0) * scale).view(3, 4).requires_grad_()
        pieces = split(x)
        loss = sum((p * (i + 2)).sum() for i, p in enumerate(pieces))
        loss.backward()
        return pieces, x.grad

    with no_plans():
        want = [run(s) for s in (1.0, 2.0)]
    for _ in range(2):
        for (want_pieces, want_grad), scale in zip(want, (1.0, 2.0)):
            pieces, grad = run(scale)
            assert grad.tolist() == want_grad.tolist()
            assert len(pieces) == len(want_pieces)
            for nr, (p, w) in enumerate(zip(pieces, want_pieces)):
                assert _geometry(p) == _geometry(w) and p.tolist() == w.tolist()
                assert p.grad_fn is pieces[0].grad_fn  # one node, each piece an output
                assert p.grad_fn.name() == w.grad_fn.name()
                assert p.output_nr == w.output_nr == nr
    with torch.no_grad():
        x = torch.ones(3, 4, requires_grad=True)
        assert not any(p.requires_grad for p in split(x))


def test_planned_pieces_with_grad_are_served_by_their_plan():
    x = torch.ones(4, 6, requires_grad=True)
    for _ in range(3):
        x.chunk(3, 1)
    assert _served(aten.chunk.default)


def test_narrow_plans_match_the_generic_path(no_plans):
    def run():
        x = torch.arange(24.0).view(4, 6).requires_grad_()
        y = x.narrow(1, 2, 3)
        (y * torch.arange(3.0)).sum().backward()
        return y, x.grad

    with no_plans():
        want, want_grad = run()
    for _ in range(3):
        got, grad = run()
        assert _geometry(got) == _geometry(want) and got.tolist() == want.tolist()
        assert grad.tolist() == want_grad.tolist()
        assert got.grad_fn.name() == want.grad_fn.name()
    x = torch.arange(10.0)[3:]
    assert [x.narrow(0, 2, 3).storage_offset() for _ in range(3)] == [5, 5, 5]
    with pytest.raises(RuntimeError):
        x.narrow(0, 5, 3)


# -- calls whose kernel runs several primitives ---------------------------------------------------


@pytest.mark.parametrize("call", [
    lambda a, b: torch.sub(a, b, alpha=2),
    lambda a, b: torch.add(a, b, alpha=-0.5),
    lambda a, b: torch.rsub(a, 3, alpha=2),
], ids=["sub alpha", "add alpha", "rsub alpha"])
@pytest.mark.parametrize("grad", [False, True])
def test_chained_primitives_keep_one_plan(call, grad, no_plans):
    def run():
        a = torch.tensor([1.0, -2.0, 3.5], requires_grad=grad)
        b = torch.tensor([0.25, 4.0, -1.0])
        out = call(a, b)
        if grad:
            out.backward(torch.tensor([1.0, 2.0, 3.0]))
        return out, a.grad

    with no_plans():
        want, want_grad = run()
    for _ in range(3):
        got, got_grad = run()
        _same_meta(got, want)
        assert got.tolist() == want.tolist()
        assert (got_grad is None) == (want_grad is None)
        if grad:
            assert got_grad.tolist() == want_grad.tolist()
            assert type(got.grad_fn) is type(want.grad_fn)


def test_a_chained_call_is_served_by_its_plan():
    a, b = torch.ones(5), torch.ones(5)
    torch.sub(a, b, alpha=3)
    served = [key for key in _served(aten.sub.Tensor) if "alpha" in key and 3 in key]
    assert served


def test_addmm_keeps_a_plan_and_its_graph(no_plans):
    def run(grad):
        x = torch.arange(6.0).view(2, 3).requires_grad_(grad)
        w = torch.arange(12.0).view(4, 3)
        bias = torch.tensor([1.0, -1.0, 0.5, 2.0], requires_grad=grad)
        out = torch.addmm(bias, x, w.t())  # (F.linear's product before aten::linear)
        if grad:
            out.backward(torch.ones(2, 4))
        return out, x.grad, bias.grad

    for grad in (False, True):
        with no_plans():
            want = run(grad)
        for _ in range(3):
            got = run(grad)
            _same_meta(got[0], want[0])
            assert got[0].tolist() == want[0].tolist()
            assert [g if g is None else g.tolist() for g in got[1:]] == \
                [w if w is None else w.tolist() for w in want[1:]]
    assert _served(aten.addmm.default)
    with _DispatchLog() as log:
        torch.addmm(torch.ones(2), torch.ones(3, 2), torch.ones(2, 2))
        torch.addmm(torch.ones(2), torch.ones(3, 2), torch.ones(2, 2), beta=2)
    assert [c for c in log.calls if c[0].startswith("addmm")] == [
        ("addmm", {}), ("addmm", {"beta": 2})]  # (PyTorch hands no defaulted keyword)


def test_modes_see_every_call_of_planned_chains_views_and_mixed_dtypes():
    a, b = torch.ones(4), torch.ones(4, dtype=torch.float64)
    g = torch.ones(4, 6)
    calls = [lambda: torch.sub(a, a.clone(), alpha=2), lambda: g.chunk(3, 1),
             lambda: g.narrow(1, 1, 2), lambda: a + b, lambda: g.t() * g.t()]
    for call in calls:
        call(), call()  # plans made and used
    with _DispatchLog() as log:
        for call in calls:
            call()
    names = [name for name, _ in log.calls]
    for expected in ("sub", "chunk", "narrow", "add", "mul"):
        assert expected in names or any(n.startswith(expected + ".") for n in names)


def test_a_tensor_passed_as_a_number_is_never_replayed_from_a_plan() -> None:
    # x.narrow(0, t, 2) with a 0-d tensor t: a plan keys t by its layout, so a replay would
    # reuse the first call's value; such signatures take the generic path every time
    x = torch.arange(8.0)
    m = torch.arange(8.0).reshape(2, 4)
    calls = {
        "narrow": (lambda v: x.narrow(0, v, 2)),
        "select": (lambda v: x.select(0, v)),
        "chunk": (lambda v: x.chunk(v + 1)[0]),
        "split": (lambda v: x.split(v + 1)[0]),
        "unsqueeze": (lambda v: x.unsqueeze(v)),
        "sum": (lambda v: m.sum(v)),
        "transpose": (lambda v: m.transpose(v, 1)),
    }
    for name, call in calls.items():
        for v in (0, 1, 0, 1, 1, 0):
            assert torch.equal(call(torch.tensor(v)), call(v)), (name, v)


# -- numbers bound into plans, and where ----------------------------------------------------

_ROWS = torch.tensor([[0.5, -1.0, 2.0], [-0.25, 3.0, 0.0]])
NUMBER_CALLS = {
    "le 0": lambda: _ROWS <= 0,
    "gt float": lambda: _ROWS > 0.1,
    "ne int64": lambda: torch.arange(6).view(2, 3) != 3,
    "eq transposed": lambda: _ROWS.t() == 2.0,
    "add int32 number": lambda: torch.arange(6, dtype=torch.int32) + 7,
    "mul float16 number": lambda: _ROWS.half() * 3,
    "where number else": lambda: torch.where(_ROWS > 0, _ROWS, 0.5),
    "where number then": lambda: torch.where(_ROWS > 0, 1, _ROWS),
    "where two tensors": lambda: torch.where(_ROWS > 0, _ROWS, -_ROWS),
    "where transposed": lambda: torch.where(_ROWS.t() > 0, _ROWS.t(), 0),
    "where broadcast": lambda: torch.where(torch.tensor([True, False, True]), _ROWS, _ROWS[:1]),
    "where int64": lambda: torch.where(torch.arange(4) > 1, torch.arange(4), -1),
    "where bool values": lambda: torch.where(_ROWS > 0, _ROWS < 1, True),
}


@pytest.mark.parametrize("name", NUMBER_CALLS)
def test_numbers_and_where_plans_match_the_generic_path(name, no_plans):
    call = NUMBER_CALLS[name]
    with no_plans():
        want = call()
    for _ in range(3):
        got = call()
        _same_meta(got, want)
        assert got.tolist() == want.tolist()


def test_where_and_compare_with_a_number_keep_plans():
    x = torch.tensor([1.0, -2.0, 3.0])
    for _ in range(2):
        torch.where(x > 0, x, 0.0)
        _ = x <= 0
    # (a comparison with a number is its Scalar overload, as in PyTorch)
    assert _served(aten.where.self) and _served(aten.le.Scalar)


def test_where_plans_record_the_graph(no_plans):
    def run():
        a = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
        out = torch.where(a > 0, a, 0.25) * 2
        out.sum().backward()
        return out, a.grad

    with no_plans():
        want = run()
    for _ in range(3):
        got = run()
        assert [g.tolist() for g in got] == [w.tolist() for w in want]
        assert type(got[0].grad_fn) is type(want[0].grad_fn)


def test_a_uint8_condition_warns_on_every_call():
    x = torch.tensor([1.0, 2.0])
    cond = torch.tensor([1, 0], dtype=torch.uint8)
    for _ in range(3):
        with pytest.warns(UserWarning, match="uint8 condition"):
            assert torch.where(cond, x, 0.0).tolist() == [1.0, 0.0]


# -- in-place arithmetic written straight into self -----------------------------------------

INPLACE = {
    "add_ tensor": lambda x, y: x.add_(y),
    "add_ broadcast": lambda x, y: x.add_(y[0]),
    "sub_ alpha": lambda x, y: x.sub_(y, alpha=2),
    "add_ float alpha": lambda x, y: x.add_(y, alpha=-0.5),
    "mul_ tensor": lambda x, y: x.mul_(y),
    "div_ tensor": lambda x, y: x.div_(y),
    "div_ trunc": lambda x, y: x.div_(y, rounding_mode="trunc"),
    "iadd": lambda x, y: x.__iadd__(y),
    "isub number": lambda x, y: x.__isub__(1.5),
    "imul number": lambda x, y: x.__imul__(3),
    "itruediv number": lambda x, y: x.__itruediv__(4.0),
    "self aliased": lambda x, y: x.mul_(x),
}


@pytest.mark.parametrize("size", [6, 6000])
@pytest.mark.parametrize("name", INPLACE)
def test_inplace_arithmetic_matches_the_out_of_place_result(name, size, monkeypatch):
    import torch._aten.arith as arith

    def run():
        x = torch.linspace(-3.0, 5.0, size).view(2, size // 2)
        y = torch.linspace(0.5, 2.5, size).view(2, size // 2)
        version = x._version
        out = INPLACE[name](x, y)
        return out, x, x._version - version

    got, x, bumps = run()
    assert got is x and bumps >= 1
    with monkeypatch.context() as m:  # the general path: compute out of place, then copy
        m.setattr(arith, "_write_into", lambda *args: None)
        want, _, want_bumps = run()
    assert got.tolist() == want.tolist() and got.dtype == want.dtype and bumps == want_bumps


def test_inplace_arithmetic_keeps_its_errors_and_graph_rules():
    leaf = torch.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        leaf.add_(1.0)
    with torch.no_grad():
        leaf.mul_(torch.tensor([1.0, 2.0, 3.0]))
    assert leaf.tolist() == [1.0, 2.0, 3.0] and leaf.requires_grad
    x = torch.ones(3)
    with pytest.raises(RuntimeError):
        x.add_(torch.ones(2))  # does not broadcast
    with pytest.raises(RuntimeError):
        x.add_(torch.ones(2, 3))  # broadcasting would grow self
    ints = torch.arange(4)
    with pytest.raises(RuntimeError):
        ints.add_(0.5)  # float into an integer tensor
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = a * 1.0
    b.add_(torch.tensor([3.0, 4.0]))  # recorded: the gradient flows through the in-place add
    b.sum().backward()
    assert a.grad.tolist() == [1.0, 1.0]


# -- clone / contiguous: one strided copy ------------------------------------------------------

CLONES = {
    "transposed contiguous": lambda x: x.transpose(1, 2).contiguous(),
    "offset slice clone": lambda x: x[1:, ::2].clone(),
    "transposed clone preserve": lambda x: x.transpose(0, 2).clone(),
    "expanded contiguous": lambda x: x[:, :1].expand(2, 3, 4).contiguous(),
    "contiguous clone": lambda x: x.clone(),
    "channels_last": lambda x: x.view(1, 2, 3, 4).contiguous(memory_format=torch.channels_last),
}


@pytest.mark.parametrize(("dtype", "grad"), [
    (torch.float32, False), (torch.float32, True), (torch.float64, True),
    (torch.int64, False), (torch.bool, False)])
@pytest.mark.parametrize("name", CLONES)
def test_clone_plans_match_the_generic_path(name, grad, dtype, no_plans):
    copy = CLONES[name]

    def run():
        x = (torch.arange(24, dtype=torch.float64) % 5).to(dtype).view(2, 3, 4)
        x.requires_grad_(grad)
        y = copy(x)
        if grad:
            (y * torch.arange(y.numel(), dtype=dtype).view(y.shape)).sum().backward()
        return x, y

    with no_plans():
        x, want = run()
        want_grad = x.grad
    for _ in range(3):
        x, got = run()
        _same_meta(got, want)
        assert got.tolist() == want.tolist()
        assert got.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()
        assert type(got.grad_fn) is type(want.grad_fn)
        if grad:
            assert x.grad.tolist() == want_grad.tolist()
    if name != "contiguous clone" and dtype in (torch.float32, torch.float64):
        assert _served(aten.clone.default)  # a plan replays the copy


def test_clone_plans_copy_the_current_values():
    x = torch.arange(6.0).view(2, 3)
    for i in range(3):
        x.add_(1)
        y = x.t().contiguous()
        assert y.tolist() == [[1.0 + i, 4.0 + i], [2.0 + i, 5.0 + i], [3.0 + i, 6.0 + i]]
        y.add_(10)  # a new tensor: the source keeps its values
        assert x[0, 0].item() == 1.0 + i


def test_modes_see_every_planned_clone():
    seen = []

    class Log(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(func)
            return func(*args, **(kwargs or {}))

    x = torch.arange(6.0).view(2, 3)
    for _ in range(3):
        x.t().contiguous()
    with Log():
        for _ in range(2):
            x.t().contiguous()
    assert seen.count(aten.clone.default) == 2


# -- decompositions: a composite-implicit operator's call goes straight to its kernel ----------

def test_a_decomposition_serves_plain_calls_until_a_kernel_is_registered():
    ns = "plaitplandecomp"
    lib = torch.library.Library(ns, "DEF")
    lib.define("twice(Tensor x) -> Tensor")
    lib.impl("twice", lambda x: x + x, "CompositeImplicitAutograd")
    op = getattr(torch.ops, ns).twice.default
    x = torch.arange(3.0, requires_grad=True)
    for _ in range(3):
        assert op(x).tolist() == [0.0, 2.0, 4.0]
    assert op._decomposes is not None  # the plain call skips the key computation
    op(x).sum().backward()  # differentiated through the decomposition
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
    lib.impl("twice", lambda x: x * 3, "CPU")  # a backend kernel now serves the CPU
    assert op._decomposes is None
    for _ in range(2):
        assert op(x.detach()).tolist() == [0.0, 3.0, 6.0]
    assert op(torch.ones(2, device="meta")).shape == (2,)  # the composite serves meta still


def test_modes_and_grad_see_a_decomposed_layer_norm(no_plans):
    x = torch.arange(12.0).view(3, 4).requires_grad_()
    w = torch.ones(4, requires_grad=True)
    for _ in range(3):
        F.layer_norm(x, (4,), w)
    assert aten.layer_norm.default._decomposes is not None
    with _DispatchLog() as log:
        F.layer_norm(x, (4,), w)
    names = [name for name, _ in log.calls]
    assert "native_layer_norm" in names or any(n.startswith("native_layer_norm")
                                               for n in names)
    got = F.layer_norm(x, (4,), w)
    got.sum().backward()
    grad = w.grad.clone()
    w.grad = None
    with no_plans():
        F.layer_norm(x, (4,), w).sum().backward()
    assert grad.tolist() == w.grad.tolist()
    with torch.no_grad():
        for _ in range(2):
            plain = F.layer_norm(x, (4,), w)
            assert not plain.requires_grad
            assert plain.tolist() == got.tolist()
    assert aten.layer_norm.default._plans is None  # no key for a call the decomposition serves


# -- views with grad: the backward of a shape-only view is made once per plan -----------------

GRAD_VIEWS = {
    "transpose": lambda x: x.transpose(0, 2),
    "permute": lambda x: x.permute(2, 0, 1),
    "t of a view": lambda x: x.view(6, 4).t(),
    "expand": lambda x: x[:, :1].expand(2, 5, 4),
    "squeeze unsqueeze": lambda x: x.unsqueeze(1).squeeze(1),
    "select": lambda x: x.select(1, 2),
}


@pytest.mark.parametrize("name", GRAD_VIEWS)
def test_view_plans_with_grad_match_the_generic_path(name, no_plans):
    view = GRAD_VIEWS[name]

    def run(scale):
        x = (torch.arange(24.0) * scale).view(2, 3, 4).requires_grad_()
        y = view(x)
        weight = torch.arange(float(y.numel())).view(y.shape)
        (y * weight).sum().backward()
        return x, y

    with no_plans():
        want = [run(s) for s in (1.0, 2.0)]
    for _ in range(2):
        for (x_want, y_want), scale in zip(want, (1.0, 2.0)):
            x, y = run(scale)  # the plan's backward serves each new source
            _same_meta(y, y_want)
            assert y.tolist() == y_want.tolist()
            assert y.grad_fn.name() == y_want.grad_fn.name()
            assert y._base is (x._base if x._base is not None else x)
            assert x.grad.tolist() == x_want.grad.tolist()
            assert y.is_contiguous() == y_want.is_contiguous()


def test_is_contiguous_of_planned_views_follows_their_strides():
    x = torch.arange(24.0).view(2, 3, 4)
    for _ in range(3):
        assert not x.transpose(0, 1).is_contiguous()
        assert x.transpose(0, 1).transpose(0, 1).is_contiguous()
        assert x[:, :1].is_contiguous() is False
        assert x[:1].is_contiguous()
        assert x.unsqueeze(0).expand(3, 2, 3, 4)[:1].is_contiguous()  # (size-1 dims skip)
        assert x[:, :0].is_contiguous()  # empty
    size = torch.Size([2, 3, 4])
    assert list(reversed(size)) == [4, 3, 2] and size[::-1] == torch.Size([4, 3, 2])


def test_a_mode_sees_embedding_without_its_schema_defaults():
    # the argument lists PyTorch 2.13's dispatcher hands a TorchDispatchMode for these calls:
    # (T, T), (T, T, 1), (T, T, -1, True)
    seen = []

    class Log(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append((func, [a if not isinstance(a, torch.Tensor) else "T" for a in args],
                         kwargs or {}))
            return func(*args, **(kwargs or {}))

    idx = torch.tensor([0, 2, 1])
    weight = torch.arange(8.0).view(4, 2).requires_grad_()
    with Log():
        plain = F.embedding(idx, weight)
        padded = F.embedding(idx, weight, padding_idx=1)
        scaled = F.embedding(idx, weight, scale_grad_by_freq=True)
    op = aten.embedding.default
    assert seen == [(op, ["T", "T"], {}), (op, ["T", "T", 1], {}),
                    (op, ["T", "T", -1, True], {})]
    assert plain.tolist() == [[0.0, 1.0], [4.0, 5.0], [2.0, 3.0]]
    (plain.sum() + padded.sum() + 2 * scaled.sum()).backward()
    # each row occurs once; row 1 is padding in `padded`
    assert weight.grad.tolist() == [[4.0, 4.0], [3.0, 3.0], [4.0, 4.0], [0.0, 0.0]]


def test_functional_layer_norm_keeps_its_argument_checks():
    x = torch.arange(8.0).view(2, 4)
    with pytest.raises(TypeError, match="input"):
        F.layer_norm([[1.0, 2.0]], (2,))
    with pytest.raises(TypeError, match="weight"):
        F.layer_norm(x, (4,), weight=[1.0] * 4)
    # an int eps and a Parameter weight take the checked path: the same values
    weight = torch.nn.Parameter(torch.full((4,), 2.0))
    want = F.layer_norm(x, (4,), weight.detach(), eps=1.0)
    assert F.layer_norm(x, (4,), weight, eps=1).tolist() == want.tolist()
    mean, var = 1.5, 1.25  # of each row of [0, 1, 2, 3] (+ 4 in the second)
    assert want[0].tolist() == pytest.approx([2 * (v - mean) / (var + 1.0) ** 0.5
                                              for v in (0.0, 1.0, 2.0, 3.0)])


def test_reshape_of_a_copy_gives_a_plain_row_major_tensor(no_plans):
    x = torch.arange(24.0).view(2, 3, 4).requires_grad_()  # (a view of the arange)
    for plans in (False, True):
        y = x.transpose(1, 2)
        if plans:
            got = y.reshape(2, 12)
        else:
            with no_plans():
                got = y.reshape(2, 12)
        assert got.stride() == (12, 1) and got._base is None
        assert got.tolist() == [[0.0, 4.0, 8.0, 1.0, 5.0, 9.0, 2.0, 6.0, 10.0, 3.0, 7.0, 11.0],
                                [12.0, 16.0, 20.0, 13.0, 17.0, 21.0, 14.0, 18.0, 22.0, 15.0,
                                 19.0, 23.0]]
        assert got.grad_fn.name() == "UnsafeViewBackward0"
        got.sum().backward()
        assert x.grad.tolist() == torch.ones(2, 3, 4).tolist()
        x.grad = None
        # a row-major input reshapes as a view with the new shape's row-major strides
        fresh = x * 1
        view = fresh.reshape(4, 6)
        assert view.stride() == (6, 1) and view._base is fresh
        assert view.tolist() == torch.arange(24.0).view(4, 6).tolist()
    import numpy as np

    assert x.view(np.int64(4), 6).shape == (4, 6)  # sizes that are not ints still index
    with pytest.raises(TypeError, match="bool"):
        x.view(True, 24)


def test_a_mode_sees_gelu_and_clamp_without_their_schema_defaults():
    # what PyTorch 2.13's dispatcher hands a TorchDispatchMode for these calls
    seen = []

    class Log(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append((func, [a if not isinstance(a, torch.Tensor) else "T" for a in args],
                         kwargs or {}))
            return func(*args, **(kwargs or {}))

    x = torch.tensor([-2.0, -0.5, 0.5, 2.0])
    with Log():
        plain, tanh = F.gelu(x), F.gelu(x, approximate="tanh")
        low, both = torch.clamp(x, min=0.0), torch.clamp(x, -1.0, 1.0)
    assert seen == [(aten.gelu.default, ["T"], {}),
                    (aten.gelu.default, ["T"], {"approximate": "tanh"}),
                    (aten.clamp.default, ["T", 0.0], {}),
                    (aten.clamp.default, ["T", -1.0, 1.0], {})]
    assert low.tolist() == [0.0, 0.0, 0.5, 2.0] and both.tolist() == [-1.0, -0.5, 0.5, 1.0]
    assert plain[3].item() == pytest.approx(2.0 * 0.9772498680518208)  # 2 * Phi(2)
    assert tanh[3].item() == pytest.approx(1.9545977, abs=1e-6)  # the tanh approximation


def test_positional_dtype_arguments_key_plans_by_value():
    # a ScalarType argument (softmax's backward, view.dtype) is part of the signature: calls
    # that differ only in it never share a plan, and repeated calls give the first's result
    import numpy as np

    x = torch.arange(6, dtype=torch.float32)
    bits = np.arange(6, dtype=np.float32).view(np.int32).tolist()
    for _ in range(3):
        assert x.view(torch.int32).tolist() == bits
        assert x.view(torch.float32).tolist() == x.tolist()
        assert x[2:].view(torch.int32).tolist() == bits[2:]
    y_np = np.array([[0.1, 0.7, 0.2], [0.3, 0.3, 0.4]], np.float32)
    g_np = np.array([[1.0, 0.0, 2.0], [0.5, -1.0, 0.0]], np.float32)
    expected = y_np * (g_np - (g_np * y_np).sum(-1, keepdims=True))  # y * (g - <g, y>)
    y, g = torch.tensor(y_np), torch.tensor(g_np)
    op = torch.ops.aten._softmax_backward_data
    for _ in range(3):
        got = op(g, y, -1, torch.float32)
        np.testing.assert_allclose(got.tolist(), expected, rtol=1e-6)
        half = op(g.half(), y.half(), -1, torch.float16)
        assert half.dtype == torch.float16
        np.testing.assert_allclose(half.float().tolist(), expected, atol=2e-3)
