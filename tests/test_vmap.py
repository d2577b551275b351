"""torch.vmap: results against a Python loop of the function over the samples, the batching
rules by family, pytrees of inputs and outputs, randomness, chunks, PyTorch's errors, and the
fallback for operators without a rule (which warns, and which the common ops never take)."""

from __future__ import annotations

import warnings

import pytest

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch._functorch import batched as _batched

vmap = torch.vmap
D = torch.float64


def loop(func, *args, in_dims=0):
    """The reference: ``func`` per sample (dim ``in_dims`` of each input, None: shared),
    stacked along dim 0."""
    dims = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)
    size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
    outs = [func(*(a if d is None else a.select(d, i) for a, d in zip(args, dims)))
            for i in range(size)]
    if isinstance(outs[0], tuple):
        return tuple(torch.stack([o[j] for o in outs]) for j in range(len(outs[0])))
    return torch.stack(outs)


def same(a, b, atol=1e-10):
    if isinstance(a, tuple):
        return all(same(x, y, atol) for x, y in zip(a, b, strict=True))
    return a.shape == b.shape and a.dtype == b.dtype and torch.allclose(a, b, atol=atol)


def check(func, *args, in_dims=0):
    """vmap(func) equals the loop, and took no fallback."""
    before = dict(_batched.fallback_counts)
    got = vmap(func, in_dims=in_dims)(*args)
    assert same(got, loop(func, *args, in_dims=in_dims))
    assert _batched.fallback_counts == before, _batched.fallback_counts


x4 = torch.randn(4, 3, 5, dtype=D)
v3 = torch.randn(3, dtype=D)
m35 = torch.randn(3, 5, dtype=D)


@pytest.mark.parametrize("func", [
    torch.sin, torch.exp, torch.abs, torch.sigmoid, torch.tanh, F.relu, F.gelu,
    lambda t: t.clamp(-0.5, 0.5), lambda t: t * 2 + 1, lambda t: t ** 2, lambda t: 1 / (1 + t * t),
    lambda t: torch.where(t > 0, t, -t), lambda t: t.masked_fill(t < 0, 0.0),
    lambda t: (t > 0).float(), lambda t: t.to(torch.float32), lambda t: t.clone(),
])
def test_elementwise_unary(func):
    check(func, x4)


@pytest.mark.parametrize("in_dims", [(0, None), (None, 0), (0, 0), (1, None), (-1, 0)])
def test_elementwise_binary_in_dims(in_dims):
    a = torch.randn(4, 3, 5, dtype=D)
    b = torch.randn(3, 5, 4, dtype=D) if in_dims[1] == 0 and in_dims[0] == -1 else None
    if in_dims == (-1, 0):
        a, b = torch.randn(3, 5, 4, dtype=D), torch.randn(4, 5, dtype=D)
    elif in_dims[1] is None:
        b = torch.randn(5, dtype=D)
        if in_dims[0] == 1:
            a = torch.randn(3, 4, 5, dtype=D)
    elif in_dims[0] is None:
        a, b = torch.randn(3, 1, dtype=D), torch.randn(4, 5, dtype=D)
    else:
        b = torch.randn(4, 1, 5, dtype=D)
    for func in (torch.add, torch.mul, torch.maximum, torch.atan2, lambda p, q: p - 2 * q):
        check(func, a, b, in_dims=in_dims)


@pytest.mark.parametrize("func", [
    lambda t: t.sum(), lambda t: t.sum(0), lambda t: t.sum(-1, keepdim=True), lambda t: t.mean(),
    lambda t: t.mean((0, 1)), lambda t: t.amax(1), lambda t: t.argmax(), lambda t: t.argmax(0),
    lambda t: t.max(1)[0], lambda t: t.max(-1).indices, lambda t: t.softmax(-1),
    lambda t: t.log_softmax(0), lambda t: t.cumsum(1), lambda t: t.prod(1), lambda t: t.var(1),
    lambda t: t.std(), lambda t: t.norm(), lambda t: t.logsumexp(-1), lambda t: t.any(),
    lambda t: (t > 0).all(1), lambda t: t.sort(1)[0], lambda t: t.topk(2, dim=1)[1],
])
def test_reductions_and_dim_ops(func):
    check(func, x4)


