"""The dispatcher's per-call floor: the shortcuts ``Operator.__call__`` and the plan cache take
for the usual calls give what the general path gives.

- A call of plain tensors of one device that require no grad, with plain values and no
  keywords, goes straight to the backend's kernel; any other call (a tensor that requires
  grad, tensors on two devices, a keyword, a tensor subclass) takes the general path.
- A native planned kernel with one output records its node through ``plan_recorder``'s
  recorder (``_nodes.kernel_recorder``); the node, saved tensors and gradients are the
  generic path's.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import torch
from torch._core import plan as _plan
from torch._core.alloc import PRIMS
from torch.autograd import _nodes

aten = torch.ops.aten
_ids = itertools.count()


def _custom_op():
    """A fresh operator ``pair(a, b) -> a + 2 * b`` with a CPU kernel and an Autograd kernel
    that log which ran (the Autograd kernel computes the same value below autograd)."""
    ns = f"plaitfloor{next(_ids)}"
    lib = torch.library.Library(ns, "DEF")
    lib.define("pair(Tensor a, Tensor b, float s=2.0) -> Tensor")
    ran = []

    def cpu(a, b, s=2.0):
        ran.append("CPU")
        return torch.from_numpy(a.detach().numpy() + s * b.detach().numpy())

    def autograd(a, b, s=2.0):
        ran.append("Autograd")
        with torch.no_grad():
            return cpu(a, b, s)

    lib.impl("pair", cpu, "CPU")
    lib.impl("pair", autograd, "Autograd")
    return lib, getattr(torch.ops, ns).pair, ran


def test_plain_call_runs_the_backend_kernel():
    _lib, op, ran = _custom_op()  # (the library stays alive: its kernels stay registered)
    a, b = torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])
    assert op(a, b).tolist() == [7.0, 10.0]
    assert op(a, b, 0.5).tolist() == [2.5, 4.0]  # a number argument
    assert ran == ["CPU", "CPU"]


@pytest.mark.parametrize("which", [0, 1])
def test_a_tensor_that_requires_grad_takes_the_autograd_kernel(which):
    _lib, op, ran = _custom_op()  # (the library stays alive: its kernels stay registered)
    args = [torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])]
    args[which].requires_grad_(True)
    assert op(*args).tolist() == [7.0, 10.0]
    assert ran[0] == "Autograd"
    with torch.no_grad():  # grad mode off: nothing records, the backend kernel serves it
        ran.clear()
        op(*args)
        assert ran == ["CPU"]


def test_a_keyword_call_gives_the_same_result():
    _lib, op, ran = _custom_op()  # (the library stays alive: its kernels stay registered)
    a, b = torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])
    assert op(a, b, s=3.0).tolist() == [10.0, 14.0]
    assert ran == ["CPU"]


def test_tensors_on_two_devices_are_refused_as_before():
    _lib, op, ran = _custom_op()  # (the library stays alive: its kernels stay registered)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        op(torch.ones(2), torch.ones(2, device="meta"))
    assert ran == []


def test_a_tensor_subclass_takes_the_general_path():
    class Marked(torch.Tensor):
        pass

    _lib, op, ran = _custom_op()  # (the library stays alive: its kernels stay registered)
    a = torch.tensor([1.0, 2.0]).as_subclass(Marked)
    out = op(a, torch.tensor([3.0, 4.0]))
    assert out.tolist() == [7.0, 10.0]
    assert ran == ["CPU"]


def test_primitive_fill_and_zero_write_in_place():
    t = torch.tensor([1.0, 2.0, 3.0])
    version = t._version
    PRIMS.fill_(t, 4.5)  # the primitive alone: no version bump (fill_ does that)
    assert t.tolist() == [4.5, 4.5, 4.5] and t._version == version
    assert t.fill_(2) is t and t.tolist() == [2.0, 2.0, 2.0] and t._version == version + 1
    assert t.zero_() is t and t.tolist() == [0.0, 0.0, 0.0] and t._version == version + 2
    base = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    base.t()[1].fill_(-1)  # a strided view
    np.testing.assert_array_equal(base.numpy(), [[0, -1, 2], [3, -1, 5]])


def _leaf(*shape, seed=0):
    rs = np.random.RandomState(seed)
    return torch.tensor(rs.standard_normal(shape).astype(np.float32), requires_grad=True)


def test_one_output_native_plan_records_through_plan_node(no_plans):
    op = aten._softmax.default

    def run():
        x = _leaf(3, 5)
        plain = op(x, -1, False)  # (plans: the first call of a signature outside the hooks)
        packed = []
        with torch.autograd.graph.saved_tensors_hooks(
                lambda t: packed.append(tuple(t.shape)) or t, lambda t: t):
            y = op(x, -1, False)
        (g,) = torch.autograd.grad((plain * torch.arange(5.0)).sum(), (x,))
        return (plain.detach().tolist(), type(plain.grad_fn).__name__, plain.output_nr,
                plain.requires_grad, y.detach().tolist(), packed, g.tolist())

    with no_plans():
        want = run()
    for _ in range(3):  # the first call plans, the others run the plan
        assert run() == want
    plans = [p for p in op._plans.values() if p is not False and p[3] == _plan.KERNEL]
    # plan_recorder's recorder (the node as plan_node builds it), not kernel_node's
    assert any(p[2] is not None and p[2].__qualname__.startswith("plan_recorder.")
               for p in plans)


def test_one_output_native_plan_refuses_a_modified_saved_output():
    op = aten._softmax.default
    for _ in range(3):
        x = _leaf(3, 5)
        y = op(x, -1, False)
        with torch.no_grad():
            y.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            torch.autograd.grad(y.sum(), (x,))


def test_several_outputs_keep_kernel_node(no_plans):
    op = aten.native_layer_norm.default

    def run():
        x, w, b = _leaf(2, 4), _leaf(4, seed=1), _leaf(4, seed=2)
        out, mean, rstd = op(x, [4], w, b, 1e-5)
        grads = torch.autograd.grad((out * 3).sum(), (x, w, b))
        return ([o.detach().tolist() for o in (out, mean, rstd)],
                [(type(o.grad_fn).__name__ if o.grad_fn else None) for o in (out, mean, rstd)],
                [g.tolist() for g in grads])

    with no_plans():
        want = run()
    for _ in range(3):
        assert run() == want
    plans = [p for p in op._plans.values() if p is not False and p[3] == _plan.KERNEL]
    assert plans
    assert all(p[2] is None or p[2].func is _nodes.kernel_node for p in plans)


def test_native_planned_kernels_read_operands_at_their_storage_offsets(no_plans):
    """The planned native kernels (softmax, layer_norm, cross_entropy, embedding, forward and
    backward) read each operand at its own storage offset: contiguous views into the middle of
    a bigger block give the generic path's values and gradients, bit for bit, and the saved
    tensors of the plan's nodes (no hooks open) unpack to the generic path's."""
    import torch.nn.functional as F

    rs = np.random.RandomState(7)

    def block(*shape):  # a contiguous view at a nonzero storage offset
        flat = torch.tensor(rs.standard_normal((3,) + shape).astype(np.float32))
        return flat[1]

    x, gain, shift = block(2, 8, 16), block(16), block(16)
    table, logits = block(65, 16), block(16, 65)
    idx = torch.tensor(rs.randint(0, 65, (3, 2, 8)))[1]
    target = torch.tensor(rs.randint(0, 65, (3, 16)))[2]
    assert x.storage_offset() and idx.storage_offset() and target.storage_offset()

    def run():
        leaves = [t.detach().requires_grad_() for t in (x, gain, shift, table, logits)]
        lx, lg, ls, lt, ll = leaves
        outs = [torch.softmax(lx, -1), F.layer_norm(lx, (16,), lg, ls),
                F.embedding(idx, lt), F.cross_entropy(ll, target)]
        weights = [torch.arange(o.numel(), dtype=torch.float32).reshape(o.shape) / 7
                   for o in outs]
        loss = sum((o * w).sum() for o, w in zip(outs, weights))
        grads = torch.autograd.grad(loss, leaves)
        return [o.detach().numpy().tobytes() for o in outs] + \
            [g.numpy().tobytes() for g in grads]

    with no_plans():
        want = run()
    for _ in range(3):  # the first call plans, the others run the plans
        assert run() == want
