"""The autograd engine, grad modes, views and in-place ops, hooks and custom Functions."""

from __future__ import annotations

import gc
import threading
import weakref

import numpy as np
import pytest

import torch


def leaf(values):
    return torch.tensor(values, dtype=torch.float64, requires_grad=True)


# -- recording and the engine --------------------------------------------------------------


def test_recording_metadata():
    x = leaf([1.0, 2.0])
    y = x * 3
    z = y.sum()
    assert x.is_leaf and not y.is_leaf and y.requires_grad
    assert z.grad_fn.name() == "SumBackward0"
    (node, nr), = z.grad_fn.next_functions
    assert node is y.grad_fn and node.name() == "MulBackward0" and nr == 0
    acc = node.next_functions[0][0]
    assert acc.name() == "AccumulateGrad" and acc.variable is x
    assert torch.ones(2).requires_grad is False and (torch.ones(2) * 2).grad_fn is None


def test_backward_accumulates_and_errors():
    x = leaf([1.0, 2.0, 3.0])
    (x * x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0, 6.0]
    (x * 2).sum().backward()
    assert x.grad.tolist() == [4.0, 6.0, 8.0]
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
        (x * 2).backward()
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()
    with pytest.raises(RuntimeError, match="does not require grad"):
        torch.ones(2).sum().backward()


def test_retain_graph_and_gradient_argument():
    x = leaf([1.0, 2.0])
    y = x * x
    y.backward(torch.tensor([1.0, 10.0], dtype=torch.float64), retain_graph=True)
    y.backward(torch.tensor([1.0, 1.0], dtype=torch.float64))
    assert x.grad.tolist() == [2.0 + 2.0, 40.0 + 4.0]


def test_autograd_grad_options():
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    y = (x * w).sum()
    (gx,) = torch.autograd.grad(y, x, retain_graph=True)
    assert gx.tolist() == [3.0, 4.0] and x.grad is None and w.grad is None
    unused = leaf([5.0])
    with pytest.raises(RuntimeError, match="not have been used in the graph"):
        torch.autograd.grad(y, [x, unused], retain_graph=True)
    gx, gu = torch.autograd.grad(y, [x, unused], allow_unused=True, retain_graph=True)
    assert gu is None
    gx, gu = torch.autograd.grad(y, [x, unused], materialize_grads=True)
    assert gu.tolist() == [0.0]


def test_second_and_third_derivatives():
    x = leaf([2.0])
    y = x * x * x  # x^3
    (g,) = torch.autograd.grad(y.sum(), x, create_graph=True)  # 3x^2
    (h,) = torch.autograd.grad(g.sum(), x, create_graph=True)  # 6x
    (t,) = torch.autograd.grad(h.sum(), x)  # 6
    assert (g.item(), h.item(), t.item()) == (12.0, 12.0, 6.0)


def test_backward_inputs_only_accumulates_there():
    x, w = leaf([1.0]), leaf([2.0])
    (x * w).sum().backward(inputs=[w])
    assert w.grad.tolist() == [1.0] and x.grad is None


def test_deep_graph_without_recursion():
    x = leaf([1.0])
    y = x
    for _ in range(10_000):
        y = y * 1.0
    y.sum().backward()
    assert x.grad.tolist() == [1.0]


def test_graph_is_freed():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    ref = weakref.ref(y.grad_fn)
    y.backward()
    del y
    gc.collect()
    assert ref() is None


def test_saved_tensors_are_freed_by_backward():
    x = leaf([1.0, 2.0])
    big = x * 2
    y = (big * big).sum()
    node = y.grad_fn.next_functions[0][0]
    saved = [s for s in node._kept_args if hasattr(s, "_tensor")]
    assert saved and all(s._tensor is not None for s in saved)
    del saved
    kept = weakref.ref(big)  # held by nothing but the product's node now
    del big
    assert kept() is not None
    y.backward()
    assert kept() is None
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        node.apply([torch.ones(2)])


# -- grad modes --------------------------------------------------------------------------


def test_grad_modes():
    x = leaf([1.0])
    with torch.no_grad():
        assert not torch.is_grad_enabled()
        assert (x * 2).requires_grad is False
        with torch.enable_grad():
            assert (x * 2).requires_grad
    assert torch.is_grad_enabled()
    torch.set_grad_enabled(False)
    assert not torch.is_grad_enabled()
    torch.set_grad_enabled(True)
    with torch.set_grad_enabled(False):
        assert (x * 2).grad_fn is None

    @torch.no_grad()
    def f():
        return x * 2

    @torch.no_grad
    def g():
        return x * 2

    assert f().requires_grad is False and g().requires_grad is False
    assert torch.is_grad_enabled()