def test_structseq_results_and_flat_reductions():
    out = vmap(lambda t: torch.sort(t, 1))(x4)
    assert type(out).__name__ == "sort" and same(out.values, x4.sort(2).values)
    assert same(vmap(lambda t: t.topk(2).indices)(x4), x4.topk(2).indices)
    check(lambda t: t.prod(), x4)
    check(lambda t: t.argmin(), x4)
    check(lambda t: t.cummax(0).values, x4)


def test_masked_fill_with_a_per_sample_value():
    mask = torch.rand(3, 5) > 0.5
    check(lambda t, v: t.masked_fill(mask, v), x4, torch.randn(4, dtype=D))


def test_cross_broadcasts_an_unbatched_operand():
    a, b = torch.randn(4, 2, 3, dtype=D), torch.randn(1, 3, dtype=D)
    check(lambda p, q: torch.linalg.cross(p, q), a, b, in_dims=(0, None))
    check(lambda p, q: torch.cross(p, q, dim=0), a.transpose(1, 2), b.t(), in_dims=(0, None))


def test_layer_norm_with_per_sample_weights():
    x, w, b = (torch.randn(4, 2, 5, dtype=D), torch.randn(4, 5, dtype=D),
               torch.randn(4, 5, dtype=D))
    check(lambda p, q, r: F.layer_norm(p, (5,), q, r), x, w, b)
    from torch.func import grad

    def loss(q, p):
        return F.layer_norm(p, (5,), q).sin().sum()

    got = vmap(grad(loss))(w, x)
    for i in range(4):
        wi = w[i].clone().requires_grad_()
        loss(wi, x[i]).backward()
        assert torch.allclose(got[i], wi.grad)


def test_attention():
    q, k, v = (torch.randn(3, 2, 4, 6, dtype=D) for _ in range(3))
    check(F.scaled_dot_product_attention, q, k, v)
    check(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, is_causal=True), q, k, v)
    check(F.scaled_dot_product_attention, q, k[0], v[0], in_dims=(0, None, None))
    from torch.func import grad

    def loss(key, query, value):
        return F.scaled_dot_product_attention(query, key, value).pow(2).sum()

    got = vmap(grad(loss), in_dims=(None, 0, 0))(k[0], q, v)
    for i in range(3):
        key = k[0].clone().requires_grad_()
        loss(key, q[i], v[i]).backward()
        assert torch.allclose(got[i], key.grad)


def test_zero_dim_samples():
    s = torch.randn(6, dtype=D)
    for func in (lambda t: t.sum(), lambda t: t.sum(0), lambda t: t * 3, lambda t: t.unsqueeze(0),
                 lambda t: t.reshape(1, 1), lambda t: t.expand(2, 3), lambda t: t.softmax(0)):
        check(func, s)


@pytest.mark.parametrize("func", [
    lambda t: t.view(15), lambda t: t.reshape(5, 3), lambda t: t.permute(1, 0), lambda t: t.t(),
    lambda t: t.transpose(0, 1), lambda t: t.unsqueeze(-1), lambda t: t.unsqueeze(0).squeeze(),
    lambda t: t[:, 1:4:2], lambda t: t[1], lambda t: t[..., -1], lambda t: t.flatten(),
    lambda t: t.unflatten(1, (5, 1)), lambda t: t.movedim(0, 1), lambda t: t.split(2, 1)[1],
    lambda t: t.chunk(3, 0)[0], lambda t: t.unbind(1)[2], lambda t: t.diagonal(),
    lambda t: t.flip(1), lambda t: t.roll(1), lambda t: t.roll(2, 1), lambda t: t.repeat(2, 1, 1),
    lambda t: t[None].expand(2, 3, 5), lambda t: t.narrow(1, 1, 2), lambda t: t.contiguous(),
    lambda t: t.tril(), lambda t: t.unfold(1, 2, 1),
])
def test_views_and_shape_ops(func):
    check(func, x4)


def test_views_of_a_moved_batch_dim():
    x = torch.randn(3, 4, 5, dtype=D)  # batch at dim 1: each sample is not contiguous
    check(lambda t: t.reshape(-1), x, in_dims=1)
    check(lambda t: t.t().reshape(5, 3), x, in_dims=1)
    check(lambda t: t.view(3, 5, 1), x, in_dims=1)
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        vmap(lambda t: t.view(-1), in_dims=1)(x)  # as for one sample x[:, i]


