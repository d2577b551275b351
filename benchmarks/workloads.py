"""The CPU benchmark workloads, timed under whichever ``torch`` this interpreter imports.

``python benchmarks/workloads.py [--quick]`` prints one JSON object: versions, then one entry per
workload with its median time (or ``missing``/``error``), a checksum of its result and, for
matmul and conv, its floating-point operation count. ``run.py`` runs it as a worker
(``--serve``) under Plait and under real PyTorch and compares. The same code runs on both:
models are written functionally (parameter tensors with ``requires_grad``,
``torch.nn.functional``, ``torch.optim.Adam``) and inputs come from numpy with fixed seeds, so
both sides compute the same numbers. One row writes nanoGPT as ``nn.Module`` classes, as
programs do (its parameters are ``nn.Parameter`` objects).

Each timing is the median over rounds of the mean time of a call, after a warm-up; a round
lasts about ``ROUND_S`` seconds. ``--quick`` uses tiny sizes and short rounds (a smoke run, and
what ``tests/test_benchmarks.py`` uses).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import torch

ROUND_S = 0.25  # seconds per timing round (full run)
ROUNDS = 7


@dataclass
class Case:
    """A workload ready to run: ``fn()`` does one iteration and returns tensors whose checksum
    proves the result (the checksum covers the first ``check_calls`` calls)."""

    fn: Callable[[], Any]
    flops: float | None = None  # per call, for a GFLOP/s figure
    check_calls: int = 1
    tol: float = 1e-4  # relative to the sum of absolute values of the checked results
    baseline: Callable[[], Any] | None = None  # timed too (the compile rows: eager)
    note: Callable[[float, float | None], str] | None = None  # (time, baseline) -> the note
    # a row that times itself (fresh processes): () -> (seconds, checked value); fn unused
    measured: Callable[[], tuple[float, float]] | None = None


@dataclass(frozen=True)
class Workload:
    """One table row: ``setup(quick)`` builds the inputs and returns a :class:`Case`."""

    name: str
    group: str
    target: float  # the ratio Plait / PyTorch to stay at or under
    setup: Callable[[bool], Case]
    needs: Sequence[str] = field(default=())  # attribute paths under torch (missing -> row says so)


# --------------------------------------------------------------------------- inputs


def _tensor(array: np.ndarray, requires_grad: bool = False) -> torch.Tensor:
    t = torch.from_numpy(np.ascontiguousarray(array))
    return t.requires_grad_() if requires_grad else t


def _randn(shape: Sequence[int], seed: int, requires_grad: bool = False) -> torch.Tensor:
    data = np.random.RandomState(seed).standard_normal(shape).astype(np.float32)
    return _tensor(data, requires_grad)


def _rand(shape: Sequence[int], seed: int) -> torch.Tensor:
    return _tensor(np.random.RandomState(seed).random_sample(shape).astype(np.float32))


def _uniform_param(shape: Sequence[int], fan_in: int, rs: np.random.RandomState) -> torch.Tensor:
    bound = 1.0 / math.sqrt(fan_in)  # nn.Linear's / nn.Conv2d's default init range
    return _tensor(rs.uniform(-bound, bound, shape).astype(np.float32), requires_grad=True)


# --------------------------------------------------------------------------- workload builders


def small_op(op: Callable[..., Any], second: str = "b", requires_grad: bool = False
             ) -> Callable[[bool], Case]:
    """An op on 4-element float32 tensors: ``second`` is ``"b"`` (another (4,) tensor),
    ``"scalar"`` (1.0) or ``"matrix"`` (``b`` is (2, 4) and broadcasts ``a``)."""

    def setup(quick: bool) -> Case:
        a = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=requires_grad)
        if second == "scalar":
            b: Any = 1.0
        elif second == "matrix":
            b = torch.ones(2, 4)
        else:
            b = torch.tensor([5.0, 6.0, 7.0, 8.0], requires_grad=requires_grad)
        return Case(lambda: op(a, b))

    return setup


def unary(op: Callable[..., Any], n: int, quick_n: int, positive: bool = False
          ) -> Callable[[bool], Case]:
    """``op(a)`` on ``n`` float32 elements, standard normal or (``positive``) uniform [0, 1)."""

    def setup(quick: bool) -> Case:
        size = quick_n if quick else n
        a = _rand((size,), 1) if positive else _randn((size,), 1)
        return Case(lambda: op(a))

    return setup


def binary(op: Callable[..., Any], n: int, quick_n: int) -> Callable[[bool], Case]:
    """``op(a, b)`` on two float32 tensors of ``n`` elements."""

    def setup(quick: bool) -> Case:
        size = quick_n if quick else n
        a, b = _randn((size,), 1), _randn((size,), 2)
        return Case(lambda: op(a, b))

    return setup


def rows(op: Callable[..., Any], shape: Sequence[int], quick_shape: Sequence[int],
         positive: bool = False) -> Callable[[bool], Case]:
    """``op(x)`` on a float32 matrix (row-wise ops: reductions over the last dim, softmax,
    layer_norm)."""

    def setup(quick: bool) -> Case:
        s = quick_shape if quick else shape
        x = _rand(s, 3) if positive else _randn(s, 3)
        return Case(lambda: op(x), tol=1e-4)

    return setup


def layer_norm(quick: bool) -> Case:
    import torch.nn.functional as F

    rows_, cols = (8, 16) if quick else (4096, 1024)
    x = _randn((rows_, cols), 3)
    w, b = _randn((cols,), 4), _randn((cols,), 5)
    return Case(lambda: F.layer_norm(x, (cols,), w, b))


def matmul(n: int) -> Callable[[bool], Case]:
    """``a @ b`` of two n x n float32 matrices (2 n^3 flops)."""

    def setup(quick: bool) -> Case:
        size = 16 if quick else n
        a, b = _randn((size, size), 6), _randn((size, size), 7)
        return Case(lambda: a @ b, flops=2.0 * size ** 3)

    return setup


def conv2d(backward: bool) -> Callable[[bool], Case]:
    """conv2d of a (32, 64, 56, 56) input with 64 3x3 filters, padding 1; with ``backward``,
    also the gradients of input and weight (through ``out.backward(grad)``)."""

    def setup(quick: bool) -> Case:
        import torch.nn.functional as F

        n, c, hw = (2, 4, 8) if quick else (32, 64, 56)
        x = _randn((n, c, hw, hw), 8, requires_grad=backward)
        w = _randn((c, c, 3, 3), 9, requires_grad=backward)
        flops = 2.0 * n * c * c * 9 * hw * hw
        if not backward:
            return Case(lambda: F.conv2d(x, w, padding=1), flops=flops, tol=1e-4)
        gout = _randn((n, c, hw, hw), 10)

        def step() -> tuple[Any, ...]:
            x.grad = None
            w.grad = None
            out = F.conv2d(x, w, padding=1)
            out.backward(gout)
            return out.detach(), x.grad, w.grad

        return Case(step, flops=3 * flops, tol=1e-4)

    return setup


def stft_magnitude(quick: bool) -> Case:
    """``torch.stft(...).abs()`` of a batch of 1 s signals at 16 kHz (a spectrogram front end):
    reflect padding, framing, a Hann window, the onesided real transform, magnitudes."""
    batch, length = (2, 256) if quick else (16, 16000)
    n_fft = 32 if quick else 512
    x = _randn((batch, length), 8)
    window = torch.hann_window(n_fft)
    return Case(lambda: torch.stft(x, n_fft, hop_length=n_fft // 4, window=window,
                                   return_complex=True).abs())


def _train_step(params: list[Any], forward: Callable[[], Any]) -> Callable[[], Any]:
    opt = torch.optim.Adam(params, lr=1e-3)

    def step() -> Any:
        loss = forward()
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss.detach()

    return step


def mlp_step(quick: bool) -> Case:
    """One Adam training step of a 784-512-512-10 ReLU MLP on a batch of 128 (cross-entropy)."""
    import torch.nn.functional as F

    sizes, batch = ((16, 8, 8, 4), 8) if quick else ((784, 512, 512, 10), 128)
    rs = np.random.RandomState(11)
    layers = [(_uniform_param((o, i), i, rs), _uniform_param((o,), i, rs))
              for i, o in itertools.pairwise(sizes)]
    x = _tensor(rs.standard_normal((batch, sizes[0])).astype(np.float32))
    y = _tensor(rs.randint(0, sizes[-1], batch).astype(np.int64))

    def forward() -> Any:
        h = x
        for i, (w, b) in enumerate(layers):
            h = F.linear(h, w, b)
            if i < len(layers) - 1:
                h = F.relu(h)
        return F.cross_entropy(h, y)

    params = [p for layer in layers for p in layer]
    return Case(_train_step(params, forward), check_calls=3, tol=1e-3)


def cnn_step(quick: bool) -> Case:
    """One Adam training step of a small CNN on a batch of 64 1x28x28 images: conv 1->16 3x3,
    relu, conv 16->32 3x3 stride 2, relu, mean over space, linear 32->10, cross-entropy."""
    import torch.nn.functional as F

    batch, hw = (4, 8) if quick else (64, 28)
    rs = np.random.RandomState(12)
    w1, b1 = _uniform_param((16, 1, 3, 3), 9, rs), _uniform_param((16,), 9, rs)
    w2, b2 = _uniform_param((32, 16, 3, 3), 144, rs), _uniform_param((32,), 144, rs)
    w3, b3 = _uniform_param((10, 32), 32, rs), _uniform_param((10,), 32, rs)
    x = _tensor(rs.standard_normal((batch, 1, hw, hw)).astype(np.float32))
    y = _tensor(rs.randint(0, 10, batch).astype(np.int64))

    def forward() -> Any:
        h = F.relu(F.conv2d(x, w1, b1))  # (B, 16, hw-2, hw-2)
        h = F.relu(F.conv2d(h, w2, b2, stride=2))  # (B, 32, ~hw/2, ~hw/2)
        h = h.mean((2, 3))  # (B, 32)
        return F.cross_entropy(F.linear(h, w3, b3), y)

    return Case(_train_step([w1, b1, w2, b2, w3, b3], forward), check_calls=3, tol=1e-3)


def small_call(make: Callable[[], tuple[Any, ...]], op: Callable[..., Any]
               ) -> Callable[[bool], Case]:
    """``op(*make())``: one small call whose inputs ``make`` builds (a layout or dtype the
    tiers of ``a + b`` do not serve: the dispatcher's own path)."""

    def setup(quick: bool) -> Case:
        args = make()
        return Case(lambda: op(*args))

    return setup


def _four() -> tuple[Any, ...]:
    return (torch.tensor([1.0, -2.0, 3.0, -4.0]), torch.tensor([5.0, 6.0, 7.0, 8.0]))


def _transposed() -> tuple[Any, ...]:
    t = _randn((4, 4), 5).t()  # strides (1, 4)
    return (t, t)


def _mixed() -> tuple[Any, ...]:
    return (torch.tensor([1.0, 2.0, 3.0, 4.0]),
            torch.tensor([5.0, 6.0, 7.0, 8.0], dtype=torch.float64))


def lstm_cell_step(quick: bool) -> Case:
    """One LSTM-cell step, forward and backward (batch 16, input 64, hidden 128), written in
    functional ops as ``nn.LSTMCell`` computes it; the gradients of the four parameters."""
    import torch.nn.functional as F

    batch, n_in, hidden = (2, 4, 8) if quick else (16, 64, 128)
    rs = np.random.RandomState(13)
    w_ih = _uniform_param((4 * hidden, n_in), hidden, rs)
    w_hh = _uniform_param((4 * hidden, hidden), hidden, rs)
    b_ih = _uniform_param((4 * hidden,), hidden, rs)
    b_hh = _uniform_param((4 * hidden,), hidden, rs)
    x = _tensor(rs.standard_normal((batch, n_in)).astype(np.float32))
    h = _tensor(rs.standard_normal((batch, hidden)).astype(np.float32))
    c = _tensor(rs.standard_normal((batch, hidden)).astype(np.float32))
    params = (w_ih, w_hh, b_ih, b_hh)

    def step() -> Any:
        gates = F.linear(x, w_ih, b_ih) + F.linear(h, w_hh, b_hh)  # (B, 4H)
        i, f, g, o = gates.chunk(4, 1)
        c2 = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h2 = torch.sigmoid(o) * torch.tanh(c2)
        grads = torch.autograd.grad((h2 * h2).sum() + c2.sum(), params)
        return (h2.detach(), *grads)

    return Case(step, tol=1e-3)


def lstm_lm_step(quick: bool) -> Case:
    """One SGD training step of a small LSTM language model as programs write it
    (``nn.Embedding`` 50x16, ``nn.LSTM`` 16 -> 32, ``nn.Linear`` 32 -> 50; sequence 20, batch
    4; cross-entropy, ``clip_grad_norm_``); the weights from the same seeded numpy draws on both
    sides."""
    return _recurrent_lm_step(quick, "LSTM")


def gru_lm_step(quick: bool) -> Case:
    """The same training step with ``nn.GRU`` as the recurrent layer."""
    return _recurrent_lm_step(quick, "GRU")


def _recurrent_lm_step(quick: bool, layer: str) -> Case:
    import torch.nn as nn

    vocab, emb, hidden, steps, batch = (12, 4, 8, 5, 2) if quick else (50, 16, 32, 20, 4)

    class LM(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.emb, self.rnn = nn.Embedding(vocab, emb), getattr(nn, layer)(emb, hidden)
            self.out = nn.Linear(hidden, vocab)

        def forward(self, x: Any) -> Any:
            y, _ = self.rnn(self.emb(x))
            return self.out(y)

    model = LM()
    rs = np.random.RandomState(21)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(_tensor((rs.standard_normal(tuple(p.shape)) * 0.1).astype(np.float32)))
    x = _tensor(rs.randint(0, vocab, (steps, batch)).astype(np.int64))
    y = _tensor(rs.randint(0, vocab, (steps, batch)).astype(np.int64))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = nn.CrossEntropyLoss()

    def step() -> Any:
        opt.zero_grad()
        loss = loss_fn(model(x).reshape(-1, vocab), y.reshape(-1))
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        opt.step()
        return loss.detach()

    return Case(step, check_calls=3, tol=1e-3)


class _GPT:
    """nanoGPT's model in functional form: token and position embeddings, pre-norm blocks of
    causal self-attention and a GELU MLP, a final layer norm and an lm head tied to the token
    embedding."""

    def __init__(self, layers: int, width: int, heads: int, block: int, vocab: int,
                 seed: int) -> None:
        rs = np.random.RandomState(seed)

        def param(*shape: int) -> Any:
            return _tensor((rs.standard_normal(shape) * 0.02).astype(np.float32), True)

        def ones(n: int) -> Any:
            return _tensor(np.ones(n, np.float32), True)

        def zeros(n: int) -> Any:
            return _tensor(np.zeros(n, np.float32), True)

        self.heads = heads
        self.wte, self.wpe = param(vocab, width), param(block, width)
        self.blocks = [
            {"ln1": (ones(width), zeros(width)),
             "attn": (param(3 * width, width), zeros(3 * width)),
             "proj": (param(width, width), zeros(width)), "ln2": (ones(width), zeros(width)),
             "fc": (param(4 * width, width), zeros(4 * width)),
             "fc2": (param(width, 4 * width), zeros(width))}
            for _ in range(layers)]
        self.ln_f = (ones(width), zeros(width))

    def parameters(self) -> list[Any]:
        out = [self.wte, self.wpe, *self.ln_f]
        for blk in self.blocks:
            for pair in blk.values():
                out.extend(pair)
        return out

    def block(self, blk: dict[str, Any], x: Any) -> Any:
        import torch.nn.functional as F

        B, T, C = x.shape
        h = F.layer_norm(x, (C,), *blk["ln1"])
        q, k, v = F.linear(h, *blk["attn"]).split(C, dim=2)  # 3 x (B, T, C)
        q = q.view(B, T, self.heads, C // self.heads).transpose(1, 2)  # (B, nh, T, hs)
        k = k.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        v = v.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, nh, T, hs)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        x = x + F.linear(y, *blk["proj"])
        h = F.layer_norm(x, (C,), *blk["ln2"])
        return x + F.linear(F.gelu(F.linear(h, *blk["fc"])), *blk["fc2"])

    def loss(self, idx: Any, targets: Any) -> Any:
        import torch.nn.functional as F

        T = idx.shape[1]
        x = F.embedding(idx, self.wte) + F.embedding(self.pos[:T], self.wpe)  # (B, T, C)
        for blk in self.blocks:
            x = self.block(blk, x)
        x = F.layer_norm(x, (x.shape[-1],), *self.ln_f)
        logits = F.linear(x, self.wte)  # (B, T, vocab)
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))


