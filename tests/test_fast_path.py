"""The eager hot path's tiers (torch._core.fast; docs/architecture.md, "The op path").

Every tier must give exactly what the generic dispatcher path gives (dtype, shape, strides,
values bit for bit, autograd graph and gradients), and step aside whenever the generic path has
something to do: grad mode changes, dispatch modes, inference mode, views, other dtypes,
subclasses, kernels a library registered. The generic path is reached by calling the aten
operator itself (``torch.ops.aten.add.Tensor``), which the tiers never do.
"""

from __future__ import annotations

import math
import operator
import os
import subprocess
import sys
import warnings
from functools import partial

import numpy as np
import pytest

import torch
from torch._aten import (
    arith as _arith,
    elementwise as _elementwise,
    linalg as _linalg_ops,
    reductions as _reductions,
)
from torch._core import dispatch as _dispatch, plan as _plan

aten = torch.ops.aten
FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
DTYPES = [*FLOATS, torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool]
SHAPES = [(), (4,), (3, 5), (2, 0, 3), (70000,)]
SPECIAL = [0.0, -0.0, 1.5, -2.25, math.inf, -math.inf, math.nan, 1e-40, 3e38, -7.0]

# operator, the generic path (the aten op with the arguments the operator passes)
BINARY = {
    "add": (operator.add, lambda a, b: aten.add.Tensor(a, b)),
    "sub": (operator.sub, lambda a, b: aten.sub.Tensor(a, b)),
    "mul": (operator.mul, lambda a, b: aten.mul.Tensor(a, b)),
    "div": (operator.truediv, lambda a, b: aten.div.Tensor_mode(a, b)),
}


def values(dtype, shape, seed, special=False):
    rng = np.random.default_rng(seed)
    if dtype is torch.bool:
        return torch.tensor(rng.integers(0, 2, shape).astype(bool).tolist(), dtype=dtype)
    if dtype.is_floating_point:
        data = rng.normal(0, 10, shape)
        if special and data.size:
            flat = data.reshape(-1)
            flat[: len(SPECIAL)] = SPECIAL[: flat.size]
        return torch.tensor(data.tolist(), dtype=dtype)
    return torch.tensor(rng.integers(1, 100, shape).tolist(), dtype=dtype)


def same(got, want):
    assert got.dtype is want.dtype
    assert got.shape == want.shape and got.stride() == want.stride()
    assert got.device == want.device
    assert got.requires_grad == want.requires_grad
    g = got.detach().to(torch.float64) if got.dtype in (torch.float16, torch.bfloat16) else got
    w = want.detach().to(torch.float64) if want.dtype in (torch.float16, torch.bfloat16) else want
    np.testing.assert_array_equal(g.detach().numpy(), w.detach().numpy())


def outcome(fn):
    """The result of ``fn()``, or the type and message of the error it raised."""
    try:
        return fn()
    except Exception as exc:
        return (type(exc), str(exc))


def same_outcome(got, want):
    if isinstance(want, tuple):
        assert got == want
    else:
        same(got, want)


@pytest.fixture
def generic_forbidden(monkeypatch):
    """Make the generic paths fail, to prove a call took a tier."""

    def boom(*args, **kwargs):
        raise AssertionError("generic path taken")

    monkeypatch.setattr(_arith, "_binary", boom)
    monkeypatch.setattr(_elementwise, "run", boom)
    monkeypatch.setattr(_reductions, "_reduce", boom)


# -- tier 1: two tensors of one layout ----------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_same_layout_matches_generic_path(name, dtype, shape):
    a, b = values(dtype, shape, 0, special=True), values(dtype, shape, 1)
    # fresh tensors of one layout
    assert a._interned_layout is not None and a._interned_layout is b._interned_layout
    fast, generic = BINARY[name]
    same_outcome(outcome(lambda: fast(a, b)), outcome(lambda: generic(a, b)))


def test_integer_overflow_wraps_as_in_the_generic_path():
    a = torch.tensor([127, -128, 100], dtype=torch.int8)
    b = torch.tensor([1, -1, 100], dtype=torch.int8)
    for name in ("add", "sub", "mul"):
        fast, generic = BINARY[name]
        same(fast(a, b), generic(a, b))


# Whether a call takes a tier depends on process-wide state earlier tests of a whole run may
# leave (interned layouts' cached decisions, registered kernels); these two tests of the tiers
# themselves run in a fresh interpreter (test_tiers_in_a_fresh_interpreter).
fresh_interpreter = pytest.mark.skipif(
    os.environ.get("PLAIT_FAST_PATH_FRESH") != "1",
    reason="runs in a fresh interpreter: test_tiers_in_a_fresh_interpreter")


def test_tiers_in_a_fresh_interpreter():
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__, "-k",
         "test_tiers_are_taken or test_tiers_see_new_primitive_kernels_and_their_removal"],
        env={**os.environ, "PLAIT_FAST_PATH_FRESH": "1"}, capture_output=True, text=True,
        cwd=os.path.dirname(__file__))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "2 passed" in proc.stdout, proc.stdout[-2000:]


