"""torch.onnx.export: files that onnx.checker accepts and onnxruntime runs to the eager outputs.

The reference for every value is the eager model itself, run by Plait on the same inputs; the
exported file is run by onnxruntime, an independent implementation of the ONNX operators.
"""

from __future__ import annotations

import importlib.util
import io
import math
import sys
from pathlib import Path

import pytest

import torch
import torch.nn.functional as F
from torch import nn

onnx = pytest.importorskip("onnx", reason="torch.onnx.export writes files with onnx")
ort = pytest.importorskip("onnxruntime", reason="exported files are run with onnxruntime")


def _export(model, args, **kwargs) -> bytes:
    buffer = io.BytesIO()
    torch.onnx.export(model, args, buffer, **kwargs)
    data = buffer.getvalue()
    onnx.checker.check_model(onnx.load_from_string(data))
    return data


def _run(data: bytes, feeds: dict[str, torch.Tensor]) -> list:
    session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    return session.run(None, {k: v.numpy() for k, v in feeds.items()})


def _close(got, want: torch.Tensor, atol: float = 1e-5) -> None:
    assert tuple(got.shape) == tuple(want.shape)
    assert torch.allclose(torch.from_numpy(got), want.detach(), atol=atol, rtol=1e-4)


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 16), nn.Tanh(),
                                 nn.Dropout(0.3), nn.Linear(16, 3))

    def forward(self, x):
        return F.softmax(self.net(x), dim=-1)


class SmallCNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, stride=1, padding=1, groups=2)
        self.pool = nn.AvgPool2d(2)
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 5))

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = self.pool(torch.sigmoid(self.conv2(x)))
        return F.log_softmax(self.head(x), dim=1)


class Block(nn.Module):
    """A GPT-style block: embedding, pre-norm causal self-attention, GELU MLP, residuals."""

    def __init__(self, vocab: int = 20, dim: int = 16, heads: int = 2, length: int = 8) -> None:
        super().__init__()
        self.heads = heads
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.randn(length, dim) * 0.1)
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.register_buffer("mask", torch.tril(torch.ones(length, length)).view(
            1, 1, length, length))

    def forward(self, idx):
        b, t = idx.shape
        x = self.tok(idx) + self.pos[:t]
        q, k, v = self.qkv(self.ln1(x)).split(x.shape[-1], dim=2)
        q, k, v = (y.view(b, t, self.heads, -1).transpose(1, 2) for y in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.shape[-1]))
        att = att.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf")).softmax(-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, -1)
        x = x + self.proj(y)
        return x + self.mlp(self.ln2(x))


@pytest.mark.parametrize("opset", [13, 18])
def test_mlp_matches_eager_with_a_dynamic_batch(opset: int) -> None:
    torch.manual_seed(0)
    model = MLP()
    data = _export(model, (torch.randn(4, 6),), input_names=["x"], output_names=["probs"],
                   dynamic_axes={"x": {0: "batch"}, "probs": {0: "batch"}},
                   opset_version=opset)
    graph = onnx.load_from_string(data).graph
    assert graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    assert {i.name for i in graph.initializer} >= {"net.0.weight", "net.0.bias"}
    x = torch.randn(7, 6)  # another batch size than the trace's
    _close(_run(data, {"x": x})[0], model.eval()(x))


def test_small_cnn_matches_eager_and_the_model_keeps_its_mode() -> None:
    torch.manual_seed(1)
    model = SmallCNN()
    model.bn1.running_mean.uniform_(-0.5, 0.5)
    model.bn1.running_var.uniform_(0.5, 2.0)
    assert model.training
    data = _export(model, torch.randn(2, 3, 16, 16), input_names=["image"],
                   dynamic_axes={"image": [0]})
    assert model.training and model.bn1.training  # exported in eval mode, then restored
    ops = {n.op_type for n in onnx.load_from_string(data).graph.node}
    assert {"Conv", "BatchNormalization", "MaxPool", "AveragePool", "GlobalAveragePool",
            "Gemm"} <= ops
    x = torch.randn(3, 3, 16, 16)
    _close(_run(data, {"image": x})[0], model.eval()(x))


@pytest.mark.parametrize("opset", [13, 20])  # layer norm and GELU written out / as ONNX ops
def test_transformer_block_matches_eager(opset: int) -> None:
    torch.manual_seed(2)
    model = Block().eval()
    idx = torch.randint(0, 20, (2, 8))
    data = _export(model, (idx,), input_names=["idx"], output_names=["hidden"],
                   opset_version=opset, dynamic_axes={"idx": [0], "hidden": [0]})
    _close(_run(data, {"idx": idx})[0], model(idx))
    other = torch.randint(0, 20, (3, 8))  # another batch size
    _close(_run(data, {"idx": other})[0], model(other))