def test_grad_mode_is_thread_local():
    seen = []
    with torch.no_grad():
        th = threading.Thread(target=lambda: seen.append(torch.is_grad_enabled()))
        th.start()
        th.join()
    assert seen == [True]


def test_inference_mode():
    x = leaf([1.0])
    with torch.inference_mode():
        assert torch.is_inference_mode_enabled() and not torch.is_grad_enabled()
        y = x * 2
    assert y.requires_grad is False
    assert not torch.is_inference_mode_enabled()


# -- views and in-place --------------------------------------------------------------------


def test_view_gradients():
    x = leaf([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    y = x.t()[1:, :].reshape(-1).unsqueeze(0).expand(2, 4)
    (y * torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64)).sum().backward()
    # y rows are [2, 5, 3, 6] twice: x[0,1]->w1, x[1,1]->w2, x[0,2]->w3, x[1,2]->w4, times 2
    assert x.grad.tolist() == [[0.0, 2.0, 6.0], [0.0, 4.0, 8.0]]


def test_overlapping_unfold_accumulates():
    x = leaf([1.0, 2.0, 3.0, 4.0])
    x.unfold(0, 2, 1).sum().backward()  # windows [1,2] [2,3] [3,4]
    assert x.grad.tolist() == [1.0, 2.0, 2.0, 1.0]


def test_leaf_in_place_error_and_version_error():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        x.add_(1)
    with torch.no_grad():
        x.add_(1)  # allowed without grad mode
    y = x * 1
    z = y * y
    y.add_(1)
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation.*version 1; "
                                           r"expected version 0"):
        z.sum().backward()


def test_in_place_on_non_leaf():
    x = leaf([1.0, 2.0])
    y = x * 1
    y.mul_(3)  # y = 3x: the original y was saved by mul_, not the new one
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_in_place_through_a_view_rebases_the_base():
    x = leaf([1.0, 2.0, 3.0])
    y = x * 1
    y[1:].mul_(10)  # y = [x0, 10 x1, 10 x2]
    assert y.grad_fn.name() == "CopySlices"
    (y * torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)).sum().backward()
    assert x.grad.tolist() == [1.0, 20.0, 30.0]


def test_setitem_with_grad_source():
    x = leaf([1.0, 2.0])
    buf = torch.zeros(3, dtype=torch.float64)
    buf[1:] = x * 2
    buf.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_detach_and_data():
    x = leaf([1.0, 2.0])
    y = x * 2
    d = y.detach()
    assert d.grad_fn is None and not d.requires_grad and d._version == y._version
    y.detach_()
    assert y.grad_fn is None and not y.requires_grad
    x.data = torch.tensor([5.0, 6.0], dtype=torch.float64)
    assert x.tolist() == [5.0, 6.0] and x.requires_grad
    assert not x.data.requires_grad


# -- hooks -----------------------------------------------------------------------------------


def test_tensor_hooks_retain_grad_and_post_accumulate():
    x = leaf([1.0, 2.0])
    seen = []
    h = x.register_hook(lambda g: g * 10)
    y = x * 2
    y.retain_grad()
    y.register_hook(lambda g: seen.append(g.tolist()))
    acc = []
    x.register_post_accumulate_grad_hook(lambda t: acc.append(t.grad.tolist()))
    y.sum().backward()
    assert seen == [[1.0, 1.0]] and y.retains_grad and y.grad.tolist() == [1.0, 1.0]
    assert x.grad.tolist() == [20.0, 20.0] and acc == [[20.0, 20.0]]
    h.remove()
    x.grad = None
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_saved_tensors_hooks():
    packed = []

    def pack(t):
        packed.append(t.shape)
        return t.clone()

    x = leaf([1.0, 2.0])
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = (x * x).sum()
    y.backward()
    assert packed and x.grad.tolist() == [2.0, 4.0]


# -- custom Functions ------------------------------------------------------------------------


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        assert ctx.needs_input_grad == (True,)
        return g * 3 * x * x


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(x, k):
        return x * k

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.k = inputs[1]

    @staticmethod
    def backward(ctx, g):
        return g * ctx.k, None


def test_function_forms():
    x = leaf([2.0])
    y = Cube.apply(x)
    assert y.grad_fn.name() == "CubeBackward"
    y.sum().backward()
    assert x.grad.tolist() == [12.0]
    x.grad = None
    Scale.apply(x, 5.0).sum().backward()
    assert x.grad.tolist() == [5.0]
    (g,) = torch.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    (h,) = torch.autograd.grad(g.sum(), x)
    assert h.tolist() == [12.0]  # 6x, through the differentiable backward