@fresh_interpreter
def test_tiers_are_taken(generic_forbidden):
    a, b = torch.ones(3), torch.full((3,), 2.0)
    assert (a + b).tolist() == [3.0, 3.0, 3.0]
    assert (a - b).tolist() == [-1.0, -1.0, -1.0]
    assert (a * b).tolist() == [2.0, 2.0, 2.0]
    assert (a / b).tolist() == [0.5, 0.5, 0.5]
    assert (a + 1.0).tolist() == [2.0, 2.0, 2.0]
    assert (3 - b).tolist() == [1.0, 1.0, 1.0]
    assert (2.0 * b).tolist() == [4.0, 4.0, 4.0]
    assert (torch.ones(2, 3) + a).tolist() == [[2.0] * 3] * 2
    assert (-b).tolist() == [-2.0, -2.0, -2.0]
    assert b.exp().tolist() == torch.exp(b).tolist()
    assert b.sum().item() == 6.0
    m = torch.full((2, 3), 2.0)
    assert m.sum(-1).tolist() == [6.0, 6.0] and torch.sum(m, 1).tolist() == [6.0, 6.0]
    assert m.amax(-1).tolist() == [2.0, 2.0] and torch.amin(m, (1,), True).shape == (2, 1)
    # fresh tensors of the factories and row-major numpy arrays have a layout key too
    assert (torch.randn(3) + torch.rand(3)).shape == (3,)
    assert (torch.from_numpy(np.ones(3, np.float32)) + b).tolist() == [3.0, 3.0, 3.0]
    ga = torch.ones(3, requires_grad=True)
    assert (ga * b).grad_fn.name() == "MulBackward0"


# -- tier 2: a Python number --------------------------------------------------------------

NUMBERS = [2.0, -0.5, 3, -7, 0, 1e-3, math.inf, math.nan, 2**53, 1e300]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("number", NUMBERS, ids=str)
def test_number_operand_matches_generic_path(name, dtype, number):
    a = values(dtype, (5,), 2, special=True)
    fast, generic = BINARY[name]
    same_outcome(outcome(lambda: fast(a, number)), outcome(lambda: generic(a, number)))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64], ids=str)
@pytest.mark.parametrize("number", [2.0, -3, 0.1], ids=str)
def test_reflected_number_operand_matches_generic_path(dtype, number):
    a = values(dtype, (6,), 3, special=True)
    same_outcome(outcome(lambda: number - a), outcome(lambda: aten.rsub.Scalar(a, number)))
    same_outcome(outcome(lambda: number + a), outcome(lambda: aten.add.Tensor(a, number)))
    same_outcome(outcome(lambda: number * a), outcome(lambda: aten.mul.Tensor(a, number)))
    # number / t is reciprocal(t) * number in PyTorch, and never takes a tier
    same(number / a, torch.reciprocal(a) * number)


def test_huge_integer_and_bool_numbers_take_the_generic_path():
    a = torch.tensor([1.0, 2.0])
    same((a + 2**80), aten.add.Tensor(a, 2**80))
    same((a + True), aten.add.Tensor(a, True))


# -- tier 3: broadcast between two layouts of one dtype ----------------------------------

PAIRS = [((2, 4), (4,)), ((4,), (2, 4)), ((3, 1), (1, 4)), ((2, 3, 4), ()), ((), (5,)),
         ((0, 3), (3,)), ((2, 1, 3), (4, 1)), ((1,), (6,))]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int32, torch.float16],
                         ids=str)
@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize(("sa", "sb"), PAIRS, ids=str)
def test_broadcast_matches_generic_path(name, dtype, sa, sb):
    a, b = values(dtype, sa, 4), values(dtype, sb, 5)
    fast, generic = BINARY[name]
    for _ in range(2):  # the plan is made by the first call and reused by the second
        same_outcome(outcome(lambda: fast(a, b)), outcome(lambda: generic(a, b)))


def test_incompatible_shapes_raise_the_generic_error():
    a, b = torch.ones(2, 3), torch.ones(4)
    with pytest.raises(RuntimeError, match="must match the size"):
        a + b


def test_mixed_dtypes_take_the_generic_path():
    a = torch.ones(2, 3)
    b = torch.ones(3, dtype=torch.float64)
    same(a + b, aten.add.Tensor(a, b))


# -- tier 4: unary ops and the full sum ---------------------------------------------------

UNARY = ["neg", "abs", "exp", "log", "sqrt", "tanh", "sin", "cos", "floor", "sign", "sigmoid"]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", [n for n in UNARY if hasattr(torch, n)])
@pytest.mark.parametrize("shape", [(), (7,), (2, 3)], ids=str)
def test_unary_matches_generic_path(name, dtype, shape):
    a = values(dtype, shape, 6, special=True)
    op = getattr(torch.ops.aten, name)
    same_outcome(outcome(lambda: getattr(torch, name)(a)), outcome(lambda: op(a)))
    same_outcome(outcome(lambda: getattr(a, name)()), outcome(lambda: op(a)))


def test_unary_with_out_takes_the_generic_path():
    a, out = torch.tensor([1.0, 4.0]), torch.empty(2)
    assert torch.sqrt(a, out=out) is out and out.tolist() == [1.0, 2.0]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(), (7,), (3, 5), (0,), (200, 300)], ids=str)
def test_sum_matches_generic_path(dtype, shape):
    a = values(dtype, shape, 7)
    want = aten.sum.dim_IntList(a, None, False)
    same(a.sum(), want)
    same(torch.sum(a), want)


LAST_DIM = {
    "sum": lambda a, dim, keepdim: aten.sum.dim_IntList(a, [dim], keepdim),
    "amax": lambda a, dim, keepdim: aten.amax(a, [dim], keepdim),
    "amin": lambda a, dim, keepdim: aten.amin(a, [dim], keepdim),
}


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(7,), (3, 5), (2, 3, 70), (4, 0), (0, 3), (300, 1000)],
                         ids=str)
@pytest.mark.parametrize("name", LAST_DIM)
@pytest.mark.parametrize("keepdim", [False, True])
def test_last_dim_reductions_match_generic_path(dtype, shape, name, keepdim):
    a = values(dtype, shape, 5, special=True)
    for dim in (-1, len(shape) - 1, (-1,), [len(shape) - 1]):
        plain = dim if isinstance(dim, int) else dim[0]
        want = outcome(partial(LAST_DIM[name], a, plain, keepdim))
        same_outcome(outcome(partial(getattr(a, name), dim, keepdim)), want)
        same_outcome(outcome(partial(getattr(torch, name), a, dim, keepdim=keepdim)), want)