def test_as_strided_addresses_each_sample_from_its_own_start():
    # PyTorch's rule: sizes, strides and offset are those of one sample; each sample's view
    # starts where that sample does (sample i's offset plus i times the batch stride)
    got = vmap(lambda t: t.as_strided((2, 2), (5, 1), 1))(x4)
    expected = torch.stack([s.flatten()[torch.tensor([1, 2, 6, 7])].view(2, 2) for s in x4])
    assert same(got, expected)


@pytest.mark.parametrize("in_dims", [(0, None), (None, 0), (0, 0)])
def test_matmul_family(in_dims):
    a = torch.randn(4, 3, 5, dtype=D) if in_dims[0] == 0 else torch.randn(3, 5, dtype=D)
    b = torch.randn(4, 5, 2, dtype=D) if in_dims[1] == 0 else torch.randn(5, 2, dtype=D)
    check(torch.mm, a, b, in_dims=in_dims)
    check(torch.matmul, a, b, in_dims=in_dims)
    check(lambda p, q: torch.einsum("ij,jk->ik", p, q), a, b, in_dims=in_dims)
    bias = torch.randn(2, dtype=D)
    check(lambda p, q: torch.addmm(bias, p, q), a, b, in_dims=in_dims)
    v = torch.randn(4, 5, dtype=D) if in_dims[1] == 0 else torch.randn(5, dtype=D)
    check(torch.mv, a, v, in_dims=in_dims)
    u = torch.randn(4, 5, dtype=D) if in_dims[0] == 0 else torch.randn(5, dtype=D)
    check(torch.dot, u, v, in_dims=in_dims)
    ba = torch.randn(4, 2, 3, 5, dtype=D) if in_dims[0] == 0 else torch.randn(2, 3, 5, dtype=D)
    bb = torch.randn(4, 2, 5, 2, dtype=D) if in_dims[1] == 0 else torch.randn(2, 5, 2, dtype=D)
    check(torch.bmm, ba, bb, in_dims=in_dims)
    w, bl = torch.randn(6, 5, dtype=D), torch.randn(6, dtype=D)
    check(lambda p: F.linear(p, w, bl), a if in_dims[0] == 0 else u.unsqueeze(0).expand(4, 5))


def test_cat_and_stack_mix_batched_and_unbatched():
    a, b = torch.randn(4, 2, 3, dtype=D), torch.randn(2, 3, dtype=D)
    check(lambda p, q: torch.cat([p, q], 0), a, b, in_dims=(0, None))
    check(lambda p, q: torch.cat([q, p, q], -1), a, b, in_dims=(0, None))
    check(lambda p, q: torch.stack([p, q], 1), a, b, in_dims=(0, None))


def test_indexing_and_gather():
    x = torch.randn(4, 5, 3, dtype=D)
    idx = torch.tensor([4, 0, 2])
    bidx = torch.randint(0, 5, (4, 3))
    check(lambda t: t[idx], x)
    check(lambda t: t[:, torch.tensor([2, 0])], x)
    check(lambda t: t[idx, 1:], x)
    check(lambda t, i: t[i], x, bidx)
    check(lambda t, i: t[:, i.clamp(max=2)], x, bidx)
    check(lambda t, i: t[i], x[0], bidx, in_dims=(None, 0))
    check(lambda t, i: t.index_select(0, i), x, bidx)
    check(lambda t, i: t.gather(0, i.unsqueeze(1).expand(3, 3)), x, bidx)
    table = torch.randn(5, 2, dtype=D)
    check(lambda i: F.embedding(i, table), bidx)
    check(lambda t, i: F.embedding(i, t), x[..., :2], bidx)


def test_copying_composites_copy_the_whole_batch():
    check(lambda t: t.repeat_interleave(2, dim=1), x4)
    check(lambda t: t.repeat_interleave(3), x4)
    check(lambda t: t.narrow_copy(1, 1, 3), x4)
    v = torch.randn(4, 3, dtype=D)
    check(torch.diag, v)
    check(lambda t: torch.diag_embed(t, offset=1), v)
    check(torch.diagflat, x4)
    check(lambda t: torch.select_scatter(torch.zeros(2, 3, dtype=D), t, 0, 1), v)
    check(lambda t: torch.slice_scatter(torch.zeros(3, 5, dtype=D), t[:, :2], 1, 0, 2), x4)


def test_setitem_and_inplace_write_the_batched_input():
    x = torch.randn(4, 3, dtype=D)
    expected = x.clone()
    expected[:, 1] = 7.0
    expected.mul_(2)

    def write(t):
        t[1] = 7.0
        return t.mul_(2)

    out = vmap(write)(x)
    assert torch.equal(x, expected) and torch.equal(out, expected)


