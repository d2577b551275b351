"""Kernel plans (torch._core.plan._kernel_plan) and the ``aten::linear`` operator.

A kernel plan runs the kernel the generic path resolved and records the node core's
Autograd kernel would have recorded, from a recipe. Each case runs a call several times with
plans on and compares everything observable with the generic path (plans switched off):
values, metadata, ``grad_fn`` class and output numbers, and the gradients a backward gives.
"""

from __future__ import annotations

import numpy as np
import pytest

import torch
import torch.nn.functional as F
from torch._core import plan as _plan

aten = torch.ops.aten


def _kernel_plans(op):
    return [key for key, plan in (op._plans or {}).items()
            if plan is not False and plan[3] == _plan.KERNEL]


def _leaf(*shape, seed=0, dtype=torch.float64):
    rs = np.random.RandomState(seed)
    return torch.tensor(rs.standard_normal(shape), dtype=dtype, requires_grad=True)


def _outputs(result):
    return result if isinstance(result, tuple) else (result,)


CASES = {
    # one output, a number argument
    "softmax": (aten._softmax.default, lambda x, w, b: (x, -1, False)),
    # three outputs of which one is differentiable, list and float arguments
    "native_layer_norm": (aten.native_layer_norm.default,
                          lambda x, w, b: (x, [4], w, b, 1e-5)),
    # a composite kernel with a derivative of its own, an optional tensor
    "linear": (aten.linear.default, lambda x, w, b: (x, torch.ones(5, 4, dtype=x.dtype) * w[:1],
                                                       b[:1].expand(5).contiguous())),
    # an integer output next to a floating one
    "max.dim": (aten.max.dim, lambda x, w, b: (x, 1)),
    # two differentiable outputs (output numbers 0 and 1 of one node)
    "linalg_qr": (aten.linalg_qr.default, lambda x, w, b: (x[0],)),
    # three outputs of one node, each differentiable
    "_thnn_fused_lstm_cell": (aten._thnn_fused_lstm_cell.default,
                              lambda x, w, b: (x.reshape(2, 12)[:, :8].repeat(1, 2),
                                               x.reshape(2, 12)[:, 4:].repeat(1, 2),
                                               w.expand(2, 4) * b)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_kernel_plan_records_the_generic_node(name, no_plans):
    op, make_args = CASES[name]

    def run():
        x, w, b = _leaf(2, 3, 4), _leaf(4, seed=1), _leaf(4, seed=2)
        result = op(*make_args(x, w, b))
        outs = _outputs(result)
        floating = [o for o in outs if o.dtype.is_floating_point and o.requires_grad]
        loss = sum((o * (i + 1)).sum() for i, o in enumerate(floating))
        grads = torch.autograd.grad(loss, (x, w, b), allow_unused=True)
        meta = [(o.shape, o.stride(), o.dtype, o.requires_grad,
                 type(o.grad_fn).__name__ if o.grad_fn is not None else None,
                 o.output_nr if o.requires_grad else None) for o in outs]
        return [o.detach().tolist() for o in outs], meta, [
            g.tolist() if g is not None else None for g in grads]

    with no_plans():
        want = run()
    for _ in range(3):  # the first call plans, the others run the plan
        assert run() == want
    assert _kernel_plans(op)


@pytest.mark.parametrize("name", ["native_layer_norm", "linalg_qr"])
def test_kernel_plan_saved_tensors_as_the_generic_path(name, no_plans):
    """A planned call's saved inputs and outputs behave as the generic call's: the same
    tensors go through saved-tensor hooks, and an in-place change of a saved input or
    output after the call fails the backward with the in-place modification error."""
    op, make_args = CASES[name]

    def hooked():
        x, w, b = _leaf(2, 3, 4), _leaf(4, seed=1), _leaf(4, seed=2)
        packed = []

        def pack(t):
            packed.append((tuple(t.shape), t.dtype))
            return t

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            out = _outputs(op(*make_args(x, w, b)))[0]
        grads = torch.autograd.grad(out.sum(), (x,))
        return sorted(packed, key=repr), [g.tolist() for g in grads]

    def modified(which):
        x, w, b = _leaf(2, 3, 4), _leaf(4, seed=1), _leaf(4, seed=2)
        args = make_args(x, w, b)
        outs = _outputs(op(*args))
        with torch.no_grad():
            (args[0] if which == "input" else outs[-1]).mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            torch.autograd.grad(outs[0].sum(), (x,))

    with no_plans():
        want = hooked()
    for _ in range(3):  # (the first call plans: outside the hooks, which a recipe refuses)
        modified("input")
        modified("output")
        assert hooked() == want
    assert _kernel_plans(op)


def test_kernel_plan_without_grad_and_under_no_grad(no_plans):
    op = aten._softmax.default
    x = _leaf(3, 5)
    with no_plans():
        want = op(x.detach(), 0, False).tolist()
    for _ in range(3):
        with torch.no_grad():
            got = op(x, 0, False)
        assert got.grad_fn is None and not got.requires_grad and got.tolist() == want
        got = op(x.detach(), 0, False)
        assert got.grad_fn is None and got.tolist() == want


def test_kernel_plan_reads_values_each_call():
    # nothing of the first result is replayed: the kernel runs on the new values
    x = torch.zeros(2, 3)
    for k in range(4):
        x.fill_(float(k))
        got = torch.softmax(x * 0 + torch.arange(3.0), 1)
        e = np.exp(np.arange(3.0))
        np.testing.assert_allclose(got[0].tolist(), e / e.sum(), rtol=1e-6)


def test_kernel_plans_are_dropped_when_kernels_change():
    x = torch.ones(2, 3)
    torch.softmax(x, 1)
    torch.softmax(x, 1)
    assert _kernel_plans(aten._softmax.default)
    lib = torch.library.Library("aten", "IMPL", "CPU")
    lib.impl("_softmax", lambda self, dim, half_to_float: torch.full_like(self, 7.0))
    try:
        assert torch.softmax(x, 1).tolist() == [[7.0] * 3] * 2
        assert torch.softmax(x, 1).tolist() == [[7.0] * 3] * 2
    finally:
        lib._destroy()
    assert torch.softmax(x, 1)[0, 0].item() == pytest.approx(1 / 3)


# -- aten::linear ---------------------------------------------------------------------------

SHAPES = [((2, 3, 4), (5, 4), (5,)), ((3, 4), (5, 4), (5,)), ((4,), (5, 4), (5,)),
          ((2, 3, 4), (5, 4), None), ((3, 4), (4,), ()), ((6, 4), (4,), (6,)),
          ((2, 3, 4), (5, 4), ())]


@pytest.mark.parametrize(("x_shape", "w_shape", "b_shape"), SHAPES)
def test_linear_is_one_node_with_the_products_gradients(x_shape, w_shape, b_shape):
    x, w = _leaf(*x_shape), _leaf(*w_shape, seed=1)
    b = _leaf(*b_shape, seed=2) if b_shape is not None else None
    args = (x, w) if b is None else (x, w, b)
    for _ in range(3):
        y = F.linear(*args)
        assert y.grad_fn.name() == "LinearBackward0"
        xs, ws = x.detach().numpy(), w.detach().numpy()
        want = xs @ (ws.T if ws.ndim == 2 else ws)
        if b is not None:
            want = want + b.detach().numpy()
        np.testing.assert_allclose(y.detach().numpy(), want, rtol=1e-12, atol=1e-12)
        g = np.random.RandomState(3).standard_normal(y.shape)
        grads = torch.autograd.grad(y, args, torch.tensor(g))
        # y = x W^T + b: dx = g W, dW = g^T x over the rows, db = g summed to b's shape
        w2 = ws.reshape(-1, x_shape[-1])
        g2 = g.reshape(-1, w2.shape[0])
        np.testing.assert_allclose(grads[0].numpy(), (g2 @ w2).reshape(x_shape), rtol=1e-12)
        np.testing.assert_allclose(grads[1].numpy(),
                                   (g2.T @ xs.reshape(-1, x_shape[-1])).reshape(w_shape),
                                   rtol=1e-12)
        if b is not None:
            gb = g.sum(axis=tuple(range(g.ndim - len(b_shape)))) if b_shape else g.sum()
            np.testing.assert_allclose(grads[2].numpy(), gb, rtol=1e-12)
    assert torch.autograd.gradgradcheck(F.linear, args)


def test_linear_weight_gradient_keeps_the_weights_layout():
    x, w = _leaf(2, 3, 4), _leaf(5, 4, seed=1)
    F.linear(x, w).sum().backward()
    assert w.grad.stride() == w.stride() == (4, 1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_linear_forward_matches_the_decomposition(dtype):
    rs = np.random.RandomState(4)
    x = torch.tensor(rs.standard_normal((3, 7, 16)), dtype=dtype)
    w = torch.tensor(rs.standard_normal((24, 16)), dtype=dtype)
    b = torch.tensor(rs.standard_normal(24), dtype=dtype)
    for bias in (b, None):
        got = F.linear(x, w, bias)
        want = x.double() @ w.double().t() + (bias.double() if bias is not None else 0)
        tol = 1e-2 if dtype is torch.bfloat16 else 1e-5
        assert got.dtype == dtype and got.shape == (3, 7, 24)
        np.testing.assert_allclose(got.double().numpy(), want.numpy(), rtol=tol, atol=tol * 4)
    # a transposed input and weight (not contiguous) and an empty product
    got = F.linear(x.transpose(0, 1), w.t().contiguous().t(), b)
    want = x.transpose(0, 1).double() @ w.double().t() + b.double()
    np.testing.assert_allclose(got.double().numpy(), want.numpy(), rtol=1e-2, atol=5e-2)
    empty = F.linear(torch.zeros(3, 0, dtype=dtype), torch.zeros(4, 0, dtype=dtype), b[:4])
    assert empty.tolist() == [b[:4].tolist()] * 3


def test_linear_errors():
    w = torch.ones(5, 4)
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        F.linear(torch.ones(2, 3), w)
    with pytest.raises(TypeError, match="argument 'input'"):
        F.linear("x", w)
    with pytest.raises(RuntimeError, match="at least 1D"):
        F.linear(torch.tensor(1.0), w)
    with pytest.raises(RuntimeError, match="<= 2 dimensions"):
        F.linear(torch.ones(2, 4), torch.ones(2, 5, 4))


def test_linear_under_vmap_and_on_meta():
    rs = np.random.RandomState(5)
    x = torch.tensor(rs.standard_normal((6, 3, 4)))
    ws = torch.tensor(rs.standard_normal((6, 5, 4)))
    bs = torch.tensor(rs.standard_normal((6, 5)))
    got = torch.vmap(F.linear)(x, ws, bs)
    want = np.einsum("bni,boi->bno", x.numpy(), ws.numpy()) + bs.numpy()[:, None, :]
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    got = torch.vmap(F.linear, in_dims=(0, None, None))(x, ws[0], bs[0])
    np.testing.assert_allclose(got.numpy(), x.numpy() @ ws[0].numpy().T + bs[0].numpy(),
                               rtol=1e-12)
    meta = F.linear(torch.empty(2, 3, 4, device="meta"), torch.empty(5, 4, device="meta"))
    assert meta.shape == (2, 3, 5) and meta.device.type == "meta"


# -- planners (torch.backends.contract.plannable) ---------------------------------------------

def test_a_planner_specialises_a_kernel_per_signature():
    from torch.backends import contract

    planned_for = []

    def planner(x):
        planned_for.append((tuple(x.shape), x.dtype))
        scale = float(x.shape[-1])  # worked out once for the signature

        def special(x):
            return x * scale
        return special

    @contract.plannable(planner)
    def kernel(x):
        return x * float(x.shape[-1])

    lib = torch.library.Library("plantest", "DEF")
    lib.define("scale(Tensor x) -> Tensor")
    try:
        lib.impl("scale", kernel, "CPU")
        op = torch.ops.plantest.scale.default
        # (aten operators keep kernel plans; a library namespace's calls take the generic path)
        assert op(torch.ones(2, 3)).tolist() == [[3.0] * 3] * 2
        assert planned_for == []
    finally:
        lib._destroy()

    # the same mechanism on an aten operator: a planner on the CPU kernel of aten::linear
    calls = []
    real = aten.linear.default.kernels["CPU"]

    def counting_planner(*args):
        calls.append(len(args))
        return real.plan(*args)

    def wrapped(*args):
        return real(*args)
    wrapped.plan = counting_planner
    lib = torch.library.Library("aten", "IMPL", "CPU")
    lib.impl("linear", wrapped)
    try:
        x, w = torch.ones(2, 4), torch.ones(3, 4)
        for _ in range(3):
            assert F.linear(x, w).tolist() == [[4.0] * 3] * 2
        assert calls == [3]  # asked once for the signature (input, weight, bias=None)
        F.linear(torch.ones(5, 4), w)  # a new signature: asked again
        assert calls == [3, 3]
    finally:
        lib._destroy()


@pytest.mark.parametrize("native", [True, False])
def test_a_native_planners_kernels_run_as_they_are_and_may_leave_calls(native, no_plans):
    """A planner marked native (``contract.plannable(planner, native=True)``) promises kernels
    that call no operator: they run with graph recording as it is (an unmarked planner's run
    with it off, as the generic path runs kernels), and a None from one leaves that call to
    the generic path, whose result and node are the generic call's."""
    from torch.backends import contract

    real = aten.linear.default.kernels["CPU"]
    grad_mode_inside = []
    calls = [0]

    def planner(*args):
        special = real.plan(*args)

        def kernel(*args):
            grad_mode_inside.append(torch.is_grad_enabled())
            calls[0] += 1
            if native and calls[0] % 2 == 0:
                return None  # every other call: the generic path
            return special(*args)
        return kernel

    @contract.plannable(planner, native=native)
    def wrapped(*args):
        return real(*args)

    def run():
        x, w, b = _leaf(2, 4), _leaf(3, 4, seed=1), _leaf(3, seed=2)
        out = F.linear(x, w, b)
        grads = torch.autograd.grad((out * out).sum(), (x, w, b))
        return (out.detach().tolist(), type(out.grad_fn).__name__, out.requires_grad,
                [g.tolist() for g in grads])

    with no_plans():
        want = run()
    lib = torch.library.Library("aten", "IMPL", "CPU")
    lib.impl("linear", wrapped)
    try:
        for _ in range(5):
            assert run() == want
        assert calls[0] == 4  # planned on the first call, the plan's kernel on the others
        assert grad_mode_inside == [native] * 4
    finally:
        lib._destroy()


def test_contract_allocator_makes_a_planned_kernels_outputs():
    from torch.backends import contract
    from torch.utils._python_dispatch import TorchDispatchMode

    new_outputs = contract.allocator([((2, 3), torch.float32, torch.device("cpu")),
                                      ([4], torch.int64, "cpu"), ((), torch.float64, "cpu")])
    for _ in range(2):
        tensors, pointers = new_outputs()
        assert [(t.shape, t.stride(), t.dtype, t.device.type) for t in tensors] == [
            ((2, 3), (3, 1), torch.float32, "cpu"), ((4,), (1,), torch.int64, "cpu"),
            ((), (), torch.float64, "cpu")]
        assert pointers == tuple(t.data_ptr() for t in tensors)
        assert len({t.untyped_storage().data_ptr() for t in tensors}) == 3
        assert not any(t.requires_grad or t.grad_fn is not None or t._version
                       for t in tensors)
        tensors[0].fill_(2.0)  # writable memory of its own
        assert tensors[0].tolist() == [[2.0] * 3] * 2

    seen = []

    class Logging(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    with Logging():
        tensors, pointers = new_outputs()  # a dispatch mode sees every allocation
    assert len(seen) == 3 and all("empty" in name for name in seen)
    assert [t.shape for t in tensors] == [(2, 3), (4,), ()]
    with torch.inference_mode():
        tensors, _pointers = new_outputs()
    assert all(t.is_inference() for t in tensors)


def test_ops_lookups_follow_definitions():
    assert torch.ops.aten.linear.default is aten.linear.default
    lib = torch.library.Library("lookuptest", "DEF")
    lib.define("twice(Tensor x) -> Tensor")
    lib.impl("twice", lambda x: x * 2, "CPU")
    assert torch.ops.lookuptest.twice(torch.ones(2)).tolist() == [2.0, 2.0]
    first = torch.ops.lookuptest.twice.default
    assert torch.ops.lookuptest.twice.default is first
    lib._destroy()
    with pytest.raises(AttributeError):
        torch.ops.lookuptest.twice  # noqa: B018


# -- plait-backend-cpu's planned kernels against the generic path -------------------------------

PLANNED = {
    "softmax": lambda x, i, w: torch.softmax(x, -1),
    "log_softmax dim 0": lambda x, i, w: torch.log_softmax(x, 0),
    "layer_norm": lambda x, i, w: F.layer_norm(x, (5,), w, w * 0.5),
    "layer_norm no affine": lambda x, i, w: F.layer_norm(x, (5,)),
    # a backward that wants the input's and the bias's gradients only (not the weight's)
    "layer_norm fixed weight": lambda x, i, w: F.layer_norm(x, (5,), w.detach(), w * 0.5),
    "linear": lambda x, i, w: F.linear(x, torch.outer(w, w)[:3], w[:3]),
    "cross_entropy": lambda x, i, w: F.cross_entropy(x, i),
    "cross_entropy weighted sum": lambda x, i, w: F.cross_entropy(x, i, w.detach(), reduction="sum",
                                                                  ignore_index=1),
    "cross_entropy none": lambda x, i, w: F.cross_entropy(x, i, reduction="none"),
    "embedding": lambda x, i, w: F.embedding(i, x),
    "gather": lambda x, i, w: x.gather(1, torch.stack([i, i.flip(0)], 1)) * w[:2],
    "gather of a broadcast index": lambda x, i, w: (x * w).gather(0, i.view(4, 1).expand(4, 5)),
    "index_select": lambda x, i, w: x.index_select(1, i) * w[:4],
    "index_select of rows": lambda x, i, w: (x * w).index_select(0, i.flip(0)),
    "index_select of a transposed input": lambda x, i, w: x.t().index_select(1, i),
    "x[idx]": lambda x, i, w: (x * w)[i],
    "x[negative idx]": lambda x, i, w: x[i - 4],
    "tril": lambda x, i, w: (x * w).tril(),
    "triu(-1) of a transposed input": lambda x, i, w: x.t().triu(-1),
    "tril(2) of a batch": lambda x, i, w: x.view(2, 2, 5).tril(2),
    "masked_fill": lambda x, i, w: x.masked_fill(x.detach() > 0, 0.5) * w,
    "masked_fill of a broadcast mask": lambda x, i, w: (x * w).masked_fill(i.view(4, 1) > 1, -2),
    "gelu": lambda x, i, w: F.gelu(x * w),
    "gelu tanh": lambda x, i, w: F.gelu(x, approximate="tanh"),
    "causal attention": lambda x, i, w: F.scaled_dot_product_attention(
        x.view(1, 4, 5), (x * 2).view(1, 4, 5), x.t().contiguous().t().view(1, 4, 5),
        is_causal=True),
    "attention of transposed heads": lambda x, i, w: F.scaled_dot_product_attention(
        x.t().unsqueeze(0), x.t().unsqueeze(0), (x * w).t().unsqueeze(0), scale=0.5),
}


@pytest.mark.parametrize("name", sorted(PLANNED))
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_planned_kernels_match_the_generic_path(name, dtype, no_plans):
    call = PLANNED[name]

    def run(seed):
        rs = np.random.RandomState(seed)
        x = torch.tensor(rs.standard_normal((4, 5)), dtype=dtype, requires_grad=True)
        w = torch.tensor(rs.uniform(0.5, 1.5, 5), dtype=dtype, requires_grad=True)
        i = torch.tensor(rs.randint(0, 4, 4))
        out = call(x, i, w)
        grads = torch.autograd.grad(out.sum(), (x, w), allow_unused=True)
        return out.detach(), grads

    for seed in range(3):  # new values each call: nothing of an earlier call is replayed
        with no_plans():
            want, want_grads = run(seed)
        got, got_grads = run(seed)
        assert got.dtype == want.dtype and got.shape == want.shape
        assert got.stride() == want.stride()
        assert got.tolist() == want.tolist()
        for g, h in zip(got_grads, want_grads):
            assert (g is None) == (h is None)
            if g is not None:
                assert g.tolist() == h.tolist()


def test_planned_embedding_checks_each_calls_indices():
    table = torch.randn(5, 3)
    idx = torch.tensor([[0, 4], [2, 2]])
    for _ in range(3):
        F.embedding(idx, table)
    with pytest.raises(IndexError, match="index out of range"):
        F.embedding(torch.tensor([[0, 5], [2, 2]]), table)
    with pytest.raises(IndexError, match="index out of range"):
        F.embedding(torch.tensor([[0, -1], [2, 2]]), table)


@pytest.mark.parametrize("op", ["gather", "index_select"])
def test_planned_gathers_check_each_calls_indices(op):
    """A planned gather or index_select reads the index's values each call: an index out of
    range raises PyTorch's error, a negative one too (neither op wraps them)."""
    x = torch.randn(4, 5)

    def call(values):
        index = torch.tensor(values)
        return x.gather(1, index.view(4, 1)) if op == "gather" else x.index_select(1, index)

    want = x.numpy()[np.arange(4)[:, None], np.array([[0], [4], [2], [2]])]
    for _ in range(3):
        got = call([0, 4, 2, 2])
        if op == "index_select":
            got = got.diagonal().view(4, 1)
        np.testing.assert_array_equal(got.numpy(), want)
    error = RuntimeError if op == "gather" else IndexError
    for bad in ([0, 5, 2, 2], [0, -1, 2, 2]):
        with pytest.raises(error, match="out of"):
            call(bad)


def test_index_by_one_tensor_matches_the_composite():
    """``x[idx]`` of one int64 index (the native gather's case) gives what core's composite
    gives, negative indices wrapped, and the composite's error for an index out of range."""
    from torch.backends import contract

    composite = contract.composite("aten::index.Tensor")
    x = torch.randn(4, 3, 2)
    for values in ([2, 0, 3], [[1, -1], [0, -4]], [3]):
        index = torch.tensor(values)
        got = x[index]
        want = composite(x, [index])
        assert got.shape == want.shape and got.stride() == want.stride()
        assert got.tolist() == want.tolist()
    strided, rows = x.transpose(0, 1), torch.tensor([1, 0])
    assert strided[rows].tolist() == composite(strided, [rows]).tolist()
    with pytest.raises(IndexError, match="index 4 is out of bounds for dimension 0 with size 4"):
        x[torch.tensor([0, 4])]


EXTREMES = {
    "max(1)": lambda x: x.max(1),
    "min(0, keepdim)": lambda x: x.min(0, keepdim=True),
    "max(-1) of a transposed input": lambda x: x.t().max(-1),
    "amax(1)": lambda x: x.amax(1),
    "amin((0, 1), keepdim)": lambda x: x.amin((0, 1), keepdim=True),
    "amax()": lambda x: x.amax(),
    "argmax(1)": lambda x: x.argmax(1),
    "argmin(0, keepdim)": lambda x: x.argmin(0, keepdim=True),
    "argmax()": lambda x: x.argmax(),
    "argmin(keepdim)": lambda x: x.argmin(keepdim=True),
    "argmax(0) of a transposed input": lambda x: x.t().argmax(0),
}


@pytest.mark.parametrize("name", sorted(EXTREMES))
@pytest.mark.parametrize("grad", [False, True])
def test_planned_extremes_match_the_generic_path(name, grad, no_plans):
    """The extremes planned on the native reductions give the generic path's values, indices
    (the first on ties, NaN first), layouts and gradients, on new values each call."""
    call = EXTREMES[name]

    def run(seed):
        rs = np.random.RandomState(seed)
        values = rs.randint(0, 3, (4, 5)).astype(np.float32)  # ties
        values[seed % 4, (seed + 1) % 5] = np.nan if seed == 2 else values[0, 0]
        x = torch.tensor(values, requires_grad=grad)
        outs = _outputs(call(x))
        out = [(o.tolist(), o.shape, o.stride(), o.dtype) for o in outs]
        if not grad or not outs[0].requires_grad:
            return out, None
        return out, torch.autograd.grad(outs[0].sum(), (x,))[0].tolist()

    for seed in range(4):
        with no_plans():
            want = run(seed)
        assert repr(run(seed)) == repr(want)  # (repr: NaN equals NaN)


NORMS = {
    "norm()": lambda x: x.norm(),
    "norm(dim=1)": lambda x: x.norm(dim=1),
    "vector_norm(1, 0, keepdim)": lambda x: torch.linalg.vector_norm(x, 1, 0, True),
    "vector_norm(inf, 1)": lambda x: torch.linalg.vector_norm(x, float("inf"), 1),
    "vector_norm(-inf)": lambda x: torch.linalg.vector_norm(x, -float("inf")),
    "vector_norm(2, (0, 1)) of a transposed input": lambda x: torch.linalg.vector_norm(
        x.t(), 2, (0, 1)),
    "vector_norm(3, 1)": lambda x: torch.linalg.vector_norm(x, 3, 1),
    "F.normalize": lambda x: F.normalize(x),
}


@pytest.mark.parametrize("name", sorted(NORMS))
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_planned_norms_match_the_generic_path(name, dtype, no_plans):
    """Vector norms planned on the native reductions give the generic path's values, layouts
    and gradients, bit for bit, on new values each call (zeros and NaN included)."""
    call = NORMS[name]

    def run(seed):
        rs = np.random.RandomState(seed)
        values = rs.standard_normal((4, 5))
        values[seed % 4, 1] = (0.0, np.nan, -3.0)[seed % 3]
        x = torch.tensor(values, dtype=dtype, requires_grad=True)
        out = call(x)
        grad = torch.autograd.grad(out.sum(), (x,))[0]
        return out.tolist(), out.shape, out.stride(), grad.tolist()

    for seed in range(4):
        with no_plans():
            want = run(seed)
        assert repr(run(seed)) == repr(want)  # (repr: NaN equals NaN)


CLAMPS = {
    "clamp(lo, hi)": lambda x, lo, hi: x.clamp(lo, hi),
    "clamp(lo)": lambda x, lo, hi: torch.clamp(x, lo),
    "clamp(max=hi) of a broadcast bound": lambda x, lo, hi: x.clamp(max=hi[0]),
    "clamp(hi, lo) (min above max)": lambda x, lo, hi: x.clamp(hi, lo),
}


@pytest.mark.parametrize("name", sorted(CLAMPS))
def test_clamp_with_tensor_bounds_is_clamp_tensor_and_planned(name, no_plans):
    """``clamp`` with tensor bounds calls ``aten::clamp.Tensor`` (PyTorch's overload for
    them); its planned calls give the generic path's values and gradients for the input and
    both bounds, NaN included, on new values each call."""
    call = CLAMPS[name]

    def run(seed):
        rs = np.random.RandomState(seed)
        x = torch.tensor(rs.standard_normal((4, 5)), requires_grad=True)
        x.data[seed % 4, 2] = float("nan")
        lo = torch.tensor(rs.uniform(-1, 0, (4, 5)), requires_grad=True)
        hi = torch.tensor(rs.uniform(0, 1, (4, 5)), requires_grad=True)
        out = call(x, lo, hi)
        grads = torch.autograd.grad((out * 2).nansum(), (x, lo, hi), allow_unused=True)
        return out.tolist(), out.stride(), [g if g is None else g.tolist() for g in grads]

    for seed in range(4):
        with no_plans():
            want = run(seed)
        assert repr(run(seed)) == repr(want)
    seen = []

    class Names(torch.utils._python_dispatch.TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    x = torch.randn(4, 5)
    with Names():
        call(x, torch.zeros(4, 5), torch.ones(4, 5))
    assert "aten.clamp.Tensor" in seen


SCANS_AND_TOPK = {
    "cumsum(1)": lambda x: x.cumsum(1),
    "cumsum(0) of a transposed input": lambda x: x.t().cumsum(0),
    "cumprod(-1)": lambda x: x.cumprod(-1),
    "topk(3)": lambda x: x.topk(3),
    "topk(2, 0, largest=False)": lambda x: x.topk(2, 0, largest=False),
    "topk(5) of a transposed input": lambda x: x.t().topk(4),
}


@pytest.mark.parametrize("name", sorted(SCANS_AND_TOPK))
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_planned_scans_and_topk_match_the_generic_path(name, dtype, no_plans):
    """cumsum/cumprod and topk planned on their native kernels give the generic path's
    values, indices (ties and NaN included), layouts and gradients, on new values each call."""
    call = SCANS_AND_TOPK[name]

    def run(seed):
        rs = np.random.RandomState(seed)
        values = rs.randint(-2, 3, (4, 5)).astype(np.float64)  # ties
        values[seed % 4, 3] = np.nan if seed == 1 else 0.5
        x = torch.tensor(values, dtype=dtype, requires_grad=True)
        outs = _outputs(call(x))
        grad = torch.autograd.grad(outs[0].nansum(), (x,))[0]
        return [(o.tolist(), o.stride(), o.dtype) for o in outs], grad.tolist()

    for seed in range(4):
        with no_plans():
            want = run(seed)
        assert repr(run(seed)) == repr(want)


@pytest.mark.parametrize("dim,keepdim", [(1, False), (0, True), ((0, 1), False), (-1, True)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_planned_logsumexp_matches_the_generic_path(dim, keepdim, dtype, no_plans):
    """``logsumexp`` (one operator with its derivative, as PyTorch's) planned on the native
    kernels gives the generic path's values, infinite and NaN rows included, layouts and
    gradients, and the composite's values without any plan."""
    from torch._aten.reductions import _logsumexp_kernel

    def run(seed):
        rs = np.random.RandomState(seed)
        values = rs.standard_normal((4, 5)) * 10
        values[seed % 4, 1] = (np.inf, -np.inf, np.nan, 0.0)[seed]
        if seed == 1:
            values[2] = -np.inf  # a row of -inf: its maximum is shifted by 0
        x = torch.tensor(values, dtype=dtype, requires_grad=True)
        out = x.logsumexp(dim, keepdim)
        grad = torch.autograd.grad(out.sum(), (x,))[0]
        composite = _logsumexp_kernel(x.detach(), dim, keepdim)
        assert repr(out.tolist()) == repr(composite.tolist())
        return out.tolist(), out.shape, out.stride(), type(out.grad_fn).__name__, grad.tolist()

    for seed in range(4):
        with no_plans():
            want = run(seed)
        assert repr(run(seed)) == repr(want)
    assert want[3] == "LogsumexpBackward0"