def test_last_dim_tier_steps_aside_for_other_dims_and_views():
    a = values(torch.float32, (4, 6), 3)
    same(a.sum(0), aten.sum.dim_IntList(a, [0], False))
    t = a.t()
    same(t.amax(-1), aten.amax(t, [-1], False))
    same(a.sum(-1, dtype=torch.float64), aten.sum.dim_IntList(a, [-1], False,
                                                              dtype=torch.float64))
    g = a.clone().requires_grad_()
    assert g.sum(-1).grad_fn is not None and g.amax(-1).grad_fn is not None


# -- tier 5: grad ------------------------------------------------------------------------


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("which", ["both", "left", "right"])
def test_grad_tier_records_the_generic_graph(name, which):
    def leaves():
        a = values(torch.float64, (3, 4), 8).requires_grad_(which in ("both", "left"))
        b = (values(torch.float64, (3, 4), 9) + 20).requires_grad_(which in ("both", "right"))
        return a, b

    fast, generic = BINARY[name]
    fa, fb = leaves()
    ga, gb = leaves()
    got, want = fast(fa, fb), generic(ga, gb)
    same(got, want)
    assert type(got.grad_fn) is type(want.grad_fn)
    assert [type(n) for n, _ in got.grad_fn.next_functions] == \
        [type(n) for n, _ in want.grad_fn.next_functions]
    seed = values(torch.float64, (3, 4), 10)
    (got * seed).sum().backward()
    (want * seed).sum().backward()
    for f, g in ((fa, ga), (fb, gb)):
        if g.grad is None:
            assert f.grad is None
        else:
            same(f.grad, g.grad)


def test_grad_tier_double_backward():
    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    y = x * x  # tier 5
    (g,) = torch.autograd.grad(y.sum(), x, create_graph=True)
    (gg,) = torch.autograd.grad(g.sum(), x)
    assert g.tolist() == [2.0, 4.0, 6.0] and gg.tolist() == [2.0, 2.0, 2.0]


def test_grad_tier_keeps_the_in_place_check_of_saved_inputs():
    a = torch.ones(3, requires_grad=True)
    b = torch.ones(3) * 2
    b.requires_grad_(True)
    c = a.clone()
    y = c * b  # saves c and b
    c.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    # add saves nothing, in the tier as in the generic path: no error
    c2 = a.clone()
    z = c2 + b
    c2.add_(1)
    z.sum().backward()


def test_grad_tier_steps_aside_under_no_grad():
    a = torch.ones(3, requires_grad=True)
    with torch.no_grad():
        y = a * a
    assert y.grad_fn is None and not y.requires_grad
    with torch.enable_grad():
        assert (a * a).requires_grad


# -- stepping aside ----------------------------------------------------------------------


@pytest.mark.parametrize("case", ["view", "dtype", "subclass", "bool", "complex"])
def test_tiers_step_aside(case, generic_forbidden):
    a = torch.ones(4)
    other = {
        "view": lambda: torch.ones(8)[::2],
        "dtype": lambda: torch.ones(4, dtype=torch.float64),
        "subclass": lambda: None,
        "bool": lambda: None,
        "complex": lambda: 1j,
    }[case]()
    if case == "subclass":
        class Sub(torch.Tensor):
            pass

        a = Sub([1.0, 1.0, 1.0, 1.0])
        other = torch.ones(4)
    if case == "bool":
        a = torch.ones(4, dtype=torch.bool)
        other = torch.ones(4, dtype=torch.bool)
    with pytest.raises(AssertionError, match="generic path taken"):
        a + other


def test_tiers_respect_dispatch_modes():
    seen = []

    class Recorder:
        def __torch_dispatch__(self, func, types, args, kwargs):
            seen.append(func.qualname)
            return func(*args, **kwargs)

    a, b = torch.ones(2), torch.ones(2)
    _dispatch.push_mode(Recorder())
    try:
        a + b
        a + 1.0
        torch.ones(2, 2) - a
        a.exp()
        a.sum()
    finally:
        _dispatch.pop_mode()
    assert seen[0] == "aten::add.Tensor" and seen[-1] == "aten::sum"
    assert "aten::exp" in seen and "aten::sub.Tensor" in seen


def test_tiers_respect_inference_mode():
    a, b = torch.ones(2), torch.ones(2)
    with torch.inference_mode():
        c = a + b
        d = a.exp()
    assert c.is_inference() and d.is_inference()


@fresh_interpreter
def test_tiers_see_new_primitive_kernels_and_their_removal():
    a, b = torch.ones(3), torch.ones(3)
    lib = torch.library.Library("prims", "IMPL", "CPU")
    lib.impl("add", lambda out, x, y: out.fill_(42.0))
    try:
        assert (a + b).tolist() == [42.0, 42.0, 42.0]
        assert (a + 1.0).tolist() == [42.0, 42.0, 42.0]
        assert (torch.ones(2, 3) + a).tolist() == [[42.0] * 3] * 2
    finally:
        lib._destroy()
    assert (a + b).tolist() == [2.0, 2.0, 2.0]
    assert (a + 1.0).tolist() == [2.0, 2.0, 2.0]


def test_tiers_see_new_aten_kernels():
    a, b = torch.ones(3), torch.ones(3)
    lib = torch.library.Library("aten", "IMPL", "CPU")
    lib.impl("mul.Tensor", lambda x, y: torch.full((3,), 7.0))
    lib.impl("exp", lambda x: torch.full((3,), 9.0))
    try:
        assert (a * b).tolist() == [7.0, 7.0, 7.0]
        assert a.exp().tolist() == [9.0, 9.0, 9.0]
    finally:
        lib._destroy()
    assert (a * b).tolist() == [1.0, 1.0, 1.0]