def test_inplace_into_an_unbatched_tensor_is_an_error():
    with pytest.raises(RuntimeError, match="vmapped over but `self` not being vmapped"):
        vmap(lambda t, u: u.add_(t), in_dims=(0, None))(torch.ones(3, 2), torch.ones(2))


@pytest.mark.parametrize("weights", [False, True])
def test_convolution_batches_samples_and_weights(weights):
    x = torch.randn(3, 2, 2, 7, 7, dtype=D)
    w = torch.randn(3, 4, 2, 3, 3, dtype=D) if weights else torch.randn(4, 2, 3, 3, dtype=D)
    b = torch.randn(4, dtype=D)
    dims = (0, 0 if weights else None, None)
    check(lambda t, k, c: F.conv2d(t, k, c, stride=2, padding=1), x, w, b, in_dims=dims)
    check(lambda t, k, c: F.conv2d(t[0], k, c), x, w, b, in_dims=dims)  # (C, H, W) samples
    wt = torch.randn(3, 2, 4, 3, 3, dtype=D) if weights else torch.randn(2, 4, 3, 3, dtype=D)
    check(lambda t, k: F.conv_transpose2d(t, k, stride=2), x, wt, in_dims=dims[:2])
    x1 = torch.randn(3, 2, 2, 9, dtype=D)
    w1 = torch.randn(4, 1, 3, dtype=D)
    check(lambda t: F.conv1d(t, w1, groups=2), x1)


def test_pooling():
    x = torch.randn(3, 2, 2, 6, 6, dtype=D)
    check(lambda t: F.max_pool2d(t, 2), x)
    check(lambda t: F.avg_pool2d(t, 3, stride=1, padding=1), x)


def test_losses_as_compositions():
    logits = torch.randn(4, 6, 3, dtype=D)
    target = torch.randint(0, 3, (4, 6))
    target[0, 1] = -100
    weight = torch.rand(3, dtype=D)
    for how in ("mean", "sum", "none"):
        check(lambda p, t, r=how: F.cross_entropy(p, t, reduction=r), logits, target)
        check(lambda p, t, r=how: F.cross_entropy(p, t, weight=weight, reduction=r), logits,
              target)
        check(lambda p, t, r=how: F.nll_loss(p.log_softmax(-1), t, reduction=r), logits, target)
    check(lambda p, t: F.cross_entropy(p[0], t[0]), logits, target.clamp(min=0))  # (C,) samples
    check(lambda p, q: F.mse_loss(p, q), logits, logits.flip(0))
    check(lambda p: F.layer_norm(p, (3,), torch.ones(3, dtype=D), torch.zeros(3, dtype=D)),
          logits)


def test_nested_vmap_and_pytrees():
    x = torch.randn(2, 3, 4, dtype=D)
    y = torch.randn(3, dtype=D)
    got = vmap(vmap(lambda a, b: (a * b).sum(), in_dims=(0, 0)), in_dims=(0, None))(x, y)
    assert same(got, (x * y[:, None]).sum(-1))
    inner = vmap(lambda a: a.exp(), in_dims=1)
    assert same(vmap(inner)(x), x.exp().transpose(1, 2))

    def f(pair, d, scale):
        return {"s": pair[0] + pair[1] * scale, "t": d["k"].sum()}

    p0, p1 = torch.randn(5, 2, dtype=D), torch.randn(2, 5, dtype=D)
    k = torch.randn(3, 5, dtype=D)
    out = vmap(f, in_dims=((0, 1), {"k": 1}, None))((p0, p1), {"k": k}, 2.0)
    assert same(out["s"], p0 + p1.t() * 2.0) and same(out["t"], k.sum(0))


def test_out_dims():
    x = torch.randn(4, 3, dtype=D)
    a, b = vmap(lambda t: (t * 2, t.sum()), out_dims=(1, 0))(x)
    assert same(a, (x * 2).t()) and same(b, x.sum(1))
    a, c = vmap(lambda t: (t, torch.ones(2, dtype=D)), out_dims=(0, None))(x)
    assert same(a, x) and same(c, torch.ones(2, dtype=D))
    # an output that does not depend on the batch is expanded over it
    assert same(vmap(lambda t: torch.zeros(2, dtype=D))(x), torch.zeros(4, 2, dtype=D))
    assert vmap(lambda t: (t, 3), out_dims=(0, None))(x)[1] == 3


