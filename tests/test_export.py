"""torch.export: export, ExportedProgram.module(), signatures, dynamic shapes, save/load and
run_decompositions (expected values come from running the original eager module)."""

from __future__ import annotations

import pytest

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch._core import dispatch
from torch.export import Dim, InputKind, OutputKind, UserError, export, load, save


def _mlp() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))


def _cnn() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(),
                         nn.Linear(4 * 6 * 6, 5))


class _Block(nn.Module):
    """A pre-norm transformer block: attention and an MLP, both residual."""

    def __init__(self, width: int = 8, heads: int = 2) -> None:
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.norm2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(),
                                 nn.Linear(4 * width, width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
        return x + self.mlp(self.norm2(x))


class _KwargsNested(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, x: torch.Tensor, *, scale: torch.Tensor) -> dict:
        y = self.lin(x) * scale
        return {"out": y, "extra": (y.sum(), [x + 1])}


def _kinds(ep) -> list[InputKind]:
    return [s.kind for s in ep.graph_signature.input_specs]


def test_mlp_module_matches_and_signature():
    model, x = _mlp(), torch.randn(3, 4)
    ep = export(model, (x,))
    torch.testing.assert_close(ep.module()(x), model(x))
    assert _kinds(ep) == [InputKind.PARAMETER] * 4 + [InputKind.USER_INPUT]
    assert ep.graph_signature.parameters == ("0.weight", "0.bias", "2.weight", "2.bias")
    assert [s.kind for s in ep.graph_signature.output_specs] == [OutputKind.USER_OUTPUT]
    assert set(ep.state_dict) == set(model.state_dict())
    assert dict(ep.module().named_parameters()).keys() == dict(model.named_parameters()).keys()
    assert "USER_INPUT" in str(ep)
    with pytest.raises(RuntimeError, match=r"module\(\)"):
        ep(x)


def test_cnn_batchnorm_train_mutates_buffers_functionally():
    model, x = _cnn(), torch.randn(2, 3, 8, 8)
    ep = export(model, (x,))
    sig = ep.graph_signature
    mutated = [s.target for s in sig.output_specs if s.kind is OutputKind.BUFFER_MUTATION]
    assert mutated == ["1.running_mean", "1.running_var", "1.num_batches_tracked"]
    assert sig.buffers == ("1.running_mean", "1.running_var", "1.num_batches_tracked")
    # functional: no in-place operator is left in the graph
    assert not any("!" in str(getattr(n.target, "schema", "")) for n in ep.graph.nodes)
    exported = ep.module()
    torch.testing.assert_close(exported(x), model(x))
    torch.testing.assert_close(exported.get_buffer("1.running_mean"), model[1].running_mean)
    torch.testing.assert_close(exported.get_buffer("1.running_var"), model[1].running_var)
    assert int(exported.get_buffer("1.num_batches_tracked")) == 1


def test_cnn_batchnorm_eval_has_no_mutation():
    model, x = _cnn().eval(), torch.randn(2, 3, 8, 8)
    ep = export(model, (x,))
    assert [s.kind for s in ep.graph_signature.output_specs] == [OutputKind.USER_OUTPUT]
    torch.testing.assert_close(ep.module()(x), model(x))


def test_transformer_block():
    torch.manual_seed(0)
    model, x = _Block(), torch.randn(2, 5, 8)
    ep = export(model, (x,))
    torch.testing.assert_close(ep.module()(x), model(x))


def test_kwargs_and_nested_outputs():
    model, x, scale = _KwargsNested(), torch.randn(2, 3), torch.tensor(2.0)
    ep = export(model, (x,), {"scale": scale})
    got, want = ep.module()(x, scale=scale), model(x, scale=scale)
    torch.testing.assert_close(got["out"], want["out"])
    torch.testing.assert_close(got["extra"][0], want["extra"][0])
    torch.testing.assert_close(got["extra"][1][0], want["extra"][1][0])
    assert ep.graph_signature.user_inputs == ("x", "scale")


def test_dynamic_batch_runs_at_several_sizes_and_checks_range():
    model = _mlp()
    ep = export(model, (torch.randn(3, 4),),
                dynamic_shapes={"input": {0: Dim("batch", min=2, max=16)}})
    (_symbol, ranges), = ep.range_constraints.items()
    assert (ranges.lower, ranges.upper) == (2, 16)
    assert any(isinstance(s, torch.SymInt) for n in ep.graph.nodes if n.op == "placeholder"
               for s in n.meta["val"].shape)
    exported = ep.module()
    for batch in (2, 7, 16):
        x = torch.randn(batch, 4)
        torch.testing.assert_close(exported(x), model(x))
    # PyTorch 2.13's guard messages (AssertionError), named after the input (`input`)
    with pytest.raises(AssertionError, match=r"Guard failed: input\.size\(\)\[0\] <= 16"):
        exported(torch.randn(17, 4))
    with pytest.raises(AssertionError, match=r"Guard failed: input\.size\(\)\[1\] == 4"):
        exported(torch.randn(3, 5))


class _Reshape4(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.reshape(4, -1)


def test_specialised_dynamic_dim_raises_naming_it():
    with pytest.raises(UserError, match="batch"):
        export(_Reshape4(), (torch.randn(4, 3),), dynamic_shapes=({0: Dim("batch")},))


def test_dim_auto_falls_back_to_static():
    ep = export(_Reshape4(), (torch.randn(4, 3),), dynamic_shapes=({0: Dim.AUTO},))
    assert ep.range_constraints == {}


def test_save_load_round_trip(tmp_path):
    model, x = _cnn(), torch.randn(2, 3, 8, 8)
    ep = export(model, (x,))
    path = tmp_path / "cnn.pt2"
    save(ep, path)
    loaded = load(path)
    assert loaded.graph_signature == ep.graph_signature
    torch.testing.assert_close(loaded.module()(x), ep.module()(x))


def test_save_load_keeps_dynamic_ranges(tmp_path):
    model = _mlp()
    ep = export(model, (torch.randn(3, 4),), dynamic_shapes=({0: Dim("b", max=8)},))
    save(ep, tmp_path / "mlp.pt2")
    loaded = load(tmp_path / "mlp.pt2")
    x = torch.randn(6, 4)
    torch.testing.assert_close(loaded.module()(x), model(x))
    with pytest.raises(AssertionError, match="<= 8"):
        loaded.module()(torch.randn(9, 4))


def test_run_decompositions_leaves_core_ops():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.LayerNorm(8), nn.Linear(8, 2))
    x = torch.randn(3, 4)
    lowered = export(model, (x,)).run_decompositions()
    for node in lowered.graph.nodes:
        op = node.target
        if node.op == "call_function" and isinstance(op, dispatch.Operator):
            # core: the dispatcher serves it with a kernel of its own, not by decomposing
            assert not dispatch._only_implicit(op) or \
                dispatch.COMPOSITE_IMPLICIT not in op.kernels, op
    names = {getattr(n.target, "qualname", "") for n in lowered.graph.nodes}
    assert "aten::layer_norm" not in names
    torch.testing.assert_close(lowered.module()(x), model(x))


class _WithConstant(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.offset = torch.tensor([1.0, 2.0, 3.0])  # neither parameter nor buffer
        self.lin = nn.Linear(3, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(x) + self.offset


def test_tensor_constant_is_lifted_and_saved(tmp_path):
    model = _WithConstant()
    ep = export(model, (torch.randn(2, 3),), dynamic_shapes=((Dim.DYNAMIC, None),))
    assert _kinds(ep) == [InputKind.PARAMETER] * 2 + [InputKind.CONSTANT_TENSOR,
                                                       InputKind.USER_INPUT]
    assert not any(n.op == "get_attr" for n in ep.graph.nodes)
    save(ep, tmp_path / "c.pt2")
    loaded = load(tmp_path / "c.pt2")
    x = torch.randn(5, 3)
    torch.testing.assert_close(loaded.module()(x), model(x))


def test_inplace_activation_on_intermediate_is_functionalized():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(inplace=True), nn.Conv2d(4, 2, 1)).eval()
    x = torch.randn(2, 3, 8, 8)
    ep = export(model, (x,))
    assert not any(getattr(n.target, "qualname", "") == "aten::copy_" for n in ep.graph.nodes)
    torch.testing.assert_close(ep.module()(x), model(x))


class _ViewUpdate(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x * 2
        y.view(-1).add_(1)
        return y


def test_inplace_update_through_a_view_is_refused():
    with pytest.raises(NotImplementedError, match="view"):
        export(_ViewUpdate(), (torch.randn(2, 3),))


def test_transformer_dynamic_batch_and_length_survive_decompositions():
    torch.manual_seed(0)
    model = _Block()
    ep = export(model, (torch.randn(2, 5, 8),),
                dynamic_shapes={"x": {0: Dim("b", max=8), 1: Dim("t", max=16)}})
    lowered = ep.run_decompositions()
    assert sorted((r.lower, r.upper) for r in lowered.range_constraints.values()) == \
        [(2, 8), (2, 16)]
    for batch, length in ((3, 7), (8, 16)):
        x = torch.randn(batch, length, 8)
        torch.testing.assert_close(lowered.module()(x), model(x))
    with pytest.raises(AssertionError, match="<= 16"):
        lowered.module()(torch.randn(2, 17, 8))


def test_exported_module_refuses_mode_switch():
    exported = export(_cnn(), (torch.randn(2, 3, 8, 8),)).module()
    with pytest.raises(NotImplementedError, match="eval"):
        exported.eval()
