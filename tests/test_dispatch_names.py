"""A dispatch mode sees the aten operators PyTorch's would for calls Plait runs fused
(``F.linear``, ``F.cross_entropy``), forward and backward, and ``FlopCounterMode`` counts what
PyTorch's counts. The expected names are those real PyTorch 2.13's ``TorchDispatchMode`` logged
for the same calls; the expected flops are worked out by hand (2 * m * k * n per product)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from dispatch_log import OpLog as _Log, ops_seen as _seen

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.flop_counter import FlopCounterMode

_W = torch.arange(15.0).reshape(5, 3) / 10
_B = torch.arange(5.0)
_X1, _X2, _X3, _X4 = torch.ones(3), torch.ones(4, 3), torch.ones(2, 4, 3), torch.ones(2, 2, 4, 3)
_LAYER = nn.Linear(3, 5)
_LOGITS = torch.ones(4, 5)
_TARGET = torch.zeros(4, dtype=torch.long)
_WEIGHT = torch.ones(5)

_V = torch.tensor([-1.0, 2.0, -3.0])
_END = torch.ones(3)
_Z = torch.zeros(2, 3, 4)
_BATCH1, _BATCH2 = torch.ones(2, 3, 5), torch.ones(2, 5, 4)
_RELU_LAYER = nn.ReLU(inplace=True)

# forward calls (arguments made outside the mode) -> what PyTorch's mode logs
FORWARD: dict[str, tuple[Callable[[], Any], list[str]]] = {
    "linear 2-d with bias": (lambda: F.linear(_X2, _W, _B),
                             ["aten.t.default", "aten.addmm.default"]),
    "linear 2-d without bias": (lambda: F.linear(_X2, _W),
                                ["aten.t.default", "aten.mm.default"]),
    "linear 3-d with bias": (lambda: F.linear(_X3, _W, _B),
                             ["aten.view.default", "aten.t.default", "aten.addmm.default",
                              "aten.view.default"]),
    "linear 4-d with bias": (lambda: F.linear(_X4, _W, _B),
                             ["aten.view.default", "aten.t.default", "aten.addmm.default",
                              "aten.view.default"]),
    "linear 1-d with bias": (lambda: F.linear(_X1, _W, _B),
                             ["aten.view.default", "aten.t.default", "aten.addmm.default",
                              "aten.view.default"]),
    "cross_entropy": (lambda: F.cross_entropy(_LOGITS, _TARGET),
                      ["aten._log_softmax.default", "aten.nll_loss_forward.default"]),
    "cross_entropy sum, weight": (
        lambda: F.cross_entropy(_LOGITS, _TARGET, weight=_WEIGHT, reduction="sum"),
        ["aten._log_softmax.default", "aten.nll_loss_forward.default"]),
    "cross_entropy 1-d": (lambda: F.cross_entropy(_WEIGHT, torch.tensor(2)),
                          ["aten.lift_fresh.default", "aten._log_softmax.default",
                           "aten.nll_loss_forward.default"]),
    "nn.Linear": (lambda: _LAYER(_X2),
                  ["aten.t.default", "aten.addmm.default"]),
    "baddbmm": (lambda: torch.baddbmm(_Z, _BATCH1, _BATCH2), ["aten.baddbmm.default"]),
    "relu_": (lambda: _V.clone().relu_(), ["aten.clone.default", "aten.relu_.default"]),
    "torch.relu_": (lambda: torch.relu_(_V.clone()), ["aten.clone.default", "aten.relu_.default"]),
    "F.relu inplace": (lambda: F.relu(_V.clone(), inplace=True),
                       ["aten.clone.default", "aten.relu_.default"]),
    "nn.ReLU(inplace=True)": (lambda: _RELU_LAYER(_V.clone()),
                              ["aten.clone.default", "aten.relu_.default"]),
    "lerp_ number": (lambda: _V.clone().lerp_(_END, 0.5),
                     ["aten.clone.default", "aten.lerp_.Scalar"]),
    "lerp_ tensor": (lambda: _V.clone().lerp_(_END, _END),
                     ["aten.clone.default", "aten.lerp_.Tensor"]),
    "lerp number": (lambda: torch.lerp(_V, _END, 0.5), ["aten.lerp.Scalar"]),
    "lerp tensor": (lambda: _V.lerp(_END, _END), ["aten.lerp.Tensor"]),
    "stack": (lambda: torch.stack([_V, _END]), ["aten.stack.default"]),
    "stack dim 1": (lambda: torch.stack([_V, _END], 1), ["aten.stack.default"]),
    "logsumexp": (lambda: _X3.logsumexp(-1), ["aten.logsumexp.default"]),
    "logsumexp dims": (lambda: torch.logsumexp(_X3, (0, 2), keepdim=True),
                       ["aten.logsumexp.default"]),
    "matmul 2-d": (lambda: _X2 @ _W.T, ["aten.permute.default", "aten.mm.default"]),
    "var_mean": (lambda: torch.var_mean(_X3), ["aten.var_mean.correction"]),
    "var_mean dim": (lambda: torch.var_mean(_X3, 1, keepdim=True),
                     ["aten.var_mean.correction"]),
}


@pytest.mark.parametrize("case", sorted(FORWARD))
def test_forward_names_match_pytorch(case: str) -> None:
    call, names = FORWARD[case]
    assert _seen(call) == names


def test_linear_values_under_a_mode_equal_plain_ones() -> None:
    x = torch.randn(2, 4, 3)
    w, b = torch.randn(5, 3), torch.randn(5)
    plain = F.linear(x, w, b)
    with _Log():
        moded = F.linear(x, w, b)
        transposed = F.linear(x.transpose(0, 1), w, b)  # not contiguous: matmul + add
    torch.testing.assert_close(moded, x @ w.T + b)
    torch.testing.assert_close(moded, plain)
    torch.testing.assert_close(transposed, x.transpose(0, 1) @ w.T + b)


def test_linear_backward_runs_two_mm_and_a_bias_sum() -> None:
    x = torch.randn(4, 3, requires_grad=True)
    w = torch.randn(5, 3, requires_grad=True)
    b = torch.randn(5, requires_grad=True)
    log = _Log()
    with log:
        F.linear(x, w, b).sum().backward()
    products = [n for n in log.names if n in ("aten.mm.default", "aten.addmm.default")]
    # PyTorch: addmm forward; mm for the input's gradient, mm for the weight's
    assert products == ["aten.addmm.default", "aten.mm.default", "aten.mm.default"]
    assert "aten.sum.dim_IntList" in log.names  # the bias's gradient
    assert "aten.linear.default" not in log.names
    torch.testing.assert_close(x.grad, w.detach().sum(0).expand(4, 3))
    torch.testing.assert_close(w.grad, x.detach().sum(0).expand(5, 3))
    torch.testing.assert_close(b.grad, torch.full((5,), 4.0))


def test_cross_entropy_backward_names_and_gradient() -> None:
    logits = torch.tensor([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]], requires_grad=True)
    target = torch.tensor([1, 2])
    log = _Log()
    with log:
        F.cross_entropy(logits, target).backward()
    assert "aten.nll_loss_backward.default" in log.names
    assert "aten._log_softmax_backward_data.default" in log.names
    p = torch.softmax(logits.detach(), 1)
    expected = (p - F.one_hot(target, 3).to(p.dtype)) / 2  # mean over 2 rows
    torch.testing.assert_close(logits.grad, expected)


def test_inplace_relu_and_lerp_values_and_gradients() -> None:
    v = torch.tensor([-1.0, 2.0, -3.0, 0.5], requires_grad=True)
    log = _Log()
    with log:
        y = (v * 1).relu_()
        y.backward(torch.tensor([1.0, 2.0, 3.0, 4.0]))
    assert "aten.relu_.default" in log.names
    assert y.tolist() == [0.0, 2.0, 0.0, 0.5]
    assert v.grad.tolist() == [0.0, 2.0, 0.0, 4.0]
    w = torch.tensor([1.0, -2.0], requires_grad=True)
    z = (w * 1).lerp_(torch.tensor([3.0, 3.0]), 0.25)  # w + 0.25 * (3 - w)
    z.backward(torch.ones(2))
    assert z.tolist() == [1.5, -0.75]
    assert w.grad.tolist() == [0.75, 0.75]
    assert torch.lerp(torch.zeros(2), torch.ones(2), 0.25).tolist() == [0.25, 0.25]


def test_stack_backward_selects_each_input() -> None:
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0], requires_grad=True)
    log = _Log()
    with log:
        y = torch.stack([a, b], 1)
        (y * torch.tensor([[1.0, 10.0], [2.0, 20.0]])).sum().backward()
    assert log.names.count("aten.stack.default") == 1
    assert "aten.cat.default" not in log.names
    assert y.tolist() == [[1.0, 3.0], [2.0, 4.0]]
    assert a.grad.tolist() == [1.0, 2.0] and b.grad.tolist() == [10.0, 20.0]


def test_logsumexp_values_and_gradient_under_a_mode() -> None:
    data = np.array([[1.0, 2.0, 3.0], [0.0, -1.0, 4.0]])
    x = torch.tensor(data, requires_grad=True)
    log = _Log()
    with log:
        y = x.logsumexp(1)
        y.sum().backward()
    assert log.names[0] == "aten.logsumexp.default"
    expected = np.log(np.exp(data).sum(1))
    np.testing.assert_allclose(y.detach().numpy(), expected)
    np.testing.assert_allclose(x.grad.numpy(), np.exp(data - expected[:, None]))


def test_var_mean_values_and_gradient_under_a_mode() -> None:
    data = np.array([[1.0, 2.0, 4.0], [0.0, -1.0, 3.0]])
    x = torch.tensor(data, requires_grad=True)
    with _Log():
        var, mean = torch.var_mean(x, 1, correction=0)
        (2 * var.sum() + 3 * mean.sum()).backward()
    np.testing.assert_allclose(var.detach().numpy(), data.var(1))
    np.testing.assert_allclose(mean.detach().numpy(), data.mean(1))
    centred = data - data.mean(1, keepdims=True)
    np.testing.assert_allclose(x.grad.numpy(), 2 * 2 * centred / 3 + 3 / 3)


def test_baddbmm_is_one_node_with_two_bmm_backward() -> None:
    rng = np.random.default_rng(0)
    s, a, b = rng.standard_normal((3, 4)), rng.standard_normal((2, 3, 5)), \
        rng.standard_normal((2, 5, 4))
    g = rng.standard_normal((2, 3, 4))
    ts, ta, tb = (torch.tensor(t, dtype=torch.float64, requires_grad=True) for t in (s, a, b))
    log = _Log()
    with log:
        out = torch.baddbmm(ts, ta, tb, beta=0.5, alpha=2.0)
        out.backward(torch.tensor(g))
    assert log.names.count("aten.baddbmm.default") == 1
    assert log.names.count("aten.bmm.default") == 2
    np.testing.assert_allclose(out.detach().numpy(), 0.5 * s + 2.0 * (a @ b))
    np.testing.assert_allclose(ts.grad.numpy(), 0.5 * g.sum(0))
    np.testing.assert_allclose(ta.grad.numpy(), 2.0 * g @ b.transpose(0, 2, 1))
    np.testing.assert_allclose(tb.grad.numpy(), 2.0 * a.transpose(0, 2, 1) @ g)


# -- FlopCounterMode ---------------------------------------------------------------------


def _flops(model: nn.Module, x: torch.Tensor, backward: bool) -> int:
    counter = FlopCounterMode(display=False)
    with counter:
        y = model(x)
        if backward:
            y.sum().backward()
    return counter.get_total_flops()


def test_flops_of_an_mlp() -> None:
    model = nn.Sequential(nn.Linear(10, 20), nn.ReLU(), nn.Linear(20, 5))
    x = torch.randn(8, 10)
    forward = 2 * 8 * 10 * 20 + 2 * 8 * 20 * 5
    # x needs no gradient: the first layer's weight gradient only; the second layer both
    backward = 2 * 8 * 10 * 20 + 2 * (2 * 8 * 20 * 5)
    assert _flops(model, x, backward=False) == forward
    assert _flops(model, x, backward=True) == forward + backward


def test_flops_of_an_mlp_without_bias_count_mm() -> None:
    model = nn.Sequential(nn.Linear(10, 20, bias=False), nn.Linear(20, 5, bias=False))
    counter = FlopCounterMode(display=False)
    with counter:
        model(torch.randn(8, 10))
    counts = {str(k): v for k, v in counter.get_flop_counts()["Global"].items()}
    assert counts == {"aten.mm": 2 * 8 * 10 * 20 + 2 * 8 * 20 * 5}


def test_flops_of_baddbmm_forward_and_backward() -> None:
    batch1 = torch.randn(2, 3, 5, requires_grad=True)
    batch2 = torch.randn(2, 5, 4, requires_grad=True)
    counter = FlopCounterMode(display=False)
    with counter:
        torch.baddbmm(torch.zeros(2, 3, 4), batch1, batch2).sum().backward()
    product = 2 * 2 * 3 * 5 * 4
    counts = {str(k): v for k, v in counter.get_flop_counts()["Global"].items()}
    assert counts == {"aten.baddbmm": product, "aten.bmm": 2 * product}


def test_flops_of_matmul_without_grad_count_the_products() -> None:
    counter = FlopCounterMode(display=False)
    with counter:
        torch.randn(2, 3, 4) @ torch.randn(2, 4, 5)
        torch.randn(3, 4) @ torch.randn(4, 6)
    counts = {str(k): v for k, v in counter.get_flop_counts()["Global"].items()}
    assert counts == {"aten.bmm": 2 * 2 * 3 * 4 * 5, "aten.mm": 2 * 3 * 4 * 6}


def test_flops_of_a_conv_net() -> None:
    model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(),
                          nn.Conv2d(4, 6, 3, stride=2), nn.Flatten(), nn.Linear(54, 5))
    x = torch.randn(2, 3, 8, 8)
    conv1 = 2 * 2 * (8 * 8) * 4 * (3 * 3 * 3)  # batch * positions * C_out * C_in * k
    conv2 = 2 * 2 * (3 * 3) * 6 * (4 * 3 * 3)
    fc = 2 * 2 * 54 * 5
    forward = conv1 + conv2 + fc
    # conv1's input needs no gradient: its weight's only; conv2 and fc: both
    backward = conv1 + 2 * conv2 + 2 * fc
    assert _flops(model, x, backward=False) == forward
    assert _flops(model, x, backward=True) == forward + backward


def test_flops_of_a_grouped_convolution_backward() -> None:
    x = torch.randn(2, 4, 7, 7, requires_grad=True)
    w = torch.randn(6, 2, 3, 3, requires_grad=True)
    counter = FlopCounterMode(display=False)
    with counter:
        F.conv2d(x, w, stride=2, groups=2, dilation=2).sum().backward()
    forward = 2 * 2 * (2 * 2) * 6 * (2 * 3 * 3)  # output 2x2
    counts = {str(k): v for k, v in counter.get_flop_counts()["Global"].items()}
    # PyTorch counts the weight's gradient as every input channel against every output
    # channel: groups times the forward's; the input's as the forward's
    assert counts == {"aten.convolution": forward,
                      "aten.convolution_backward": forward + 2 * forward}


class _GPTBlock(nn.Module):
    """A pre-norm transformer block with attention written in matmuls (nanoGPT's slow path)."""

    def __init__(self, d: int = 16, heads: int = 2) -> None:
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, 2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        a = (q @ k.transpose(-2, -1)) * (c // self.heads) ** -0.5
        causal = torch.ones(t, t, dtype=torch.bool).tril()
        a = a.masked_fill(~causal, float("-inf")).softmax(-1)
        y = (a @ v).transpose(1, 2).contiguous().view(b, t, c)
        x = x + self.proj(y)
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


def test_flops_of_a_gpt_block() -> None:
    x = torch.randn(2, 6, 16)
    rows = 2 * 6
    linears = 2 * rows * 16 * (48 + 16 + 64) + 2 * rows * 64 * 16
    attention = 2 * (2 * 2) * 6 * 8 * 6 + 2 * (2 * 2) * 6 * 6 * 8  # q k^T, then a v
    forward = linears + attention
    # every product's operands require grad (LayerNorm's parameters): two products each
    assert _flops(_GPTBlock(), x, backward=False) == forward
    assert _flops(_GPTBlock(), x, backward=True) == 3 * forward
