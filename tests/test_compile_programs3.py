"""torch.compile on programs written for PyTorch, third round: the compiler's stance, copies
of GraphModules, and programs from training loops (optimizers, schedulers, autocast,
checkpointing, buffers, hooks, structured arguments, torch.export). Each test is a small
program as users write it, run compiled and compared with the same code run eagerly or with
math done by hand."""

from __future__ import annotations

import copy
import pickle

import pytest

import torch
import torch._dynamo
import torch.fx as fx
from torch import nn
from torch._dynamo.testing import CompileCounter

# -- torch.compiler.set_stance ------------------------------------------------------------------

def test_unknown_stance_is_refused_by_the_next_compiled_call_as_pytorch_does() -> None:
    f = torch.compile(lambda x: x + 1, backend="eager")
    stance = torch.compiler.set_stance("bogus")  # accepted here, as in PyTorch 2.13
    try:
        with pytest.raises(RuntimeError, match=r"invalid torch.compile stance .*'bogus'"):
            f(torch.ones(2))
        assert (lambda x: x + 1)(torch.ones(2)).tolist() == [2.0, 2.0]  # eager code runs
    finally:
        with stance:  # leaving the block puts back the stance set_stance found
            pass
    assert f(torch.ones(2)).tolist() == [2.0, 2.0]


def test_eager_then_compile_runs_the_first_call_eagerly() -> None:
    counter = CompileCounter()
    f = torch.compile(lambda x: x.sin() * 2, backend=counter)
    x = torch.linspace(-1, 1, 5)
    with torch.compiler.set_stance("eager_then_compile"):
        first = f(x)
        assert counter.frame_count == 0
        second = f(x)
        assert counter.frame_count == 1
    expected = x.sin() * 2
    torch.testing.assert_close(first, expected)
    torch.testing.assert_close(second, expected)


def test_eager_then_compile_makes_dims_that_changed_dynamic() -> None:
    counter = CompileCounter()
    f = torch.compile(lambda x: (x * 2).sum(0), backend=counter)
    with torch.compiler.set_stance("eager_then_compile"):
        for rows, graphs in ((4, 0), (8, 1), (16, 1), (5, 1)):  # PyTorch 2.13's counts
            assert f(torch.ones(rows, 3)).tolist() == [2.0 * rows] * 3
            assert counter.frame_count == graphs


# -- copies and pickles of a GraphModule --------------------------------------------------------