def test_tiers_see_new_kernels_after_their_layout_was_evicted():
    # the table of interned layouts is bounded: a tensor may outlive its layout's entry, and a
    # kernel registered afterwards must still be seen for it
    a, b = torch.ones(3), torch.ones(3)
    assert (a * b).tolist() == [1.0, 1.0, 1.0]  # the tier caches its decision on the layout
    for n in range(4200):  # more shapes than the table holds
        torch.empty(n + 100_000, dtype=torch.int8)
    lib = torch.library.Library("aten", "IMPL", "CPU")
    lib.impl("mul.Tensor", lambda x, y: torch.full((3,), 7.0))
    try:
        assert (a * b).tolist() == [7.0, 7.0, 7.0]
    finally:
        lib._destroy()
    assert (a * b).tolist() == [1.0, 1.0, 1.0]


def test_grad_tier_sees_a_new_autograd_kernel():
    a = torch.ones(3, requires_grad=True)
    lib = torch.library.Library("aten", "IMPL", "Autograd")
    lib.impl("sub.Tensor", lambda x, y, alpha=1: torch.full((3,), 5.0))
    try:
        assert (a - a).tolist() == [5.0, 5.0, 5.0]
    finally:
        lib._destroy()
    assert (a - a).tolist() == [0.0, 0.0, 0.0]


def test_tier_on_a_plugin_device():
    from plait_toy_device import _runtime

    a = torch.tensor([1.0, 2.0], device="toy")
    b = torch.tensor([3.0, 4.0], device="toy")
    before = _runtime.CALLS["add"]
    assert (a + b).tolist() == [4.0, 6.0]
    assert _runtime.CALLS["add"] == before + 1  # no fast path there: the generic path ran
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # mul runs through the CPU fallback
        assert (a * b).tolist() == [3.0, 8.0]


def test_storage_of_a_tier_result_is_usable():
    a = torch.arange(6.0)
    c = a + a
    assert c.numpy().tolist() == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
    c.numpy()[0] = 5.0  # numpy shares the memory
    assert c[0].item() == 5.0
    assert c.untyped_storage().nbytes() == 24
    assert torch.from_numpy(c.numpy()).data_ptr() == c.data_ptr()


def test_leaf_accumulators_outlive_graphs_and_hooks_keep_dropped_leaves():
    x = torch.ones(3, requires_grad=True)
    first = (x * x).grad_fn.next_functions[0][0]
    second = (x + x).grad_fn.next_functions[0][0]
    assert first is second and first.variable is x  # one accumulator per leaf
    seen = []

    def make():
        leaf = torch.full((2,), 3.0, requires_grad=True)
        leaf.register_hook(lambda g: seen.append(g.tolist()))
        return (leaf * leaf).sum()

    make().backward()  # the leaf is gone by now, but its hook must still run
    assert seen == [[6.0, 6.0]]
    loss = (torch.ones(2, requires_grad=True) * 2).sum()
    loss.backward()  # a dropped leaf without hooks: nothing to observe, no error


class _TwoOutputs(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, g0, g1):
        return g0 * 2 + g1 * 3


def test_grad_tier_edges_name_the_output_of_a_multi_output_node():
    # The tier reads a single-output node's output number without the tensor's __dict__; an
    # output of a node with several outputs must still give its own number, as generic does.
    x = values(torch.float64, (3, 4), 11).requires_grad_()
    first, second = _TwoOutputs.apply(x)
    view = x.t().t()  # a view node's output (ViewBackward)
    for a, b in ((second, first), (first, second), (second, second), (view, second)):
        got, want = a + b, aten.add.Tensor(a, b)
        same(got, want)
        assert got.grad_fn.next_functions == want.grad_fn.next_functions
    ((second + first) * values(torch.float64, (3, 4), 12)).sum().backward()
    grad = x.grad.clone()
    x.grad = None
    (aten.add.Tensor(second, first) * values(torch.float64, (3, 4), 12)).sum().backward()
    same(grad, x.grad)


def test_ops_without_a_node_pick_up_a_later_autograd_kernel():
    # The dispatcher remembers that an op differentiates through its decomposition until the
    # next registration: a kernel registered afterwards is used.
    op = aten.cross_entropy_loss.default
    x = values(torch.float64, (4, 3), 13).requires_grad_()
    t = torch.tensor([0, 2, 1, 1])
    op(x, t)  # no Autograd kernel: through the decomposition (and remembered)
    calls = []

    def kernel(*args, **kwargs):
        calls.append(1)
        with torch.no_grad():
            return _dispatch.redispatch_below_autograd(op, *args, **kwargs)

    op.register(_dispatch.AUTOGRAD, kernel)
    try:
        op(x, t)
        assert calls == [1]
    finally:
        op.unregister(_dispatch.AUTOGRAD, kernel)
    op(x, t)
    assert calls == [1]


# -- the dispatcher's plan cache (torch._core.plan) ---------------------------------------------
#
# A plan replays a signature's first (generic) call. Each case runs with plans off (the
# generic path), then three times with plans on (the first call records, the others replay),
# and every result must be the generic one: values, dtype, shape, strides, and the graph.


def _strided(dtype):
    return values(dtype, (4, 3), 21).t()  # (3, 4) with strides (1, 3)