def test_function_non_differentiable_and_once_differentiable():
    class SortVals(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            idx = torch.tensor([1, 0])
            ctx.mark_non_differentiable(idx)
            return x * 1, idx

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx, g, gi):
            return g * 2

    x = leaf([1.0, 2.0])
    v, i = SortVals.apply(x)
    assert v.requires_grad and not i.requires_grad
    # the incoming gradient 2v depends on x, so the backward's result is marked as
    # non-differentiable-twice
    (g,) = torch.autograd.grad((v * v).sum(), x, create_graph=True)
    assert g.tolist() == [4.0, 8.0]
    with pytest.raises(RuntimeError, match="once_differentiable"):
        torch.autograd.grad(g.sum(), x)


def test_backward_frees_intermediate_memory_while_the_output_lives():
    x = leaf([1.0] * 1000)
    h = x * 2  # an intermediate only the graph holds once `h` is gone
    storage = weakref.ref(h.untyped_storage())
    y = (h * h).sum()
    del h
    gc.collect()
    assert storage() is not None  # saved for backward
    y.backward()
    gc.collect()
    assert storage() is None  # released by backward, though `y` and its grad_fn live on
    assert y.grad_fn is not None


def test_in_place_aten_op_through_a_view_and_index_assignment():
    a, v = leaf([1.0, 2.0, 3.0, 4.0]), leaf([10.0, 20.0])
    w = torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64)
    b = a * 1
    b[torch.tensor([0, 2])] = v * 2
    (b * w).sum().backward()
    assert a.grad.tolist() == [0.0, 2.0, 0.0, 4.0] and v.grad.tolist() == [2.0, 6.0]
    a.grad, v.grad = None, None
    c = a * 1
    c[1:].index_put_((torch.tensor([0]),), v[:1], accumulate=True)  # c[1] += v[0]
    (c * w).sum().backward()
    assert a.grad.tolist() == [1.0, 2.0, 3.0, 4.0] and v.grad.tolist() == [2.0, 0.0]


def test_inference_tensors_and_their_errors():
    x = leaf([1.0, 2.0])
    with torch.inference_mode():
        t = torch.ones(2, dtype=torch.float64)
        assert t.is_inference()
    assert not torch.ones(1).is_inference()
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        x * t
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside "
                                           "InferenceMode"):
        t.add_(1)
    with torch.inference_mode():
        t.add_(1)  # allowed inside
    assert t.tolist() == [2.0, 2.0]


def test_function_mark_dirty_and_materialize_grads():
    class AddOneInPlace(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2  # distinguishable from an identity

    a = leaf([1.0, 2.0])
    b = a * 3
    c = AddOneInPlace.apply(b)
    assert c is b and b.tolist() == [4.0, 7.0] and b.grad_fn.name() == "AddOneInPlaceBackward"
    c.sum().backward()
    assert a.grad.tolist() == [6.0, 6.0]
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        AddOneInPlace.apply(leaf([1.0]))

    class TwoOut(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 1, x * 2

        @staticmethod
        def backward(ctx, g1, g2):
            assert g2 is None  # not materialized: the second output got no gradient
            return g1

    x = leaf([1.0])
    u, _ = TwoOut.apply(x)
    u.sum().backward()
    assert x.grad.tolist() == [1.0]


def test_mul_by_a_constant_saves_nothing_so_input_may_change_in_place():
    # PyTorch keeps `self` for mul only when `other` requires grad (and the reverse).
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1.0
    z = y * 3.0
    y.add_(1)  # would fail the saved-tensor version check if y had been kept
    z.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    w = torch.tensor([5.0, 7.0])
    out = a * w
    w.add_(1)  # w is needed for a's gradient: the version check must fire
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def test_double_backward_through_an_in_place_mul_uses_the_old_value_with_history():
    def second(inplace: bool) -> list[float]:
        x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
        y = x * 1.0
        s = torch.sigmoid(y)
        z = y.mul_(s) if inplace else y * s
        g, = torch.autograd.grad(z.sum(), x, create_graph=True)
        g2, = torch.autograd.grad(g.sum(), x)
        return g2.tolist()

    x = np.array([0.5, -1.0, 2.0])
    sig = 1 / (1 + np.exp(-x))
    # d2/dx2 of x * sigmoid(x) = sig' * (2 + x * (1 - 2 sig))
    expect = sig * (1 - sig) * (2 + x * (1 - 2 * sig))
    np.testing.assert_allclose(second(True), expect, rtol=1e-12)
    np.testing.assert_allclose(second(False), expect, rtol=1e-12)


def test_a_not_differentiable_op_with_two_float_outputs_raises_its_error_from_either():
    from torch.autograd import _nodes

    x = torch.ones(3, requires_grad=True)
    with torch.no_grad():
        pair = (x * 2, x * 3)
    first, second = _nodes.not_differentiable(pair, RuntimeError("not differentiable here"), x)
    assert first.grad_fn is second.grad_fn and second.requires_grad
    with pytest.raises(RuntimeError, match="not differentiable here"):
        second.sum().backward()


def test_a_value_used_many_times_sums_its_gradients():
    """The engine sums a value's gradients in its buffer (in place when nothing else sees the
    buffer): a value used three ways gets the sum of the three derivatives."""
    x = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], requires_grad=True)
    h = x * 2
    (h.sin() + h.cos() + h * h).sum().backward()
    xs = x.detach().numpy() * 2
    want = 2 * (np.cos(xs) - np.sin(xs) + 2 * xs)
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-6)


