"""Programs written for PyTorch 2.13 that use torch.compile / torch.export, round 4.

Expected values come from eager execution of the same code or from independent math.
"""

from __future__ import annotations

import pytest

import torch
import torch.nn as nn


class _Stack(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(3, 2)
        self.sub = nn.Sequential(nn.Linear(2, 2), nn.ReLU())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.sub(self.lin(x)) * 2


def test_unflatten_keeps_the_module_tree_and_each_submodule_runs_alone() -> None:
    torch.manual_seed(0)
    model = _Stack().eval()
    x = torch.randn(4, 3)
    unflat = torch.export.unflatten(torch.export.export(model, (x,)))
    assert type(unflat).__name__ == "UnflattenedModule"
    assert [n for n, _ in unflat.named_parameters()] == \
        ["lin.weight", "lin.bias", "sub.0.weight", "sub.0.bias"]
    assert [n for n, _ in unflat.named_children()] == ["lin", "sub"]
    torch.testing.assert_close(unflat(x), model(x))
    torch.testing.assert_close(unflat.lin(x), model.lin(x))
    h = torch.randn(5, 2)
    torch.testing.assert_close(unflat.sub(h), model.sub(h))
    torch.testing.assert_close(getattr(unflat.sub, "0")(h), model.sub[0](h))  # as PyTorch


class _Masked(nn.Module):
    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        return x * 2 if mask is None else x * mask


def test_export_refuses_dynamic_shapes_keys_of_inputs_not_given() -> None:
    batch = torch.export.Dim("batch")
    with pytest.raises(torch.export.UserError, match="top-level keys must be the arg names"):
        torch.export.export(_Masked(), (torch.ones(3, 2),),
                            dynamic_shapes={"x": {0: batch}, "mask": None})
    ep = torch.export.export(_Masked(), (torch.ones(3, 2),), dynamic_shapes={"x": {0: batch}})
    assert ep.module()(torch.ones(5, 2)).tolist() == [[2.0, 2.0]] * 5


class _Branch(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.sum() > 0:
            return x * 2
        return x - 1


def test_draft_export_reports_a_branch_on_data_and_asserts_it_at_run_time() -> None:
    clean = torch.export.draft_export(_Stack(), (torch.randn(2, 3),))
    assert clean._report.successful() and clean._report.failures == []
    ep = torch.export.draft_export(_Branch(), (torch.ones(3),))
    report = ep._report
    assert not report.successful()
    assert [f.failure_type.name for f in report.failures] == ["DATA_DEPENDENT_ERROR"]
    assert int(report.failures[0].failure_type) == 2
    torch.testing.assert_close(ep.module()(torch.full((3,), 3.0)), torch.full((3,), 6.0))
    with pytest.raises(RuntimeError, match="Runtime assertion failed"):
        ep.module()(-torch.ones(3))


class _Positives(nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        idx = torch.nonzero(x > 0)
        return idx.float().sum(0), x[x > 0] * 2


def test_export_of_nonzero_and_a_mask_runs_for_other_counts() -> None:
    ep = torch.export.export(_Positives(), (torch.tensor([1.0, -2.0, 3.0, 0.5]),))
    index_sum, doubled = ep.module()(torch.tensor([-1.0, 2.0, 3.0, -0.5]))
    assert index_sum.tolist() == [3.0]  # positions 1 and 2
    assert doubled.tolist() == [4.0, 6.0]
    with pytest.raises(AssertionError, match="Guard failed"):
        ep.module()(torch.ones(5))


class _Counter(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("steps", torch.zeros((), dtype=torch.long))
        self.act = nn.ReLU(inplace=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.steps.add_(1)
        y = x * 3
        y.mul_(2)
        return self.act(y)


def test_export_makes_in_place_operators_functional() -> None:
    model = _Counter()
    x = torch.tensor([-1.0, 2.0])
    ep = torch.export.export(model, (x,))
    assert all("!" not in str(getattr(n.target, "schema", "")) for n in ep.graph.nodes)
    kinds = [s.kind.name for s in ep.graph_signature.output_specs]
    assert kinds == ["BUFFER_MUTATION", "USER_OUTPUT"]
    run = ep.module()
    assert run(x).tolist() == [0.0, 12.0]
    run(x)
    assert int(run.steps) == 2


class _Heads(nn.Module):
    """Attention whose head count (2) equals the first batch size: a literal that happens to
    equal a dynamic size."""

    def __init__(self) -> None:
        super().__init__()
        self.heads = 2
        self.qkv = nn.Linear(8, 24)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, length, width = x.shape
        q, k, v = self.qkv(x).split(width, dim=-1)
        shape = (batch, length, self.heads, width // self.heads)
        q, k, v = (t.view(shape).transpose(1, 2) for t in (q, k, v))
        out = (q @ k.transpose(-1, -2)).softmax(-1) @ v
        return out.transpose(1, 2).reshape(batch, length, width)


def test_dynamic_true_literal_equal_to_a_batch_size_compiles_as_pytorch() -> None:
    from torch._dynamo.testing import CompileCounter

    torch.manual_seed(0)
    model = _Heads()
    counter = CompileCounter()
    compiled = torch.compile(model, backend=counter, dynamic=True)
    counts = []
    for batch, length in [(2, 3), (3, 5), (1, 7), (4, 2)]:
        x = torch.randn(batch, length, 8)
        torch.testing.assert_close(compiled(x), model(x))
        counts.append(counter.frame_count)
    assert counts == [1, 1, 2, 2]  # PyTorch 2.13: size 1 is specialised, nothing else
    assert torch._dynamo.utils.counters is not None  # an attribute after import, as in PyTorch


def test_automatic_dynamic_batch_still_specialises_size_one() -> None:
    from torch._dynamo.testing import CompileCounter

    torch.manual_seed(0)
    model = nn.Linear(3, 2)
    counter = CompileCounter()
    compiled = torch.compile(model, backend=counter)
    counts = []
    for batch in [2, 4, 8, 1, 16]:
        x = torch.randn(batch, 3)
        torch.testing.assert_close(compiled(x), model(x))
        counts.append(counter.frame_count)
    # PyTorch 2.13: static, then dynamic from the second size, and size 1 its own graph
    assert counts == [1, 2, 2, 3, 3]


def _scaled_by_sum(x: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, int]:
    s = (x * w).sum().item()
    return x * s + w, int(s)


def _through_numpy(x: torch.Tensor) -> tuple[torch.Tensor, float]:
    a = (x + 1).numpy()
    return torch.from_numpy(a) * 2 + x, float(a.sum())


@pytest.mark.parametrize("capture_scalars", [False, True])
def test_item_and_numpy_split_graphs_as_pytorch(capture_scalars: bool) -> None:
    with torch._dynamo.config.patch(capture_scalar_outputs=capture_scalars):
        _item_and_numpy(capture_scalars)


def _item_and_numpy(capture_scalars: bool) -> None:
    from torch._dynamo.testing import CompileCounter

    w = torch.ones(3, requires_grad=True)
    x = torch.arange(3.0)
    # PyTorch 2.13: item() breaks the graph unless scalar outputs are captured; numpy() is
    # traced either way
    explained = torch._dynamo.explain(_scaled_by_sum)(x, w)
    assert (explained.graph_count, explained.graph_break_count) == \
        ((1, 0) if capture_scalars else (2, 1))
    explained = torch._dynamo.explain(_through_numpy)(x)
    assert (explained.graph_count, explained.graph_break_count) == (1, 0)
    counter = CompileCounter()
    scaled = torch.compile(_scaled_by_sum, backend=counter)
    numpy_path = torch.compile(_through_numpy, backend=counter)
    for shift in range(3):
        x = torch.arange(3.0) + shift
        out, n = scaled(x, w)
        total = 3.0 * shift + 3.0  # sum(x * w), by hand
        assert n == int(total)
        torch.testing.assert_close(out, x * total + 1)
        out.sum().backward()
        assert w.grad.tolist() == [1.0, 1.0, 1.0]  # item() cuts the graph's gradient path
        w.grad = None
        doubled, s = numpy_path(x)
        torch.testing.assert_close(doubled, (x + 1) * 2 + x)
        assert s == float((x + 1).sum())
    # PyTorch 2.13's counts: captured, one graph per function for every value; else item()'s
    # function has a graph before and one after the break, whose number is a constant at the
    # first call and an input from the second (one recompile)
    assert counter.frame_count == (2 if capture_scalars else 4)


def test_item_after_a_random_op_still_breaks_the_graph() -> None:
    def noisy(x: torch.Tensor) -> torch.Tensor:
        s = (x + torch.rand(3)).sum().item()  # computing it twice would draw twice
        return x * s

    with torch._dynamo.config.patch(capture_scalar_outputs=True):
        torch.manual_seed(5)
        got = torch.compile(noisy, backend="eager")(torch.ones(3))
        torch.manual_seed(5)
        torch.testing.assert_close(got, noisy(torch.ones(3)))
        # (Plait breaks there: PyTorch keeps one graph with the draw in it)
        assert torch._dynamo.explain(noisy)(torch.ones(3)).graph_count == 2


_LAYERS = [1.0, 2.0]


def _branch_on_length(x: torch.Tensor) -> torch.Tensor:
    if len(_LAYERS) > 2:
        return x * 2
    return x + 1


def _times_length(x: torch.Tensor) -> torch.Tensor:
    return x * len(_LAYERS)


def test_a_global_lists_length_is_guarded_as_pytorch_guards_it() -> None:
    from torch._dynamo.testing import CompileCounter

    x = torch.full((2,), 3.0)
    branch, times = CompileCounter(), CompileCounter()
    compiled_branch = torch.compile(_branch_on_length, backend=branch)
    compiled_times = torch.compile(_times_length, backend=times)
    try:
        seen = []
        for length in (2, 3, 4, 2):
            del _LAYERS[2:]
            _LAYERS.extend([1.0] * (length - 2))
            assert compiled_branch(x).tolist() == ([6.0, 6.0] if length > 2 else [4.0, 4.0])
            assert compiled_times(x).tolist() == [3.0 * length] * 2
            seen.append((branch.frame_count, times.frame_count))
    finally:
        del _LAYERS[2:]
    # PyTorch 2.13: a graph per length seen (the length is a guard, and a constant)
    assert seen == [(1, 1), (2, 2), (3, 3), (3, 3)]


def test_a_shape_error_in_compiled_code_is_pytorchs_torch_runtime_error() -> None:
    @torch.compile(backend="eager")
    def project(x: torch.Tensor) -> torch.Tensor:
        return x @ torch.ones(4, 4)

    with pytest.raises(torch._dynamo.exc.TorchRuntimeError, match="cannot be multiplied") as info:
        project(torch.ones(2, 3))
    assert isinstance(info.value, RuntimeError)  # programs catching RuntimeError still do


def _masked_double(x: torch.Tensor) -> tuple[torch.Tensor, int]:
    y = x[x > 0.5] * 2
    return y.sum() + x.mean(), y.shape[0]


def test_captured_dynamic_output_shapes_keep_one_graph_for_every_count() -> None:
    from torch._dynamo.testing import CompileCounter

    x = torch.tensor([0.0, 1.0, 2.0, 0.0])
    explained = torch._dynamo.explain(_masked_double)(x)
    assert (explained.graph_count, explained.graph_break_count) == (2, 1)  # PyTorch's default
    with torch._dynamo.config.patch(capture_dynamic_output_shape_ops=True):
        explained = torch._dynamo.explain(_masked_double)(x)
        assert (explained.graph_count, explained.graph_break_count) == (1, 0)
        counter = CompileCounter()
        compiled = torch.compile(_masked_double, backend=counter)
        for values, kept in (([0.0, 1.0, 2.0, 0.0], [1.0, 2.0]), ([1.0, 1.0, 2.0, 3.0],
                                                                   [1.0, 1.0, 2.0, 3.0]),
                             ([0.0, 0.0, 0.0, 0.0], [])):
            x = torch.tensor(values, requires_grad=True)
            total, count = compiled(x)
            assert count == len(kept)
            torch.testing.assert_close(total.detach(), torch.tensor(2 * sum(kept)
                                                                    + sum(values) / 4))
            total.backward()
            # d/dx: 2 where kept, plus the mean's 1/4 everywhere
            assert x.grad.tolist() == [2.0 * (v > 0.5) + 0.25 for v in values]
        assert counter.frame_count == 1


def _sine(x: torch.Tensor) -> torch.Tensor:
    return x.sin()


@torch.compiler.disable(recursive=False)
def _skipped(x: torch.Tensor) -> torch.Tensor:
    return _sine(x) + 1


@torch.compiler.disable
def _kept_eager(x: torch.Tensor) -> torch.Tensor:
    return _sine(x) + 1


def test_disable_recursive_false_skips_only_its_own_frame() -> None:
    from torch._dynamo.testing import CompileCounter

    x = torch.tensor([0.5, 1.0, 2.0])
    want = ((x * 2).sin() + 1) * 3
    counts = []
    for helper in (_skipped, _kept_eager):
        def program(t: torch.Tensor, helper=helper) -> torch.Tensor:
            return helper(t * 2) * 3

        counter = CompileCounter()
        torch.testing.assert_close(torch.compile(program, backend=counter)(x), want)
        explained = torch._dynamo.explain(program)(x)
        counts.append((counter.frame_count, explained.graph_count,
                       explained.graph_break_count))
        assert all(str(r.reason).startswith("Skip ") for r in explained.break_reasons)
    # PyTorch 2.13: the callee of a recursive=False function is a graph of its own
    assert counts == [(3, 3, 2), (2, 2, 1)]


def _graphs_for(fn, calls) -> int:
    from torch._dynamo.testing import CompileCounter

    counter = CompileCounter()
    compiled = torch.compile(fn, backend=counter)
    for args in calls:
        torch.testing.assert_close(compiled(*args), fn(*args))
    return counter.frame_count


def test_config_knobs_programs_set_change_recompiles_as_in_pytorch() -> None:
    sizes = [(torch.ones(n, 3),) for n in (2, 3, 4, 5)]
    numbers = [(torch.ones(3), n) for n in (2, 3, 4, 5)]
    config = torch._dynamo.config
    # PyTorch 2.13's counts for each setting
    with config.patch(assume_static_by_default=False):
        assert _graphs_for(lambda x: x * 2, sizes) == 1
    with config.patch(automatic_dynamic_shapes=False):
        assert _graphs_for(lambda x: x * 2, sizes) == 4
    assert _graphs_for(lambda x, n: x * n, numbers) == 2
    with config.patch(specialize_int=True):
        assert _graphs_for(lambda x, n: x * n, numbers) == 4