PLAN_CASES = {
    "sub": lambda a, b: torch.sub(a, b),
    "sub alpha": lambda a, b: torch.sub(a, b, alpha=2),
    "rsub number": lambda a, b: torch.rsub(a, 3),
    "mul number": lambda a, b: torch.mul(a, 2.5),
    "mul int number": lambda a, b: torch.mul(a, -3),
    "div": lambda a, b: torch.div(a, b),
    "div floor": lambda a, b: torch.div(a, b, rounding_mode="floor"),
    "div trunc": lambda a, b: torch.div(a, b, rounding_mode="trunc"),
    "maximum": lambda a, b: torch.maximum(a, b),
    "atan2": lambda a, b: torch.atan2(a, b),
    "pow": lambda a, b: torch.pow(a, b),
    "eq": lambda a, b: torch.eq(a, b),
    "relu": lambda a, b: torch.relu(a),
    "exp": lambda a, b: torch.exp(a),
    "tanh": lambda a, b: torch.ops.aten.tanh(a),
    "neg": lambda a, b: torch.ops.aten.neg(a),
    "transposed add": lambda a, b: a.t() + b.t(),
    "transposed and contiguous": lambda a, b: a.t().contiguous() * b.t(),
    "broadcast": lambda a, b: a[:, :1] - b[:1],
    "mixed dtypes": lambda a, b: a + b.double(),
    "strided unary": lambda a, b: torch.exp(a.t()),
    "int and float number": lambda a, b: torch.mul(a.to(torch.int32), 2.5),
    "sum dim": lambda a, b: a.sum(0),
    "sum dims keepdim": lambda a, b: torch.sum(a, (0, 1), keepdim=True),
    "sum transposed": lambda a, b: a.t().sum(1),
    "amax dim": lambda a, b: torch.amax(a, 0),
    "amin keepdim": lambda a, b: torch.amin(a, 1, True),
    "prod": lambda a, b: torch.prod(a, 1),
    "any": lambda a, b: torch.any(a, 0),
    "mean": lambda a, b: a.mean(0),
    "mm": lambda a, b: torch.mm(a, b.t()),
    "matmul of transposed": lambda a, b: a.t() @ b,
    "bmm": lambda a, b: torch.bmm(a.view(3, 2, 2), b.view(3, 2, 2)),
    "view": lambda a, b: a.view(2, 6) * 1,
    "reshape of transposed": lambda a, b: a.t().reshape(-1) * 1,
    "views": lambda a, b: a.t()[1:3].unsqueeze(0).expand(2, 2, 3).permute(2, 0, 1) * 1,
    "select": lambda a, b: a[1] * b[2],
}
PLAN_DTYPES = [torch.float32, torch.float64, torch.float16, torch.int64, torch.int32,
               torch.bool]


@pytest.mark.parametrize("dtype", PLAN_DTYPES, ids=str)
@pytest.mark.parametrize("name", PLAN_CASES)
def test_plans_match_the_generic_path(name, dtype, no_plans):
    fn = PLAN_CASES[name]
    a = values(dtype, (3, 4), 11, special=True)
    b = values(dtype, (3, 4), 12)
    with no_plans():
        want = outcome(lambda: fn(a, b))
    for _ in range(3):
        same_outcome(outcome(lambda: fn(a, b)), want)


GRAD_CASES = ["sub", "sub alpha", "rsub number", "mul number", "div", "maximum", "atan2",
              "pow", "relu", "exp", "tanh", "neg", "transposed add",
              "transposed and contiguous", "broadcast", "mixed dtypes", "sum dim",
              "sum dims keepdim", "sum transposed", "amax dim", "prod", "mean", "mm",
              "matmul of transposed", "bmm", "view", "reshape of transposed", "views",
              "select"]


@pytest.mark.parametrize("which", ["both", "left", "right"])
@pytest.mark.parametrize("name", GRAD_CASES)
def test_plans_record_the_generic_graph(name, which, no_plans):
    fn = PLAN_CASES[name]

    def leaves():
        a = (values(torch.float64, (3, 4), 13) + 30).requires_grad_(which != "right")
        b = (values(torch.float64, (3, 4), 14) + 40).requires_grad_(which != "left")
        return a, b

    ga, gb = leaves()
    with no_plans():
        want = fn(ga, gb)
        seed = values(torch.float64, tuple(want.shape), 15)
        if want.requires_grad:  # (a unary op of the input that does not)
            (want * seed).sum().backward()
    for _ in range(3):
        fa, fb = leaves()
        got = fn(fa, fb)
        same(got, want)
        assert type(got.grad_fn) is type(want.grad_fn)
        if not want.requires_grad:
            continue
        assert [(type(n), nr) for n, nr in got.grad_fn.next_functions] == \
            [(type(n), nr) for n, nr in want.grad_fn.next_functions]
        (got * seed).sum().backward()
        for f, g in ((fa, ga), (fb, gb)):
            if g.grad is None:
                assert f.grad is None
            else:
                same(f.grad, g.grad)


def _served(op):
    """The signatures of ``op`` whose plan replays the result (not left to the generic path,
    nor to a plan that runs the kernel again)."""
    return [key for key, plan in (op._plans or {}).items()
            if plan is not False and plan[3] != _plan.KERNEL]