def _gpt_data(batch: int, block: int, vocab: int, seed: int) -> tuple[Any, Any]:
    rs = np.random.RandomState(seed)
    idx = _tensor(rs.randint(0, vocab, (batch, block)).astype(np.int64))
    return idx, _tensor(rs.randint(0, vocab, (batch, block)).astype(np.int64))


def gpt_block(quick: bool) -> Case:
    """One GPT block (128 wide, 4 heads) forward and backward on a (12, 64, 128) input: the
    input's gradient and the block's weight gradients."""
    batch, block, width = (2, 8, 16) if quick else (12, 64, 128)
    model = _GPT(1, width, 4, block, 65, 14)
    blk = model.blocks[0]
    params = [p for pair in blk.values() for p in pair]
    x = _randn((batch, block, width), 15, requires_grad=True)

    def step() -> Any:
        out = model.block(blk, x)
        grads = torch.autograd.grad((out * out).mean(), [x, *params])
        return (out.detach(), grads[0], grads[1])

    return Case(step, tol=1e-3)


def nanogpt_step(quick: bool) -> Case:
    """One Adam training step of a nanoGPT-shaped model: 4 layers, 128 wide, 4 heads, block
    64, batch 12, vocabulary 65 (characters)."""
    layers, batch, block, width = (1, 2, 8, 16) if quick else (4, 12, 64, 128)
    model = _GPT(layers, width, 4, block, 65, 16)
    model.pos = torch.arange(block)
    idx, targets = _gpt_data(batch, block, 65, 17)
    return Case(_train_step(model.parameters(), lambda: model.loss(idx, targets)),
                check_calls=3, tol=1e-3)