class _Scale(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.relu() + 1


@pytest.mark.parametrize("make_copy", [lambda g: pickle.loads(pickle.dumps(g)), copy.deepcopy,
                                       copy.copy], ids=["pickle", "deepcopy", "copy"])
def test_copies_of_a_traced_module_are_plain_graph_modules(make_copy) -> None:
    gm = fx.symbolic_trace(_Scale())
    assert type(gm).__name__ == "_Scale"  # the traced class's name on the original only
    dup = make_copy(gm)
    assert type(dup).__name__ == "GraphModule"
    assert type(dup).__qualname__ == "GraphModule.__new__.<locals>.GraphModuleImpl"
    assert dup(torch.tensor([-1.0, 2.0])).tolist() == [1.0, 3.0]


# -- loops that take functions (torch.while_loop, torch._higher_order_ops) ---------------------

def test_while_loop_eager_and_in_a_full_graph_with_gradients() -> None:
    from torch._higher_order_ops import while_loop

    assert torch.while_loop is while_loop

    def cond_fn(i: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return i < 4

    def body_fn(i: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return i + 1, y * 1.5 + i

    f = torch.compile(lambda x: torch.while_loop(cond_fn, body_fn, (torch.tensor(0), x))[1],
                      fullgraph=True, backend="aot_eager")
    x = torch.tensor([1.0, -2.0], requires_grad=True)
    out = f(x)
    by_hand = x.detach().clone()
    for i in range(4):
        by_hand = by_hand * 1.5 + i
    torch.testing.assert_close(out, by_hand)
    out.sum().backward()
    torch.testing.assert_close(x.grad, torch.full((2,), 1.5 ** 4))
    with pytest.raises(torch._dynamo.exc.UncapturedHigherOrderOpError, match="same metadata"):
        torch.while_loop(lambda t: t.sum() < 10, lambda t: (t.sum(),), (torch.ones(2),))


def test_map_scan_and_associative_scan_match_loops_by_hand() -> None:
    from torch._higher_order_ops import associative_scan, map as hop_map, scan

    xs = torch.arange(6.0).reshape(3, 2)
    torch.testing.assert_close(hop_map(lambda x, k: x * k + 1, xs, torch.tensor(2.0)),
                               xs * 2 + 1)
    compiled_scan = torch.compile(lambda init, xs: scan(
        lambda c, x: (c + x, (c * x).clone()), init, xs, reverse=True), backend="eager")
    carry, ys = compiled_scan(torch.zeros(2), xs)
    torch.testing.assert_close(carry, xs.sum(0))
    # from the end: ys[i] = (sum of the rows after i) * row i
    after = torch.stack([xs[i + 1:].sum(0) for i in range(3)])
    torch.testing.assert_close(ys, after * xs)
    torch.testing.assert_close(associative_scan(lambda a, b: a + b, xs, 0,
                                                combine_mode="generic"), xs.cumsum(0))
    torch.testing.assert_close(
        associative_scan(lambda a, b: a * b, xs + 1, 1, reverse=True, combine_mode="generic"),
        (xs + 1).flip(1).cumprod(1).flip(1))
    with pytest.raises(ValueError, match="CUDA or XPU"):
        associative_scan(lambda a, b: a + b, xs, 0)  # PyTorch's pointwise mode on the CPU


# -- x.data in compiled code ------------------------------------------------------------------

def test_data_attribute_in_a_full_graph_reads_and_writes_as_eager() -> None:
    def step(x: torch.Tensor, p: torch.Tensor) -> tuple[torch.Tensor, bool]:
        p.data.mul_(0.5)  # an update behind autograd's back, as optimizers once wrote it
        return (x * (x.data * 2)).sum(), x.data.requires_grad

    compiled = torch.compile(step, fullgraph=True, backend="eager")
    x = torch.tensor([1.0, 3.0], requires_grad=True)
    p = torch.ones(2, requires_grad=True)
    loss, data_requires_grad = compiled(x, p)
    assert loss.item() == 20.0 and data_requires_grad is False
    assert p.tolist() == [0.5, 0.5] and p.requires_grad
    loss.backward()
    assert x.grad.tolist() == [2.0, 6.0]  # x.data is a constant to autograd: d(2x^2)/dx / 2


# -- torch.export: a Dim shared by inputs, sizes that equal a layer's width ---------------------

class _TwoInputs(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 3)  # its width 3 equals the example batch

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.lin(x), y.sum(0)


def test_export_with_one_dim_for_two_inputs_and_guard_messages() -> None:
    from torch.export import Dim, export

    torch.manual_seed(0)
    model = _TwoInputs()
    batch = Dim("batch", min=2, max=10)
    ep = export(model, (torch.randn(3, 4), torch.randn(3, 2)),
                dynamic_shapes={"x": {0: batch}, "y": {0: batch}})
    assert [(r.lower, r.upper) for r in ep.range_constraints.values()] == [(2, 10)]
    exported = ep.module()
    x, y = torch.randn(7, 4), torch.randn(7, 2)
    for got, want in zip(exported(x, y), model(x, y)):
        torch.testing.assert_close(got, want)
    with pytest.raises(AssertionError, match=r"Guard failed: x\.size\(\)\[0\] <= 10"):
        exported(torch.randn(11, 4), torch.randn(11, 2))
    with pytest.raises(AssertionError,
                       match=r"Guard failed: y\.size\(\)\[0\] == x\.size\(\)\[0\]"):
        exported(torch.randn(3, 4), torch.randn(4, 2))


class _BranchOnData(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.sum() > 0:
            return x.cos()
        return x.sin()


def test_export_of_a_branch_on_data_raises_pytorchs_error() -> None:
    from torch.export import export
    from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode

    with pytest.raises(GuardOnDataDependentSymNode, match=r"torch\.cond"):
        export(_BranchOnData(), (torch.ones(3),))


class _MaskedScale(nn.Module):
    def forward(self, x: torch.Tensor, *, mask: torch.Tensor, scale: float = 1.0
                ) -> dict[str, torch.Tensor]:
        y = (x * scale).masked_fill(mask, 0.0)  # broadcasting ties x's and mask's dims
        return {"y": y, "s": y.sum(-1)}


def test_export_auto_dims_that_the_model_ties_together_stay_dynamic() -> None:
    from torch.export import Dim, export

    torch.manual_seed(0)
    x = torch.randn(2, 5)
    ep = export(_MaskedScale(), (x,), {"mask": x > 0, "scale": 2.0},
                dynamic_shapes={"x": {1: Dim.AUTO}, "mask": {1: Dim.AUTO}, "scale": None})
    longer = torch.randn(2, 7)
    got = ep.module()(longer, mask=longer > 0, scale=2.0)
    want = (longer * 2).clamp(max=0.0)  # positive entries masked to 0
    torch.testing.assert_close(got["y"], want)
    torch.testing.assert_close(got["s"], want.sum(-1))
    with pytest.raises(AssertionError, match="Guard failed"):
        ep.module()(longer, mask=torch.zeros(2, 8, dtype=torch.bool), scale=2.0)


# -- torch._dynamo.graph_break -------------------------------------------------------------------

def test_graph_break_splits_the_graph_and_fullgraph_refuses_it() -> None:
    def f(x: torch.Tensor) -> torch.Tensor:
        y = x + 1
        torch._dynamo.graph_break()
        return y * 2

    x = torch.tensor([1.0, 2.0])
    assert f(x).tolist() == [4.0, 6.0]  # eagerly: nothing
    explained = torch._dynamo.explain(f)(x)
    assert explained.graph_count == 2 and explained.graph_break_count == 1
    assert "graph_break()" in str(explained.break_reasons[0].reason)
    with pytest.raises(torch._dynamo.exc.Unsupported, match=r"graph_break\(\)"):
        torch.compile(f, fullgraph=True, backend="eager")(x)


# -- names programs import (torch._dynamo, torch.export, symbolic_shapes) -------------------------

def test_dynamo_markers_and_testing_helpers() -> None:
    from torch._dynamo.testing import rand_strided, reset_rng_state

    calls: list[str] = []

    def side(x: torch.Tensor) -> torch.Tensor:
        calls.append("side")
        return x * 2

    kept_out = torch._dynamo.disallow_in_graph(side)
    forbidden = torch._dynamo.forbid_in_graph(lambda x: x - 1)
    assert torch._dynamo.nonstrict_trace(side) is side
    assert forbidden(torch.ones(1)).tolist() == [0.0]  # outside compiled code: runs
    explained = torch._dynamo.explain(lambda x: kept_out(x + 1) + 1)(torch.ones(2))
    assert explained.graph_count == 2 and calls == ["side"]
    with pytest.raises(AssertionError, match="forbidden callable"):
        torch.compile(lambda x: forbidden(x), backend="eager")(torch.ones(1))
    t = rand_strided((2, 3), (1, 2))
    assert t.shape == (2, 3) and t.stride() == (1, 2)
    reset_rng_state()
    first = torch.rand(2)
    torch.manual_seed(1337)
    assert torch.equal(first, torch.rand(2))


def test_export_dims_default_decompositions_and_dataclass_inputs() -> None:
    import dataclasses

    from torch.export import default_decompositions, dims, export, register_dataclass

    @dataclasses.dataclass
    class Pair:
        a: torch.Tensor
        b: torch.Tensor

    register_dataclass(Pair)

    class AddPair(nn.Module):
        def forward(self, p: Pair) -> torch.Tensor:
            return p.a + p.b * 2

    batch, width = dims("batch", "width", min=2, max=8)
    assert (batch.__name__, width.__name__, batch.min, width.max) == ("batch", "width", 2, 8)
    pair = Pair(torch.ones(3), torch.arange(3.0))
    ep = export(AddPair(), (pair,))
    assert ep.module()(pair).tolist() == [1.0, 3.0, 5.0]
    table = default_decompositions()
    assert isinstance(table, dict) and table
    assert ep.run_decompositions(table).module()(pair).tolist() == [1.0, 3.0, 5.0]


def test_compiler_region_marker_and_guard_filters() -> None:
    @torch.compiler.nested_compile_region
    def block(x: torch.Tensor) -> torch.Tensor:
        return x.relu() * 2

    compiled = torch.compile(
        lambda x: block(x) + block(-x), backend="eager",
        options={"guard_filter_fn": torch.compiler.skip_guard_on_inbuilt_nn_modules_unsafe})
    assert compiled(torch.tensor([1.0, -2.0])).tolist() == [2.0, 4.0]
    assert torch.compiler.nested_compile_region()(block) is block
    assert torch.compiler.set_enable_guard_collectives(True) is False
    assert torch.compiler.set_enable_guard_collectives(False) is True


def test_set_stance_inside_a_compiled_function_is_refused() -> None:
    def f(x: torch.Tensor) -> torch.Tensor:
        torch.compiler.set_stance("force_eager")
        return x + 1

    with pytest.raises(AssertionError, match="forbidden callable"):
        torch.compile(f, backend="eager")(torch.ones(1))
    assert torch._dynamo._cache.stance[0] == "default"  # nothing changed


# -- dynamic=True: sizes computed from a dynamic size -----------------------------------------

def test_dynamic_true_compiles_sizes_computed_from_sizes_once() -> None:
    counter = CompileCounter()

    @torch.compile(backend=counter, dynamic=True)
    def halves(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        n = x.shape[0]
        return x.reshape(n // 2, 2).sum(1) * n, x.new_zeros(n + 1)

    for n in (4, 6, 10):
        x = torch.arange(float(n))
        pairs, zeros = halves(x)
        torch.testing.assert_close(pairs, (x[0::2] + x[1::2]) * n)
        assert zeros.shape == (n + 1,) and not zeros.any()
    assert counter.frame_count == 1  # PyTorch 2.13 compiles this once too