def test_multihead_attention_and_sdpa_match_eager() -> None:
    torch.manual_seed(3)

    class Attention(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.mha = nn.MultiheadAttention(8, 2, batch_first=True)

        def forward(self, x):
            out, _ = self.mha(x, x, x, need_weights=False)
            q = x.view(2, 5, 2, 4).transpose(1, 2)
            causal = F.scaled_dot_product_attention(q, q, q, is_causal=True)
            return out, causal.transpose(1, 2).reshape(2, 5, 8)

    model = Attention().eval()
    x = torch.randn(2, 5, 8)
    data = _export(model, (x,), input_names=["x"])
    got = _run(data, {"x": x})
    want = model(x)
    _close(got[0], want[0])
    _close(got[1], want[1])


def test_elementwise_scalars_comparisons_and_casts() -> None:
    def fn(x, n):
        y = torch.where(x > 0.5, x * 2 - 1, 1 - x / 3)
        z = torch.clamp(y, -1.0, 1.5).exp() + n.float() * 0.5
        return z.sum(dim=1, keepdim=True), (n // 2), x.amax(-1), torch.cat([x, y], 0)

    x = torch.rand(3, 4)
    n = torch.arange(12).reshape(3, 4)
    data = _export(fn, (x, n), input_names=["x", "n"])
    got = _run(data, {"x": x, "n": n})
    for g, w in zip(got, fn(x, n)):
        if w.dtype == torch.int64:
            assert torch.equal(torch.from_numpy(g), w)
        else:
            _close(g, w)


def test_file_path_output_names_and_params_as_inputs(tmp_path) -> None:
    torch.manual_seed(4)
    model = nn.Linear(3, 2)
    path = tmp_path / "linear.onnx"
    torch.onnx.export(model, (torch.randn(1, 3),), str(path), output_names=["out"],
                      export_params=False)
    graph = onnx.load(str(path)).graph
    assert [o.name for o in graph.output] == ["out"]
    assert {i.name for i in graph.input} == {"input", "weight", "bias"}
    assert not graph.initializer
    x = torch.randn(1, 3)
    got = _run(path.read_bytes(), {"input": x, "weight": model.weight.detach(),
                                   "bias": model.bias.detach()})
    _close(got[0], model(x))


def test_is_in_onnx_export_during_the_export_only() -> None:
    seen = []

    class Probe(nn.Module):
        def forward(self, x):
            seen.append(torch.onnx.is_in_onnx_export())
            return x + 1

    assert not torch.onnx.is_in_onnx_export()
    _export(Probe(), (torch.zeros(2),))
    assert seen and all(seen)
    assert not torch.onnx.is_in_onnx_export()


def test_an_unsupported_operator_is_named() -> None:
    def fn(x):
        return torch.kthvalue(x, 2).values

    with pytest.raises(torch.onnx.errors.UnsupportedOperatorError, match="aten::sort"):
        _export(fn, (torch.ones(3),))
    assert issubclass(torch.onnx.UnsupportedOperatorError, RuntimeError)


def test_names_and_arguments_refused() -> None:
    assert torch.onnx.TrainingMode.EVAL != torch.onnx.TrainingMode.TRAINING
    assert torch.onnx.OperatorExportTypes.ONNX == 0
    with pytest.raises(torch.onnx.OnnxExporterError, match="opset_version 7"):
        _export(nn.ReLU(), (torch.ones(2),), opset_version=7)


def test_a_missing_onnx_package_is_a_clear_error(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "onnx", None)  # import onnx now raises ImportError
    with pytest.raises(ImportError, match="pip install onnx"):
        torch.onnx.export(nn.ReLU(), (torch.ones(2),), io.BytesIO())


def test_residual_block_with_in_place_operators_and_more_activations() -> None:
    torch.manual_seed(5)

    class Residual(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv2d(4, 4, 3, padding=1, bias=False)
            self.bn = nn.BatchNorm2d(4)
            self.act = nn.ReLU(inplace=True)
            self.tail = nn.Sequential(nn.ELU(), nn.Softplus(), nn.Hardtanh(-0.5, 0.5))

        def forward(self, x):
            out = self.act(self.bn(self.conv(x)))
            out += x
            return self.tail(self.act(out))

    model = Residual().eval()
    x = torch.randn(2, 4, 6, 6)
    data = _export(model, (x,), input_names=["x"])
    _close(_run(data, {"x": x})[0], model(x))


def test_an_in_place_write_into_a_view_is_refused() -> None:
    def fn(x):
        y = x * 1
        y[:, 0] = 0.0  # changes y through a view: not expressible as ONNX values
        return y

    with pytest.raises(torch.onnx.errors.UnsupportedOperatorError, match="into a view"):
        _export(fn, (torch.ones(2, 3),))


def test_a_traced_module_exports_like_its_original() -> None:
    torch.manual_seed(6)
    model = MLP().eval()
    traced = torch.jit.trace(model, torch.randn(2, 6))
    data = _export(traced, (torch.randn(2, 6),), input_names=["x"])
    x = torch.randn(2, 6)
    _close(_run(data, {"x": x})[0], model(x))


def test_random_sampling_stays_random_and_scalar_bases() -> None:
    torch.manual_seed(7)

    class Sampler(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.enc = nn.Linear(4, 6)

        def forward(self, x):
            mu, logvar = self.enc(x).chunk(2, -1)
            return mu + torch.randn_like(mu) * torch.exp(0.5 * logvar), 2 ** mu

    model = Sampler().eval()
    x = torch.randn(2, 4)
    data = _export(model, (x,), input_names=["x"])
    session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    first, second = (session.run(None, {"x": x.numpy()}) for _ in range(2))
    assert first[0].shape == (2, 3)
    assert not (first[0] == second[0]).all()  # sampled on each run, not a stored sample
    _close(first[1], model(x)[1])


def _example(name: str):
    """examples/<name>.py as a module (for its model classes)."""
    path = Path(__file__).resolve().parent.parent / "examples" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"onnx_example_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_example_models_export() -> None:
    torch.manual_seed(8)
    gpt = _example("char_gpt").GPT(20, 8, 2, 2, 16, 0.1).eval()  # tied embedding and head
    idx = torch.randint(0, 20, (2, 8))
    data = _export(gpt, (idx,), input_names=["idx"])
    _close(_run(data, {"idx": idx})[0], gpt(idx)[0])

    classifier = _example("transformer_classifier").Classifier(20, 3, 8, 16, 2, 2, 0.1).eval()
    tokens = torch.randint(1, 20, (2, 8))
    padding = torch.zeros(2, 8, dtype=torch.bool)
    padding[1, 5:] = True
    data = _export(classifier, (tokens, padding), input_names=["tokens", "padding"])
    _close(_run(data, {"tokens": tokens, "padding": padding})[0], classifier(tokens, padding))


def test_dynamo_style_export_returns_a_program(tmp_path) -> None:
    torch.manual_seed(9)
    model = MLP().eval()
    x = torch.randn(2, 6)
    program = torch.onnx.export(model, (x,), dynamo=True)
    assert isinstance(program, torch.onnx.ONNXProgram)
    outputs = program(x)  # run by onnxruntime
    assert torch.allclose(outputs[0], model(x), atol=1e-5)
    path = tmp_path / "mlp.onnx"
    program.save(str(path))
    onnx.checker.check_model(onnx.load(str(path)))
    assert torch.onnx.export(model, (x,), io.BytesIO(), dynamo=False) is None


def test_like_factories_follow_a_dynamic_axis() -> None:
    def fn(x):
        return torch.zeros_like(x) + torch.ones_like(x, dtype=torch.int64) + \
            torch.full_like(x, 2.5) + x

    data = _export(fn, (torch.randn(2, 3),), input_names=["x"], dynamic_axes={"x": [0]})
    x = torch.randn(5, 3)
    _close(_run(data, {"x": x})[0], fn(x))


def test_padding_einsum_scans_flips_repeats_and_norms() -> None:
    def fn(x, w):
        padded = F.pad(x, (1, 2, 0, 1), value=0.5)
        edges = F.pad(x.unsqueeze(0), (2, 1), mode="replicate").squeeze(0)
        mixed = torch.einsum("ij,kj->ik", x, w)
        return (padded, edges, mixed, torch.cumsum(x, 1), x.flip(-1), x.repeat(2, 1, 2),
                torch.linalg.vector_norm(x, dim=-1), F.normalize(x, dim=-1))

    x, w = torch.randn(3, 4), torch.randn(5, 4)
    data = _export(fn, (x, w), input_names=["x", "w"])
    for got, want in zip(_run(data, {"x": x, "w": w}), fn(x, w)):
        _close(got, want)


# Activations and losses that are aten operators of their own (a dispatch mode sees them, and
# so does the exporter): each exported and run by onnxruntime against the eager result.
ACTIVATIONS = {
    "elu": lambda x: F.elu(x, alpha=0.7),
    "selu": F.selu,
    "celu": lambda x: F.celu(x, alpha=1.3),
    "leaky_relu": lambda x: F.leaky_relu(x, 0.2),
    "softplus": F.softplus,
    "softplus_beta": lambda x: F.softplus(x, beta=2.0),
    "hardsigmoid": F.hardsigmoid,
    "hardswish": F.hardswish,
    "mish": F.mish,
    "softshrink": lambda x: F.softshrink(x, 0.3),
    "hardshrink": lambda x: F.hardshrink(x, 0.3),
    "threshold": lambda x: F.threshold(x, 0.1, -2.0),
    "glu": lambda x: F.glu(x, dim=-1),
    "mse_loss_mean": lambda x: F.mse_loss(x, x.flip(-1)),
    "mse_loss_sum": lambda x: F.mse_loss(x, x.flip(-1), reduction="sum"),
    "mse_loss_none": lambda x: F.mse_loss(x, x.flip(-1), reduction="none"),
    "var": lambda x: x.var(),
    "var_dim": lambda x: x.var(-1, keepdim=True),
    "std_dim": lambda x: x.std(0, correction=0),
    "mean_dim": lambda x: x.mean(1),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_operators_export(name: str) -> None:
    fn = ACTIVATIONS[name]

    class Wrapped(nn.Module):
        def forward(self, x):
            return fn(x)

    torch.manual_seed(7)
    x = torch.randn(3, 8) * 3
    data = _export(Wrapped(), (x,), input_names=["x"])
    _close(_run(data, {"x": x})[0], fn(x))