def test_chunk_size_gives_the_same_results():
    x = torch.randn(7, 3, dtype=D)
    f = vmap(lambda t: (t.softmax(0), t.sum()), chunk_size=3)
    assert same(f(x), vmap(lambda t: (t.softmax(0), t.sum()))(x))


def test_randomness():
    x = torch.zeros(5, 1000)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        vmap(lambda t: t + torch.randn(1000))(x)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        vmap(lambda t: F.dropout(t, 0.5))(x + 1)
    diff = vmap(lambda t: t + torch.randn(1000), randomness="different")(x)
    assert diff.shape == (5, 1000) and not torch.equal(diff[0], diff[1])
    same_draw = vmap(lambda t: t + torch.randn(1000), randomness="same")(x)
    assert torch.equal(same_draw[0], same_draw[1])
    drop = vmap(lambda t: F.dropout(t, 0.5), randomness="different")(x + 1)
    assert not torch.equal(drop[0], drop[1]) and set(drop.unique().tolist()) <= {0.0, 2.0}
    drop = vmap(lambda t: F.dropout(t, 0.5), randomness="same")(x + 1)
    assert torch.equal(drop[0], drop[3])
    like = vmap(lambda t: torch.rand_like(t), randomness="different")(x)
    assert not torch.equal(like[0], like[1])
    with pytest.raises(RuntimeError, match="Only allowed values for randomness"):
        vmap(torch.sin, randomness="sometimes")


def test_errors_as_pytorch_raises_them():
    x = torch.randn(3, 2)
    with pytest.raises(ValueError, match="same size in the mapped dimension"):
        vmap(torch.add)(x, torch.randn(4, 2))
    with pytest.raises(ValueError, match="in_dims is not compatible with the structure"):
        vmap(torch.add, in_dims=(0, 0, 0))(x, x)
    with pytest.raises(ValueError, match="expected `in_dims` to be int or a"):
        vmap(torch.add, in_dims=[0, 0])(x, x)
    with pytest.raises(ValueError, match="must only return Tensors"):
        vmap(lambda t: 3)(x)
    with pytest.raises(ValueError, match="We cannot vmap over non-Tensor arguments"):
        vmap(lambda t, s: t * s, in_dims=(0, 0))(x, 2.0)
    # (whitespace-tolerant: importing tensordict, as test_libraries does, replaces vmap's
    # input stage with its own, whose message breaks lines as PyTorch's does)
    with pytest.raises(ValueError, match=r"expected in_dim to\s+satisfy\s+-2 <= in_dim < 2"):
        vmap(torch.sin, in_dims=2)(x)
    with pytest.raises(ValueError, match="expected `in_dims` to be int or a"):
        vmap(torch.sin, in_dims=None)(x)
    with pytest.raises(ValueError, match="at least one Tensor to vmap over"):
        vmap(torch.add, in_dims=(None, None))(x, x)
    with pytest.raises(ValueError, match="got no inputs"):
        vmap(lambda: torch.ones(2))()
    with pytest.raises(ValueError, match="chunk_size should be None or greater than 0"):
        vmap(torch.sin, chunk_size=0)
    with pytest.raises(RuntimeError, match=r"calling \.item\(\)"):
        vmap(lambda t: t.sum().item())(x)
    with pytest.raises(RuntimeError, match=r"calling \.item\(\)"):
        vmap(lambda t: torch.tensor(t.tolist()))(x)
    with pytest.raises(RuntimeError, match="numpy\\(\\) is not supported on a batched tensor"):
        vmap(lambda t: torch.from_numpy(t.numpy()))(x)
    with pytest.raises(RuntimeError, match="data-dependent control flow"):
        vmap(lambda t: t if t.sum() > 0 else -t)(x)
    with pytest.raises(ValueError, match="can not return a BatchedTensor when out_dim is None"):
        vmap(torch.sin, out_dims=None)(x)


def test_an_op_without_rule_falls_back_to_a_loop_and_warns_once():
    x = torch.randn(4, 3, 3, dtype=D) + 3 * torch.eye(3, dtype=D)
    b = torch.randn(4, 3, dtype=D)
    _batched._fallback_warned.discard("aten::linalg_solve")
    before = _batched.fallback_counts.get("aten::linalg_solve", 0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = vmap(torch.linalg.solve)(x, b)
        vmap(torch.linalg.solve)(x, b)
    assert same(got, loop(torch.linalg.solve, x, b))
    notes = [w for w in caught if "batching rule for aten::linalg_solve" in str(w.message)]
    assert len(notes) == 1
    assert _batched.fallback_counts["aten::linalg_solve"] == before + 2


def _per_sample_grads(model, x, y, loss_fn):
    from torch.func import functional_call, grad

    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p, xi, yi):
        return loss_fn(functional_call(model, p, (xi.unsqueeze(0),)), yi.unsqueeze(0))

    return vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)