@pytest.mark.parametrize(("call", "op"), [
    (lambda a, b: torch.sub(a, b), aten.sub.Tensor),
    # strided inputs whose result is contiguous (a transposed pair gives a transposed result,
    # which no plan serves: plans allocate contiguous outputs)
    (lambda a, b: a[:, ::2] + b[:, 1::2], aten.add.Tensor),
    (lambda a, b: torch.relu(a), aten.relu.default),
    (lambda a, b: torch.mul(a, 2.0), aten.mul.Tensor),
    (lambda a, b: torch.div(a, b, rounding_mode="floor"), aten.div.Tensor_mode),
    (lambda a, b: torch.maximum(a[:, :1], b), aten.maximum.Tensor),
    (lambda a, b: a + b.double(), aten.add.Tensor),
    (lambda a, b: torch.eq(a, b), aten.eq.Tensor),
    (lambda a, b: torch.exp(a[1:]), aten.exp.default),
    (lambda a, b: a.sum(0), aten.sum.dim_IntList),
    (lambda a, b: torch.amax(a, (0, 1)), aten.amax.default),
    (lambda a, b: a @ b.t(), aten.mm.default),
], ids=["sub", "strided add", "relu", "mul number", "div floor", "broadcast maximum",
        "mixed dtypes", "eq", "strided exp", "sum dim", "amax dims", "mm"])
@pytest.mark.parametrize("grad", [False, True])
def test_plans_are_taken(call, op, grad, monkeypatch):
    a = values(torch.float32, (3, 4), 16).requires_grad_(grad)
    b = values(torch.float32, (3, 4), 17) + 30
    want = call(a, b)  # the first call records the plan
    assert _served(op)

    def boom(*args, **kwargs):
        raise AssertionError("generic path taken")

    monkeypatch.setattr(_arith, "_binary", boom)
    monkeypatch.setattr(_elementwise, "run", boom)
    monkeypatch.setattr(_reductions, "_reduce", boom)
    monkeypatch.setattr(_linalg_ops, "_product", boom)
    got = call(a, b)
    same(got, want)
    if grad and want.requires_grad:
        assert type(got.grad_fn) is type(want.grad_fn)


def test_plans_are_dropped_when_kernels_change():
    a, b = torch.ones(3), torch.ones(3)
    assert torch.sub(a, b).tolist() == [0.0, 0.0, 0.0]
    assert torch.sub(a, b).tolist() == [0.0, 0.0, 0.0]  # by its plan
    lib = torch.library.Library("prims", "IMPL", "CPU")
    lib.impl("sub", lambda out, x, y: out.fill_(42.0))
    try:
        assert not _served(aten.sub.Tensor)
        assert torch.sub(a, b).tolist() == [42.0, 42.0, 42.0]
        assert torch.sub(a, b).tolist() == [42.0, 42.0, 42.0]
        assert not _served(aten.sub.Tensor)  # the primitive is not the backend's own
    finally:
        lib._destroy()
    assert torch.sub(a, b).tolist() == [0.0, 0.0, 0.0]
    lib = torch.library.Library("aten", "IMPL", "CPU")
    lib.impl("sub.Tensor", lambda x, y, alpha=1: torch.full((3,), 7.0))
    try:
        assert torch.sub(a, b).tolist() == [7.0, 7.0, 7.0]
        assert torch.sub(a, b).tolist() == [7.0, 7.0, 7.0]
    finally:
        lib._destroy()
    assert torch.sub(a, b).tolist() == [0.0, 0.0, 0.0]
    assert _served(aten.sub.Tensor)


def test_plans_see_a_new_autograd_kernel():
    a = torch.ones(3, requires_grad=True)
    b = torch.ones(3)
    assert torch.sub(a, b).grad_fn.name() == "SubBackward0"
    assert torch.sub(a, b).grad_fn.name() == "SubBackward0"
    lib = torch.library.Library("aten", "IMPL", "Autograd")
    lib.impl("sub.Tensor", lambda x, y, alpha=1: torch.full((3,), 5.0))
    try:
        assert torch.sub(a, b).tolist() == [5.0, 5.0, 5.0]
        assert torch.sub(a, b).tolist() == [5.0, 5.0, 5.0]
    finally:
        lib._destroy()
    assert torch.sub(a, b).tolist() == [0.0, 0.0, 0.0]


def test_plans_respect_modes_grad_mode_and_inference_mode():
    a, b = torch.ones(2, requires_grad=True), torch.ones(2)
    for _ in range(2):
        torch.sub(a, b), torch.sub(b, b), torch.relu(b)  # plans for both signatures
    seen = []

    class Recorder:
        def __torch_dispatch__(self, func, types, args, kwargs):
            seen.append(func.qualname)
            return func(*args, **kwargs)

    _dispatch.push_mode(Recorder())
    try:
        torch.sub(b, b)
        torch.relu(b)
    finally:
        _dispatch.pop_mode()
    assert seen[:1] == ["aten::sub.Tensor"] and "aten::relu" in seen
    with torch.no_grad():
        y = torch.sub(a, b)
    assert y.grad_fn is None and not y.requires_grad
    assert torch.sub(a, b).grad_fn.name() == "SubBackward0"
    with torch.inference_mode():
        c = torch.sub(b, b)
        d = torch.relu(b)
    assert c.is_inference() and d.is_inference()
    with torch.autograd.detect_anomaly():
        y = torch.sub(a, b)
    assert "traceback_" in y.grad_fn.metadata


def test_plans_keep_numbers_apart_by_type():
    a = torch.tensor([1, 2, 3])
    assert torch.sub(a, a, alpha=1).tolist() == [0, 0, 0]
    assert torch.sub(a, a, alpha=1).tolist() == [0, 0, 0]
    # alpha=True equals alpha=1 as a dict key, but the generic path refuses it
    with pytest.raises(RuntimeError, match="Boolean alpha"):
        torch.sub(a, a, alpha=True)
    f = torch.tensor([1.0, 2.0])
    assert torch.mul(f, 2).dtype is torch.float32 and torch.mul(a, 2.5).dtype is torch.float32


def test_plans_keep_the_in_place_check_of_saved_inputs():
    a = torch.ones(3, requires_grad=True)
    for _ in range(3):
        c = a.clone()
        y = torch.atan2(c, a)  # saves both inputs
        c.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