def _gpt_modules(layers: int, width: int, heads: int, block: int, vocab: int) -> Any:
    """nanoGPT's model as a program writes it: ``nn.Module`` classes (``nn.Embedding``,
    ``nn.LayerNorm``, ``nn.Linear``, a causal attention module, a GELU MLP, pre-norm blocks),
    the lm head's weight tied to the token embedding. Its parameters are ``nn.Parameter``
    objects, which the functional rows do not exercise."""
    import torch.nn as nn
    import torch.nn.functional as F

    class Attention(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.qkv = nn.Linear(width, 3 * width)
            self.out = nn.Linear(width, width)

        def forward(self, x: Any) -> Any:
            B, T, C = x.shape
            q, k, v = self.qkv(x).split(C, dim=2)
            q, k, v = (t.view(B, T, heads, C // heads).transpose(1, 2) for t in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.out(y.transpose(1, 2).contiguous().view(B, T, C))

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
            self.attn = Attention()
            self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(),
                                     nn.Linear(4 * width, width))

        def forward(self, x: Any) -> Any:
            x = x + self.attn(self.ln1(x))
            return x + self.mlp(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.wte, self.wpe = nn.Embedding(vocab, width), nn.Embedding(block, width)
            self.blocks = nn.ModuleList(Block() for _ in range(layers))
            self.ln_f = nn.LayerNorm(width)
            self.head = nn.Linear(width, vocab, bias=False)
            self.head.weight = self.wte.weight  # tied, as nanoGPT ties them
            self.register_buffer("pos", torch.arange(block), persistent=False)

        def forward(self, idx: Any, targets: Any) -> Any:
            T = idx.shape[1]
            x = self.wte(idx) + self.wpe(self.pos[:T])
            for blk in self.blocks:
                x = blk(x)
            logits = self.head(self.ln_f(x))
            return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))

    return GPT()


def nanogpt_module_step(quick: bool) -> Case:
    """nanogpt_step's training step with the model written as ``nn.Module`` classes; the
    weights are set from the same seeded numpy draws on both sides."""
    layers, batch, block, width = (1, 2, 8, 16) if quick else (4, 12, 64, 128)
    model = _gpt_modules(layers, width, 4, block, 65)
    rs = np.random.RandomState(18)
    with torch.no_grad():
        for name, p in model.named_parameters():  # (the tied weight is listed once)
            if name.endswith("bias"):
                p.zero_()
            elif ".ln" in name or name.startswith("ln_f"):
                p.fill_(1.0)
            else:
                p.copy_(_tensor((rs.standard_normal(tuple(p.shape)) * 0.02).astype(np.float32)))
    idx, targets = _gpt_data(batch, block, 65, 17)
    return Case(_train_step(list(model.parameters()), lambda: model(idx, targets)),
                check_calls=3, tol=1e-3)


# --------------------------------------------------------------------------- the table

def _gelu_mul_add(x: Any, y: Any, z: Any) -> Any:
    return torch.nn.functional.gelu(x) * y + z


def fused_chain(compiled: bool) -> Callable[[bool], Case]:
    """``gelu(x) * y + z`` on three float32 tensors; ``compiled``: under Plait, the make_fx
    graph through torch._inductor's compile_fx (built before timing), under PyTorch eager,
    so the row's ratio is Plait compiled / PyTorch eager."""

    def setup(quick: bool) -> Case:
        size = 1000 if quick else N
        x, y, z = _randn((size,), 1), _randn((size,), 2), _randn((size,), 3)
        fn: Callable[..., Any] = _gelu_mul_add
        if compiled and hasattr(torch, "_core"):  # Plait (PyTorch has no torch._core)
            from torch._inductor import config
            from torch._inductor.compile_fx import compile_fx
            from torch.fx.experimental.proxy_tensor import make_fx

            saved, config.compile_in_background = config.compile_in_background, False
            try:
                fn = compile_fx(make_fx(_gelu_mul_add)(x, y, z), [x, y, z])
            finally:
                config.compile_in_background = saved
        return Case(lambda: fn(x, y, z))

    return setup


def _three_ops(x: Any, y: Any) -> Any:
    return (x * y + 1).relu()


def compiled_small_call(quick: bool) -> Case:
    """``(x * y + 1).relu()`` on two 4-float tensors through ``torch.compile(backend="eager")``
    (graph capture and the call's guards, no code generator), against the same call eagerly."""
    x, y = torch.tensor([1.0, -2.0, 3.0, -4.0]), torch.tensor([5.0, 6.0, 7.0, 8.0])
    compiled = torch.compile(_three_ops, backend="eager")
    return Case(lambda: compiled(x, y), baseline=lambda: _three_ops(x, y),
                note=lambda t, eager: f"{(t - eager) * 1e6:.1f} µs over eager (target ≤ 5 µs)")


def _gpt_case(quick: bool, compiled: bool) -> tuple[Callable[[], Any], Any]:
    """nanoGPT_step's step (the same model, data and Adam), its loss compiled with inductor
    when ``compiled``."""
    layers, batch, block, width = (1, 2, 8, 16) if quick else (4, 12, 64, 128)
    model = _GPT(layers, width, 4, block, 65, 16)
    model.pos = torch.arange(block)
    idx, targets = _gpt_data(batch, block, 65, 17)
    loss = torch.compile(model.loss) if compiled else model.loss
    return _train_step(model.parameters(), lambda: loss(idx, targets)), model


def nanogpt_compiled_step(quick: bool) -> Case:
    """nanoGPT's train step with ``torch.compile(model.loss)`` (inductor; backward and Adam
    as the program calls them), against Plait's (or PyTorch's) own eager step."""
    step, _ = _gpt_case(quick, True)
    eager, _ = _gpt_case(quick, False)
    return Case(step, check_calls=3, tol=1e-3, baseline=eager,
                note=lambda t, e: f"compiled / eager of this side {t / e:.2f} (target ≤ 0.7)")


_FIRST_CALL_CACHE: list[str] = []  # the cache folder the cold row filled, for the warm row


def _first_call_in_fresh_process(quick: bool, cache: str) -> tuple[float, float]:
    """(wall seconds of the first compiled train step, its loss) in a new interpreter whose
    inductor cache is ``cache``."""
    import os

    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": cache, "OMP_NUM_THREADS": "2"}
    args = [sys.executable, __file__, "--first-compiled-step"] + (["--quick"] if quick else [])
    out = subprocess.run(args, env=env, check=True, capture_output=True, text=True)
    found = json.loads(out.stdout.strip().splitlines()[-1])
    return found["time"], found["loss"]


def first_compiled_step(warm: bool) -> Callable[[bool], Case]:
    """The first compiled nanoGPT train step in a fresh process: with an empty inductor disk
    cache, or (``warm``) with the one a previous process filled."""

    def setup(quick: bool) -> Case:
        import tempfile

        def measure() -> tuple[float, float]:
            if not _FIRST_CALL_CACHE or not warm:
                _FIRST_CALL_CACHE[:] = [tempfile.mkdtemp(prefix="bench-inductor-")]
                cold = _first_call_in_fresh_process(quick, _FIRST_CALL_CACHE[0])
                if not warm:
                    return cold
            return _first_call_in_fresh_process(quick, _FIRST_CALL_CACHE[0])

        limit = "1 s" if warm else "5 s"
        return Case(lambda: None, measured=measure, tol=1e-3,
                    note=lambda t, _: f"{t:.2f} s (target ≤ {limit})")

    return setup


def _first_step_main(quick: bool) -> None:
    """``--first-compiled-step``: time the first compiled train step, print it as JSON."""
    torch.set_num_threads(2)
    step, _ = _gpt_case(quick, True)
    t0 = time.perf_counter()
    loss = step()
    print(json.dumps({"time": time.perf_counter() - t0, "loss": float(loss)}))


def _layer_op(name: str) -> Callable[[bool], Case]:
    """One call of a layer's functional op on a small input that requires grad (a GPT of width
    16: (2, 8, 16) activations), recorded for backward: the per-call cost a model pays for each
    of its layers when the tensors are small."""

    def setup(quick: bool) -> Case:
        import torch.nn.functional as F

        x = _randn((2, 8, 16), 30, requires_grad=True)
        w, b = _randn((48, 16), 31, requires_grad=True), _randn((48,), 32, requires_grad=True)
        gain, shift = _randn((16,), 33, requires_grad=True), _randn((16,), 34, requires_grad=True)
        heads = _randn((2, 4, 8, 4), 35, requires_grad=True)
        table = _randn((65, 16), 36, requires_grad=True)
        idx = _tensor(np.random.RandomState(37).randint(0, 65, (2, 8)).astype(np.int64))
        logits = _randn((16, 65), 38, requires_grad=True)
        target = _tensor(np.random.RandomState(39).randint(0, 65, 16).astype(np.int64))
        calls = {
            "linear": lambda: F.linear(x, w, b),
            "layer_norm": lambda: F.layer_norm(x, (16,), gain, shift),
            "gelu": lambda: F.gelu(x),
            "softmax": lambda: torch.softmax(x, -1),
            "sdpa": lambda: F.scaled_dot_product_attention(heads, heads, heads, is_causal=True),
            "embedding": lambda: F.embedding(idx, table),
            "cross_entropy": lambda: F.cross_entropy(logits, target),
            "transpose+contiguous": lambda: x.transpose(1, 2).contiguous(),
        }
        return Case(calls[name], tol=1e-3)

    return setup


N = 10_000_000
ROW = (4096, 1024)
QROW = (8, 16)
IMPORT = "import torch (wall, fresh process)"
_LOSS = ("torch.ops.aten.cross_entropy_loss", "torch.optim.Adam")
_GPT_NEEDS = ("torch.nn.functional.scaled_dot_product_attention", "torch.nn.functional.gelu",
              "torch.nn.functional.embedding", "torch.nn.functional.layer_norm")

WORKLOADS: tuple[Workload, ...] = (
    # name, group, target ratio, setup, the ops it needs
    Workload("a + b (4 floats)", "small-op overhead", 1.0, small_op(lambda a, b: a + b)),
    Workload("a + 1.0 (4 floats)", "small-op overhead", 1.0,
             small_op(lambda a, b: a + b, "scalar")),
    Workload("(2,4) + (4,) broadcast", "small-op overhead", 1.0,
             small_op(lambda a, b: b + a, "matrix")),
    Workload("a + b, requires_grad inputs", "small-op overhead", 1.0,
             small_op(lambda a, b: a + b, requires_grad=True)),
    Workload("torch.sub(a, b) (4 floats)", "small-op overhead", 1.0,
             small_call(_four, torch.sub)),
    Workload("(4,4).t() + (4,4).t() transposed", "small-op overhead", 1.0,
             small_call(_transposed, lambda a, b: a + b)),
    Workload("float32 + float64 (4 each)", "small-op overhead", 1.0,
             small_call(_mixed, lambda a, b: a + b)),
    Workload("F.relu (4 floats)", "small-op overhead", 1.0,
             small_call(_four, lambda a, b: torch.nn.functional.relu(a))),
    *(Workload(f"{label}, requires_grad (GPT width 16)", "small-op overhead", 1.0,
               _layer_op(name), needs)
      for label, name, needs in (
          ("F.linear (2,8,16) -> 48", "linear", ()),
          ("F.layer_norm (2,8,16)", "layer_norm", ("torch.nn.functional.layer_norm",)),
          ("F.gelu (2,8,16)", "gelu", ("torch.nn.functional.gelu",)),
          ("softmax (2,8,16)", "softmax", ()),
          ("causal SDPA (2,4,8,4)", "sdpa",
           ("torch.nn.functional.scaled_dot_product_attention",)),
          ("F.embedding 16 of 65 rows", "embedding", ("torch.nn.functional.embedding",)),
          ("F.cross_entropy (16,65)", "cross_entropy", _LOSS[:1]),
          ("transpose+contiguous (2,8,16)", "transpose+contiguous", ()))),
    Workload("add 1e7 float32", "elementwise", 1.0, binary(lambda a, b: a + b, N, 1000)),
    Workload("mul 1e7 float32", "elementwise", 1.0, binary(lambda a, b: a * b, N, 1000)),
    Workload("exp 1e7 float32", "elementwise", 1.0, unary(torch.exp, N, 1000)),
    Workload("sum 1e7 float32", "reduction", 1.0, unary(torch.sum, N, 1000, positive=True)),
    Workload("amax 1e7 float32", "reduction", 1.0, unary(torch.amax, N, 1000)),
    Workload("sum (4096,1024) last dim", "reduction", 1.0,
             rows(lambda x: x.sum(-1), ROW, QROW, positive=True)),
    Workload("amax (4096,1024) last dim", "reduction", 1.0,
             rows(lambda x: x.amax(-1), ROW, QROW)),
    Workload("softmax (4096,1024) last dim", "fused", 1.1,
             rows(lambda x: torch.softmax(x, -1), ROW, QROW)),
    Workload("layer_norm (4096,1024), weight+bias", "fused", 1.1, layer_norm,
             ("torch.layer_norm",)),
    Workload("gelu(x)*y+z 1e7 float32, eager", "compile", 1.0, fused_chain(False),
             ("torch.nn.functional.gelu",)),
    Workload("gelu(x)*y+z 1e7 float32, Plait compile_fx vs PyTorch eager", "compile", 0.5,
             fused_chain(True), ("torch.nn.functional.gelu",)),
    Workload("compiled 3-op function on 4 floats (backend eager), per call", "compile", 1.0,
             compiled_small_call, ("torch.compile",)),
    Workload("nanoGPT train step compiled (inductor)", "compile", 1.0, nanogpt_compiled_step,
             _GPT_NEEDS + _LOSS + ("torch.compile",)),
    Workload("nanoGPT first compiled train step, fresh process, empty disk cache (wall)",
             "compile", 1.0, first_compiled_step(False), _GPT_NEEDS + _LOSS + ("torch.compile",)),
    Workload("nanoGPT first compiled train step, fresh process, warm disk cache (wall)",
             "compile", 1.0, first_compiled_step(True), _GPT_NEEDS + _LOSS + ("torch.compile",)),
    Workload("matmul 256 float32", "matmul", 1.05, matmul(256)),
    Workload("matmul 1024 float32", "matmul", 1.05, matmul(1024)),
    Workload("matmul 2048 float32", "matmul", 1.05, matmul(2048)),
    Workload("conv2d (32,64,56,56) 64x3x3 pad 1, forward", "conv", 1.5, conv2d(False),
             ("torch.conv2d",)),
    Workload("conv2d (32,64,56,56) 64x3x3 pad 1, forward+backward", "conv", 1.5,
             conv2d(True), ("torch.conv2d",)),
    Workload("stft magnitude (16,16000) n_fft 512 hop 128, hann", "spectral", 1.5,
             stft_magnitude, ("torch.stft",)),
    Workload("MLP 784-512-512-10 train step (batch 128, Adam)", "training", 1.5, mlp_step,
             _LOSS),
    Workload("CNN train step (batch 64, 1x28x28, Adam)", "training", 1.5, cnn_step,
             ("torch.conv2d",) + _LOSS),
    Workload("LSTM-cell step, forward+backward (batch 16, 64 -> 128)", "training", 1.0,
             lstm_cell_step),
    Workload("LSTM language model train step (nn.LSTM 16 -> 32, seq 20, batch 4, SGD)",
             "training", 1.0, lstm_lm_step),
    Workload("GRU language model train step (nn.GRU 16 -> 32, seq 20, batch 4, SGD)",
             "training", 1.0, gru_lm_step),
    Workload("GPT block forward+backward (12x64x128, 4 heads)", "training", 1.0, gpt_block,
             _GPT_NEEDS),
    Workload("nanoGPT train step (4 layers, 128 wide, block 64, batch 12, Adam)", "training",
             1.0, nanogpt_step, _GPT_NEEDS + _LOSS),
    Workload("nanoGPT train step, nn.Module model (same shapes, Adam)", "training", 1.0,
             nanogpt_module_step, _GPT_NEEDS + _LOSS + ("torch.nn.Module",)),
)
TARGETS = {IMPORT: 0.15, **{w.name: w.target for w in WORKLOADS}}


# --------------------------------------------------------------------------- running


def missing_op(needs: Sequence[str]) -> str | None:
    """The first of ``needs`` (dotted paths starting at ``torch``) this ``torch`` lacks."""
    import importlib

    for path in needs:
        parts = path.split(".")
        obj: Any = torch
        for i, part in enumerate(parts[1:], start=1):
            try:
                obj = getattr(obj, part)
            except AttributeError:
                try:  # a subpackage not imported yet (torch.optim)
                    obj = importlib.import_module(".".join(parts[:i + 1]))
                except ImportError:
                    return path
            except Exception:  # an op namespace may raise its own error type
                return path
    return None


def checksum(results: Sequence[Any]) -> tuple[float, float]:
    """(sum, sum of absolute values) in float64 over every tensor in ``results``."""
    total = scale = 0.0
    for result in results:
        for t in result if isinstance(result, tuple) else (result,):
            values = np.asarray(t.detach().to(torch.float64).numpy(), dtype=np.float64)
            total += float(values.sum())
            scale += float(np.abs(values).sum())
    return total, scale


def median_time(fn: Callable[[], Any], quick: bool) -> tuple[float, int, int]:
    """(median seconds per call, calls per round, rounds) after a warm-up."""
    t0 = time.perf_counter()
    fn()  # warm-up (the checksum calls before this were warm-up too)
    once = max(time.perf_counter() - t0, 1e-7)
    round_s = 0.01 if quick else ROUND_S
    number = max(1, int(round_s / once))
    rounds = 2 if quick else (ROUNDS if once < 1.0 else 3)
    for _ in range(min(number, 50)):  # settle caches and allocators
        fn()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return statistics.median(times), number, rounds


def paired_median_times(fn: Callable[[], Any], baseline: Callable[[], Any], quick: bool
                        ) -> tuple[float, int, int, float]:
    """:func:`median_time` of ``fn`` and of ``baseline`` with their rounds alternating, so
    that both see the same machine load (the compile rows' notes are differences of the two,
    which separate windows on a shared machine skew): (fn's median, its calls per round,
    rounds, baseline's median)."""
    numbers = []
    rounds = 2 if quick else ROUNDS
    for f in (fn, baseline):
        f()  # warm-up: a compiled function's first calls capture, compile and build
        calls, t0 = 0, time.perf_counter()
        while True:  # the time of one call, from calls past the warm-up
            f()
            calls += 1
            elapsed = time.perf_counter() - t0
            if elapsed >= 0.02 or calls >= 1000:
                break
        once = max(elapsed / calls, 1e-7)
        numbers.append(max(1, int((0.01 if quick else ROUND_S) / once)))
        if once >= 1.0:
            rounds = min(rounds, 3)
        for _ in range(min(numbers[-1], 50)):  # settle caches and allocators
            f()
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(rounds):
        for k, f in enumerate((fn, baseline)):
            t0 = time.perf_counter()
            for _ in range(numbers[k]):
                f()
            times[k].append((time.perf_counter() - t0) / numbers[k])
    return statistics.median(times[0]), numbers[0], rounds, statistics.median(times[1])


def run_workload(w: Workload, quick: bool) -> dict[str, Any]:
    """Time one workload; never raises: a missing op or an error becomes the entry."""
    entry: dict[str, Any] = {"group": w.group, "target": w.target}
    missing = missing_op(w.needs)
    if missing is not None:
        entry["missing"] = missing.removeprefix("torch.ops.aten.")
        return entry
    try:
        case = w.setup(quick)
        if case.measured is not None:
            entry["time"], value = case.measured()
            entry["checksum"], entry["scale"] = value, abs(value)
            entry["number"] = entry["rounds"] = 1
        else:
            results = [case.fn() for _ in range(case.check_calls)]
            entry["checksum"], entry["scale"] = checksum(results)
            if case.baseline is not None:
                (entry["time"], entry["number"], entry["rounds"],
                 entry["baseline"]) = paired_median_times(case.fn, case.baseline, quick)
            else:
                entry["time"], entry["number"], entry["rounds"] = median_time(case.fn, quick)
        entry["tol"] = case.tol
        entry["flops"] = case.flops
        if case.baseline is not None and "baseline" not in entry:
            entry["baseline"] = median_time(case.baseline, quick)[0]
        if case.note is not None:
            entry["note"] = case.note(entry["time"], entry.get("baseline"))
    except (AttributeError, NotImplementedError) as exc:
        entry["missing"] = f"{type(exc).__name__}: {exc}"
    except Exception as exc:  # one broken workload must not stop the suite
        entry["error"] = f"{type(exc).__name__}: {exc}"
    return entry


def import_time(runs: int) -> tuple[float, float]:
    """Median wall time of ``import torch`` in fresh processes, and of a bare interpreter.

    Timed as an installed package runs: with its bytecode cached. An environment that sets
    PYTHONDONTWRITEBYTECODE (some sandboxes do) would otherwise make an editable checkout
    compile every module at each import (about 90 ms here), so the processes get it unset and
    one untimed import writes the caches first."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

    def wall(code: str) -> float:
        subprocess.run([sys.executable, "-c", code], check=True, env=env)  # (caches written)
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True, env=env)
            times.append(time.perf_counter() - t0)
        return statistics.median(times)

    return wall("import torch"), wall("pass")


def selected(only: Sequence[str] = ()) -> list[str]:
    """The row names, in table order (those containing one of ``only`` when given)."""
    names = [IMPORT] + [w.name for w in WORKLOADS]
    return [n for n in names if not only or any(o in n for o in only)]


def run_one(name: str, quick: bool) -> dict[str, Any]:
    """One row's entry (never raises for a workload's own failure)."""
    if name == IMPORT:
        imp, bare = import_time(3 if quick else 10)
        return {"group": "import", "target": TARGETS[IMPORT], "time": imp, "bare_python": bare}
    return run_workload(next(w for w in WORKLOADS if w.name == name), quick)


def info() -> dict[str, Any]:
    """Versions and settings of this side."""
    return {"torch": torch.__version__, "numpy": np.__version__, "python": sys.version.split()[0],
            "threads": torch.get_num_threads(), "workloads": selected()}


def run_all(quick: bool, only: Sequence[str] = ()) -> dict[str, Any]:
    """Every workload (or those whose name contains one of ``only``): ``info()`` plus
    ``results`` (name -> entry)."""
    torch.set_num_threads(2)
    return {**info(), "results": {name: run_one(name, quick) for name in selected(only)}}


def serve(quick: bool) -> None:
    """Worker mode for ``run.py``: print ``info()`` as a JSON line, then answer each workload
    name read from stdin with its entry as a JSON line. ``run.py`` keeps one worker per side and
    alternates between them row by row, so both sides run each row under the same machine
    load."""
    torch.set_num_threads(2)
    print(json.dumps(info()), flush=True)
    for line in sys.stdin:
        print(json.dumps(run_one(line.strip(), quick)), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="tiny sizes, short rounds")
    parser.add_argument("--only", action="append", default=[],
                        help="run only workloads whose name contains this (repeatable)")
    parser.add_argument("--serve", action="store_true",
                        help="worker mode: read workload names on stdin (used by run.py)")
    parser.add_argument("--first-compiled-step", action="store_true",
                        help="time the first compiled nanoGPT train step (the compile rows)")
    args = parser.parse_args()
    if args.first_compiled_step:
        _first_step_main(args.quick)
    elif args.serve:
        serve(args.quick)
    else:
        json.dump(run_all(args.quick, args.only), sys.stdout)


if __name__ == "__main__":
    main()