class _Last(nn.Module):
    """A sequence model's last step (the output of an RNN, or a module's tensor), classified."""

    def __init__(self, body: nn.Module, width: int) -> None:
        super().__init__()
        self.body, self.head = body, nn.Linear(width, 3)

    def forward(self, x):
        out = self.body(x)
        out = out[0] if isinstance(out, tuple) else out
        return self.head(out[:, -1])


@pytest.mark.parametrize("kind", ["mlp", "cnn", "layernorm_gelu", "embedding", "lstm", "gru",
                                  "transformer", "bce"])
def test_per_sample_gradients_of_common_models_take_no_fallback(kind):
    torch.manual_seed(0)
    y = torch.randint(0, 3, (5,))
    loss_fn = F.cross_entropy
    if kind == "mlp":
        model, x = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3)), torch.randn(5, 4)
    elif kind == "cnn":
        model = nn.Sequential(nn.Conv2d(1, 3, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Conv2d(3, 2, 3, stride=2), nn.Tanh(), nn.Flatten(),
                              nn.Linear(2, 3))
        x = torch.randn(5, 1, 6, 6)
    elif kind == "layernorm_gelu":
        model = nn.Sequential(nn.Linear(4, 8), nn.LayerNorm(8), nn.GELU(), nn.Dropout(0.0),
                              nn.Linear(8, 3))
        x = torch.randn(5, 4)
    elif kind == "embedding":
        model = nn.Sequential(nn.Embedding(10, 4), nn.Flatten(), nn.Linear(8, 3))
        x = torch.randint(0, 10, (5, 2))
    elif kind in ("lstm", "gru"):
        rnn = (nn.LSTM if kind == "lstm" else nn.GRU)(4, 6, batch_first=True)
        model, x = _Last(rnn, 6), torch.randn(5, 3, 4)
    elif kind == "transformer":
        layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
        model, x = _Last(layer, 8), torch.randn(5, 4, 8)
    else:
        model, x = nn.Sequential(nn.Linear(4, 3), nn.Sigmoid()), torch.randn(5, 4)
        y, loss_fn = torch.rand(5, 3), F.binary_cross_entropy
    before = dict(_batched.fallback_counts)
    grads = _per_sample_grads(model, x, y, loss_fn)
    assert _batched.fallback_counts == before, _batched.fallback_counts
    for i in range(5):
        model.zero_grad()
        loss_fn(model(x[i: i + 1]), y[i: i + 1]).backward()
        for name, p in model.named_parameters():
            assert torch.allclose(grads[name][i], p.grad, atol=1e-5), name


def test_ordinary_backward_through_vmap():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
    x = torch.randn(6, 4)
    vmap(model)(x).pow(2).sum().backward()
    through_vmap = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    model(x).pow(2).sum().backward()
    for got, p in zip(through_vmap, model.parameters(), strict=True):
        assert torch.allclose(got, p.grad, atol=1e-6)
    xr = torch.randn(6, 4, dtype=D, requires_grad=True)
    vmap(lambda t: (t.sin() * t).sum())(xr).sum().backward()
    x0 = xr.detach()
    assert torch.allclose(xr.grad, x0.cos() * x0 + x0.sin())


def test_batched_tensor_queries_and_no_lasting_cost():
    from torch._core import config

    active = config.state.keys_active
    seen = []
    vmap(lambda t: seen.append((torch._C._functorch.is_batchedtensor(t), t.shape)) or t)(x4)
    assert seen == [(True, torch.Size([3, 5]))]
    assert not torch._C._functorch.is_batchedtensor(x4)
    assert config.state.keys_active == active  # the mode is gone with the vmap


def test_clamp_with_tensor_bounds_has_a_rule():
    lo, hi = torch.full((3, 5), -0.3, dtype=D), torch.full((5,), 0.4, dtype=D)
    check(lambda t: t.clamp(lo, hi), x4)
    check(lambda t, b: t.clamp(max=b), x4, torch.randn(4, 3, 5, dtype=D))