def test_plans_tell_apart_one_tensor_passed_twice():
    x, y = torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.5])
    for _ in range(2):
        assert torch.eq(x, x).tolist() == [True, True]
        assert torch.rsub(y, y).tolist() == [0.0, 0.0]
        assert torch.sub(y, y).tolist() == [0.0, 0.0]
    for _ in range(2):
        assert torch.eq(x, y).tolist() == [True, False]
        assert torch.sub(x, y).tolist() == [0.0, -0.5]
        assert torch.atan2(x, y).tolist() == torch.atan2(x.double(), y.double()).float().tolist()
    assert len(_served(aten.eq.Tensor)) >= 2  # `eq(x, x)` and `eq(x, y)` each have a plan


def test_plans_of_one_tensor_passed_twice_record_the_generic_graph(no_plans):
    def run():
        w = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        t = w.t()
        y = torch.atan2(t, t) + torch.mm(t, t)
        y.sum().backward()
        return y, w.grad

    with no_plans():
        want, want_grad = run()
    for _ in range(3):
        got, got_grad = run()
        same(got, want)
        same(got_grad, want_grad)


# -- the gradient of a box view (chunk, split, narrow, step-1 slices) ----------------------

BOX_VIEWS = {  # the tensor viewed (a function of the leaf), the view
    "chunk": (lambda x: x, lambda s: s.chunk(3, 1)[1]),
    "split last": (lambda x: x, lambda s: s.split(2, 1)[-1]),
    "narrow rows": (lambda x: x, lambda s: s.narrow(0, 1, 2)),
    "slice both": (lambda x: x, lambda s: s[1:3, 2:5]),
    "slice of transposed": (lambda x: x.t(), lambda s: s[1:4, :2]),
    "select (not a box)": (lambda x: x, lambda s: s[1]),
    "step 2 (not a box)": (lambda x: x, lambda s: s[:, ::2]),
}


@pytest.mark.parametrize("name", BOX_VIEWS)
def test_box_view_gradients_match_the_element_scatter(name, monkeypatch):
    from torch.autograd import _nodes

    def grads():
        x = values(torch.float64, (4, 6), 30).requires_grad_()
        source, view = BOX_VIEWS[name]
        y = view(source(x))
        seed = values(torch.float64, tuple(y.shape), 31)
        (g,) = torch.autograd.grad((y * y * seed).sum(), x, create_graph=True)
        (gg,) = torch.autograd.grad((g * g).sum(), x)
        return g, gg

    source, view = BOX_VIEWS[name]
    x = source(values(torch.float64, (4, 6), 30))
    y = view(x)
    is_box = _nodes._box_starts(x, y._shape, y._stride, y._offset - x._offset) is not None
    assert is_box == ("not a box" not in name)
    got = grads()
    monkeypatch.setattr(_nodes, "_box_starts", lambda *args: None)  # the scatter for all
    want = grads()
    for a, b in zip(got, want):
        same(a.detach(), b.detach())


def test_view_plans_alias_as_the_generic_views_do(no_plans):
    x = torch.arange(12.0).reshape(3, 4)
    with no_plans():
        want = x.t()[1:3]
    for _ in range(3):
        v = x.t()[1:3]
        assert (v.shape, v.stride(), v.storage_offset()) == \
            (want.shape, want.stride(), want.storage_offset())
        assert v._base is want._base  # (the arange that x views)
        assert v.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    assert _served(aten.t.default) and _served(aten.slice.Tensor)
    v.mul_(0)  # one version counter, one memory
    assert x._version == v._version and x[:, 1:3].sum().item() == 0
    leaf = torch.ones(2, 3, requires_grad=True)
    for _ in range(3):
        y = leaf.view(3, 2)
        assert y.grad_fn.name() == "ViewBackward0"
    with torch.no_grad():
        assert not leaf.view(3, 2).requires_grad


def test_advanced_index_assignment_in_a_loop_writes_its_own_cells():
    # t[[0], c] scatters through views of t at offset c (select, then the storage as 1-d):
    # a replayed view must not carry the first call's offset into the next one
    t = torch.zeros(2, 4)
    for c in range(4):
        t[[0], c] = c + 1
    assert t.tolist() == [[1.0, 2.0, 3.0, 4.0], [0.0, 0.0, 0.0, 0.0]]