def test_summing_gradients_never_changes_a_tensor_someone_holds():
    """Gradients a hook kept, a gradient the caller passed in, and one gradient handed to two
    inputs keep their values while later contributions are summed."""
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    kept = []
    b = x + 0  # passes its gradient on unchanged
    b.register_hook(lambda g: kept.append(g))
    seed = torch.tensor([1.0, 10.0, 100.0])
    (b * 1 + x.sin() + x).backward(seed)
    np.testing.assert_array_equal(kept[0].numpy(), [1.0, 10.0, 100.0])
    np.testing.assert_array_equal(seed.numpy(), [1.0, 10.0, 100.0])
    np.testing.assert_allclose(x.grad.numpy(),
                               np.array([1.0, 10.0, 100.0]) * (2 + np.cos([1.0, 2.0, 3.0])),
                               rtol=1e-6)
    y = torch.tensor([3.0, -1.0], requires_grad=True)
    a = y * 1.0
    g_a, = torch.autograd.grad((a + a + a * y).sum(), [a])
    np.testing.assert_allclose(g_a.numpy(), [2 + 3.0, 2 - 1.0])


def test_a_linear_weight_gradient_arrives_in_the_weight_layout_without_a_copy():
    """x @ w.t() differentiates for w.t() by columns, so w.grad is w's layout as computed:
    no copy into the parameter's layout runs, and the values are grad^T @ x."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Ops(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.names = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.names.append(str(func))
            return func(*args, **(kwargs or {}))

    x = torch.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]], requires_grad=True)
    w = torch.tensor([[0.5, -1.0, 2.0], [1.0, 1.0, 0.0]], requires_grad=True)
    g = torch.tensor([[1.0, 2.0], [3.0, -4.0]])
    y = torch.nn.functional.linear(x, w)
    ops = Ops()
    with ops:
        y.backward(g)
    assert not [n for n in ops.names if "copy" in n or "clone" in n]
    assert w.grad.stride() == w.stride() and w.grad._base is None
    np.testing.assert_allclose(w.grad.numpy(), g.numpy().T @ x.detach().numpy())
    np.testing.assert_allclose(x.grad.numpy(), g.numpy() @ w.detach().numpy())


def test_a_leaf_gradient_is_its_own_tensor_unless_nobody_else_holds_it():
    """As PyTorch's AccumulateGrad: a first gradient that nothing else holds is kept as .grad
    (and later ones add into it in place); one that a hook kept, or that two leaves receive
    (``a + b``), is copied, so that writing into one .grad changes no other tensor."""
    a, b = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    (a + b).sum().backward()
    a.grad.zero_()
    assert b.grad.tolist() == [1.0, 1.0]
    w = leaf([1.0, 2.0])
    seen = []
    w.register_hook(lambda g: seen.append(g))
    (w * 3).sum().backward()
    w.grad.add_(1)
    assert seen[0].tolist() == [3.0, 3.0] and w.grad.tolist() == [4.0, 4.0]
    v = leaf([1.0, 2.0])
    (v * 3).sum().backward()
    first = v.grad
    (v * 2).sum().backward()
    assert v.grad is first and first.tolist() == [5.0, 5.0]


def test_large_gradients_are_summed_in_place_only_when_nobody_else_holds_them():
    """The engine sums big buffers in place (small ones out of place): a gradient a hook kept
    and the caller's seed keep their values, and the sum is right."""
    n = 1 << 17  # (the engine's in-place threshold)
    x = torch.ones(n, requires_grad=True)
    kept = []
    b = x + 0  # passes its gradient on unchanged
    b.register_hook(lambda g: kept.append(g))
    seed = torch.full((n,), 2.0)
    (b * 1 + x * 3 + x).backward(seed)
    assert kept[0].min().item() == kept[0].max().item() == 2.0
    assert seed.min().item() == seed.max().item() == 2.0
    assert x.grad.min().item() == x.grad.max().item() == 2.0 * (1 + 3 + 1)