# A view's plan is keyed on its input's layout and its int arguments, not on the input's
# storage offset: each case runs over inputs of one layout at several offsets, with several
# int arguments, in both orders (so the planning call's offset differs), and every view must be
# the generic path's, in values, shape, strides, storage offset and memory.
VIEW_PLAN_CASES = {
    "select": lambda x, k: x.select(1, k),
    "select dim 0": lambda x, k: x.select(0, k),
    "select negative": lambda x, k: aten.select.int(x, 1, -1 - k),
    "slice": lambda x, k: x[:, k : k + 1],
    "slice step": lambda x, k: aten.slice.Tensor(x, 0, k, None, 2),
    "narrow": lambda x, k: x.narrow(1, k, 2 - k // 2),
    "as_strided": lambda x, k: x.as_strided((2, 2), (1, 2), k),
    "as_strided own offset": lambda x, k: x.as_strided((2, 2), (k + 1, 1)),
    "diagonal": lambda x, k: x.diagonal(k - 1),
    "diagonal dims": lambda x, k: torch.diagonal(x, -k, 1, 0),
    "unfold": lambda x, k: x.unfold(1, 1 + k % 2, 1 + k // 2),
    "transpose then select": lambda x, k: x.t().select(0, k),
    "reshape that views": lambda x, k: x.select(0, k).reshape(1, -1, 1),
    "flatten that views": lambda x, k: x.select(1, k).unsqueeze(1).flatten(),
}


def _view_inputs():
    base = torch.arange(60.0).reshape(12, 5)
    contiguous = [base[o : o + 4, :] for o in (0, 1, 3, 7)]  # (4, 5), offsets 0, 5, 15, 35
    strided = [base.t()[:, o : o + 4] for o in (0, 2, 5)]  # (5, 4), strides (1, 5)
    inner = [base[o : o + 4, 1:] for o in (0, 4)]  # (4, 4) strides (5, 1), offsets 1, 21
    return [contiguous, strided, inner]


@pytest.mark.parametrize("name", VIEW_PLAN_CASES)
@pytest.mark.parametrize("reverse", [False, True])
def test_view_plans_follow_offsets_and_int_arguments(name, reverse, no_plans):
    fn = VIEW_PLAN_CASES[name]
    for group in _view_inputs():
        inputs = group[::-1] if reverse else group
        for _ in range(2):  # the first round plans, the second replays
            for x in inputs:
                for k in (0, 1, 2):
                    view = partial(fn, x, k)
                    with no_plans():
                        want = outcome(view)
                    got = outcome(view)
                    if isinstance(want, tuple):
                        assert got == want
                        continue
                    assert (got.shape, got.stride(), got.storage_offset()) == \
                        (want.shape, want.stride(), want.storage_offset())
                    assert got.tolist() == want.tolist()
                    assert got.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()


def test_view_plans_are_made_and_as_strided_keeps_its_bounds_check(no_plans):
    x = torch.arange(20.0).reshape(4, 5)
    for _ in range(3):
        x.select(1, 2), x[:, 1:3], x.diagonal(1), x.unfold(1, 2, 1)
    assert _served(aten.select.int) and _served(aten.slice.Tensor)
    assert _served(aten.diagonal.default) and _served(aten.unfold.default)
    # as_strided reads the storage's size, which no signature holds: a (2, 2) input over a
    # larger storage first, then one that owns only its 4 elements
    big = torch.arange(20.0)[:4].view(2, 2)
    small = torch.arange(4.0).view(2, 2)
    for _ in range(3):
        assert big.as_strided((2, 2), (2, 1), 8).tolist() == [[8.0, 9.0], [10.0, 11.0]]
    with pytest.raises(RuntimeError, match="out of bounds"):
        small.as_strided((2, 2), (2, 1), 8)
    with no_plans():
        with pytest.raises(RuntimeError, match="out of bounds"):
            small.as_strided((2, 2), (2, 1), 8)


def test_reshape_plans_replay_views_and_leave_copies_to_the_generic_path():
    # reshape is written in other ops (a view when the strides allow one, else a copy): its
    # plan replays the view; a signature whose reshape copies keeps copying, each call anew
    x = torch.arange(12.0).reshape(3, 4)
    for _ in range(3):
        v = x.reshape(2, 6)
        assert v.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
        assert v._version == x._version and v.stride() == (6, 1)
    assert _served(aten.reshape.default)
    t = x.t()
    copies = [t.reshape(-1) for _ in range(3)]
    assert len({c.untyped_storage().data_ptr() for c in copies} |
               {x.untyped_storage().data_ptr()}) == 4
    x.mul_(2)
    assert t.reshape(-1).tolist() == [0.0, 8.0, 16.0, 2.0, 10.0, 18.0, 4.0, 12.0, 20.0, 6.0,
                                      14.0, 22.0]
    assert copies[0].tolist()[:3] == [0.0, 4.0, 8.0]  # an earlier copy is its own memory
    leaf = torch.ones(2, 3, requires_grad=True)
    weights = torch.arange(6.0).reshape(3, 2)
    for _ in range(3):
        y = leaf.reshape(3, 2)
        assert y.grad_fn.name() == "ViewBackward0" and y._base is leaf
        (y * weights).sum().backward()
    assert any(key[1] is True for key in _served(aten.reshape.default))  # a grad signature
    assert leaf.grad.tolist() == [[0.0, 3.0, 6.0], [9.0, 12.0, 15.0]]



def test_matrix_product_shortcut_sees_a_library_kernel_of_matmul():
    # m @ m of two matrices goes to aten::mm directly while aten::matmul has core's kernel only
    m = torch.ones(2, 2)
    assert (m @ m).tolist() == [[2.0, 2.0], [2.0, 2.0]]
    lib = torch.library.Library("aten", "IMPL")
    try:
        lib.impl("matmul", lambda a, b: torch.full((2, 2), 7.0), "CPU")
        assert (m @ m).tolist() == [[7.0, 7.0], [7.0, 7.0]]
        assert torch.matmul(m, m).tolist() == [[7.0, 7.0], [7.0, 7.0]]
    finally:
        lib._destroy()
    assert (m @ m).tolist() == [[2.0, 2.0], [2.0, 2.0]]
    leaf = torch.ones(2, 2, requires_grad=True)
    assert (leaf @ m).grad_fn.name() == "MmBackward0"


def test_another_threads_kernels_while_a_call_is_planned_do_not_spoil_its_plan(monkeypatch):
    # A background thread (a compile worker, a loader thread) running kernels while this thread
    # plans a signature: its primitives are not noted into this call's record (an ambiguous
    # record makes no plan, and the signature was then left to the generic path for good).
    import threading

    out = torch.ones(2)
    record: list = []
    monkeypatch.setattr(_plan, "recording", record)
    monkeypatch.setattr(_plan, "recording_thread", threading.get_ident())
    neighbour = threading.Thread(
        target=lambda: _plan.note("mul", [out, out], torch.float32, torch.float32, {}, out))
    neighbour.start()
    neighbour.join()
    assert record == []
    _plan.note("sub", [out, out], torch.float32, torch.float32, {}, out)
    assert [entry[0] for entry in record] == ["sub"]
