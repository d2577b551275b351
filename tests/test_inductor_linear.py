"""torch._inductor: a linear layer's addmm runs as the backend's fused linear, and the bias
gradient read through AOT autograd's (B * T, C) view joins the layer norm backward template;
values against numpy, gradients against eager autograd."""

from __future__ import annotations

import numpy as np
import pytest

import torch
import torch.nn.functional as F
from torch._inductor import config
from torch._inductor.compile_fx import compile_fx
from torch.fx.experimental.proxy_tensor import make_fx

aten = torch.ops.aten


@pytest.fixture(autouse=True)
def _settings(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(config, "cache_dir", str(tmp_path_factory.getbasetemp() / "lin-cache"))
    monkeypatch.setattr(config, "compile_in_background", False)


def _np(t: torch.Tensor) -> np.ndarray:
    return t.detach().numpy().astype(np.float64)


def _targets(compiled) -> list:
    return [n.target for n in compiled.gm.graph.nodes if n.op == "call_function"]


def _linears(x, w, b, w2, b2, m):
    h = aten.addmm(b, x, aten.t(w))  # a linear layer as AOT autograd traces it
    scaled = aten.addmm(b2, h, aten.t(w2), beta=0.5)  # beta: not a linear
    plain = aten.addmm(b2, h, m)  # no transposed weight: not a linear
    return aten.relu(h), scaled, plain


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_addmm_of_a_transposed_weight_runs_as_linear(dtype) -> None:
    gen = torch.Generator().manual_seed(2)
    x, w = torch.randn(9, 7, generator=gen, dtype=dtype), torch.randn(5, 7, generator=gen,
                                                                      dtype=dtype)
    b, w2 = torch.randn(5, generator=gen, dtype=dtype), torch.randn(3, 5, generator=gen,
                                                                   dtype=dtype)
    b2, m = torch.randn(3, generator=gen, dtype=dtype), torch.randn(5, 3, generator=gen,
                                                                   dtype=dtype)
    inputs = [x, w, b, w2, b2, m]
    compiled = compile_fx(make_fx(_linears)(*inputs), inputs)
    targets = _targets(compiled)
    assert targets.count(aten.linear.default) == 1
    assert targets.count(aten.addmm.default) == 2
    assert targets.count(aten.t.default) == 1  # the linear's own transpose is gone
    relu, scaled, plain = compiled(*inputs)
    xn, wn, bn, w2n, b2n, mn = (_np(t) for t in inputs)
    h = xn @ wn.T + bn
    tol = 1e-5 if dtype == torch.float32 else 1e-12
    for got, want in ((relu, np.maximum(h, 0)), (scaled, 0.5 * b2n + h @ w2n.T),
                      (plain, b2n + h @ mn)):
        assert got.dtype == dtype
        np.testing.assert_allclose(_np(got), want, rtol=tol, atol=tol)


def test_the_setting_keeps_addmm(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(config, "linear_epilogue", False)
    x, w, b = torch.randn(4, 3), torch.randn(2, 3), torch.randn(2)

    def fn(x, w, b):
        return aten.addmm(b, x, aten.t(w))

    compiled = compile_fx(make_fx(fn)(x, w, b), [x, w, b])
    assert aten.addmm.default in _targets(compiled)
    assert aten.linear.default not in _targets(compiled)
    np.testing.assert_allclose(_np(compiled(x, w, b)), _np(x) @ _np(w).T + _np(b), rtol=1e-5,
                               atol=1e-5)


def test_a_residual_block_trains_as_eager_with_its_bias_sum_in_the_template(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # x1's gradient is the residual stream's plus the layer norm's input gradient; its sum
    # over the (B * T) rows of the view F.linear's backward reads is b0's gradient
    gen = torch.Generator().manual_seed(8)
    y = torch.randn(2, 5, 16, generator=gen)

    def param(*shape: int) -> torch.Tensor:
        return (torch.randn(*shape, generator=gen) * 0.3).requires_grad_()

    w0, b0, w1, b1 = param(16, 16), param(16), param(16, 16), param(16)
    ln_w, ln_b = (torch.rand(16, generator=gen) + 0.5).requires_grad_(), param(16)
    params = [w0, b0, w1, b1, ln_w, ln_b]

    def block(y, w0, b0, w1, b1, ln_w, ln_b):
        x1 = y + F.linear(y, w0, b0)
        x2 = x1 + F.linear(F.layer_norm(x1, (16,), ln_w, ln_b), w1, b1)
        return (x2 * x2).mean()

    from torch._inductor import compile_fx as compile_fx_module

    graphs = []
    compiled_graph = compile_fx_module.CompiledGraph
    monkeypatch.setattr(compile_fx_module, "CompiledGraph",
                        lambda gm: graphs.append(compiled_graph(gm)) or graphs[-1])
    got = torch.compile(block)(y, *params)
    got_grads = torch.autograd.grad(got, params)
    want = block(y, *params)
    want_grads = torch.autograd.grad(want, params)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
    for g, e in zip(got_grads, want_grads):
        torch.testing.assert_close(g, e, rtol=1e-4, atol=1e-5)
    forward, backward = graphs
    assert _targets(forward).count(aten.linear.default) == 2
    assert aten.addmm.default not in _targets(forward)
    norms = [t for t in backward.templates if type(t).__name__ == "LayerNormBackward"]
    assert [(t.residual, t.column_sum) for t in norms] == [(True, True)]
    assert [t.calls for t in norms] == [{"template": 1, "library": 0}]


def _views(x, y):
    a = aten.t(aten.view(x, [6, 4]))  # (4, 6), strides (1, 4)
    b = aten.select(aten.slice(aten.transpose(x, 0, 1), 0, 1, None, 2), 1, 2)  # offset 2
    c = aten.expand(aten.unsqueeze(aten.reshape(y, [3]), 0), [2, 3])  # stride 0
    d = aten.permute(x, [1, 0])
    return a, b, c, d, aten.reshape(d, [24]) * 1.0  # a reshape of a non-contiguous: a copy


def test_views_are_built_from_their_traced_layouts() -> None:
    x, y = torch.arange(24.0).reshape(4, 6), torch.arange(3.0).reshape(1, 3)
    compiled = compile_fx(make_fx(_views)(x, y), [x, y])
    assert compiled.source.count("if not _grad else") == 10  # every view but the copy
    with torch.no_grad():
        compiled(x, y)  # the operators, whose layouts the next calls reuse
        got = compiled(x, y)
        want = _views(x, y)
    for g, w in zip(got[:4], want[:4]):
        assert (tuple(g.shape), g.stride(), g.storage_offset()) == (
            tuple(w.shape), w.stride(), w.storage_offset())
        assert g.data_ptr() == w.data_ptr()  # views of the input's memory, as eager's
        np.testing.assert_array_equal(g.numpy(), w.numpy())
    np.testing.assert_array_equal(got[4].numpy(), np.arange(24.0).reshape(4, 6).T.ravel())
    before = got[0]._version
    x.add_(1.0)
    assert got[0]._version == before + 1 and float(got[0][0, 0]) == 1.0


def _strided_views(x):
    return aten.t(x), aten.select(aten.unsqueeze(aten.permute(x, [1, 0]), 1), 2, 3)


def test_views_of_another_layout_or_with_grad_go_to_the_operators() -> None:
    x = torch.arange(24.0).reshape(4, 6)
    compiled = compile_fx(make_fx(_strided_views)(x), [x])
    # the layout of the call before at another offset (rows 1..4 of a bigger tensor): built
    # directly; the same shape with transposed strides: the operators, then built directly
    for other in (x, torch.arange(30.0).reshape(5, 6)[1:], torch.arange(24.0).reshape(6, 4).t(),
                  torch.arange(30.0).reshape(5, 6)[1:]):
        with torch.no_grad():
            got, want = compiled(other), _strided_views(other)
        for g, w in zip(got, want):
            assert (tuple(g.shape), g.stride(), g.storage_offset(), g.data_ptr()) == (
                tuple(w.shape), w.stride(), w.storage_offset(), w.data_ptr())
            np.testing.assert_array_equal(g.numpy(), w.numpy())
    leaf = torch.arange(24.0).reshape(4, 6).requires_grad_()
    got = compiled(leaf)  # grad mode on: the operators record the views' backward
    assert got[0].grad_fn is not None
    (got[0].sum() + got[1].sum() * 2.0).backward()
    want = np.ones((4, 6))
    want[3, :] += 2.0  # select(…, 2, 3) of the permuted input reads row 3
    np.testing.assert_array_equal(leaf.grad.numpy(), want)


def _cross_entropy(logits, target):
    logp = aten._log_softmax(logits, 1, False)
    loss, total = aten.nll_loss_forward(logp, target, None, 1, -100)
    grad = aten.nll_loss_backward(aten.mul(loss, 0.0) + 2.0, logp, target, None, 1, -100,
                                  total)
    return loss, total, grad


def _cross_entropy_np(logits: np.ndarray, target: np.ndarray):
    z = logits - logits.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    kept = target != -100
    total = kept.sum()
    loss = -logp[np.arange(len(target))[kept], target[kept]].sum() / total
    grad = np.zeros_like(logp)
    grad[np.arange(len(target))[kept], target[kept]] = -2.0 / total
    return loss, total, grad


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_nll_loss_templates(dtype) -> None:
    gen = torch.Generator().manual_seed(4)
    logits = torch.randn(11, 7, generator=gen, dtype=dtype) * 3
    target = torch.tensor([0, 6, -100, 3, 3, 1, -100, 5, 2, 0, 4])
    compiled = compile_fx(make_fx(_cross_entropy)(logits, target), [logits, target])
    assert [type(t).__name__ for t in compiled.templates] == ["NllLoss", "NllLoss"]
    loss, total, grad = compiled(logits, target)
    assert [t.calls for t in compiled.templates] == [{"template": 1, "library": 0}] * 2
    want_loss, want_total, want_grad = _cross_entropy_np(_np(logits), target.numpy())
    tol = 1e-5 if dtype == torch.float32 else 1e-12
    assert loss.dtype == dtype and loss.shape == () and total.shape == ()
    assert abs(float(loss) - want_loss) < tol and float(total) == want_total
    np.testing.assert_allclose(_np(grad), want_grad, rtol=tol, atol=tol)
    # every target ignored: 0 / 0, as PyTorch gives it
    loss, total, grad = compiled(logits, torch.full((11,), -100))
    assert np.isnan(float(loss)) and float(total) == 0.0
    # a target out of range: the operator's error
    with pytest.raises(IndexError, match="out of bounds"):
        compiled(logits, torch.tensor([0, 7, 1, 1, 1, 1, 1, 1, 1, 1, 1]))
    assert compiled.templates[0].calls["library"] == 1


def _heads(q, k, v, y):
    parts = [aten.unsqueeze(aten.transpose(t, 1, 2), 2) for t in (q, k, v)]
    joined = aten.cat(parts, 2)  # (B, T, 3, H, D) from three (B, H, T, D)
    last = aten.cat([y, aten.t(y)], -1)  # along the last dim, one input transposed
    return joined, last, aten.clone(aten.transpose(q, 1, 2),
                                    memory_format=torch.contiguous_format)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_cat_and_contiguous_clone_template(dtype) -> None:
    gen = torch.Generator().manual_seed(6)
    q, k, v = (torch.randn(2, 3, 5, 4, generator=gen, dtype=dtype) for _ in range(3))
    y = torch.randn(6, 6, generator=gen, dtype=dtype)
    compiled = compile_fx(make_fx(_heads)(q, k, v, y), [q, k, v, y])
    assert [type(t).__name__ for t in compiled.templates] == ["StridedCopy"] * 3
    joined, last, copy = compiled(q, k, v, y)
    assert [t.calls for t in compiled.templates] == [{"template": 1, "library": 0}] * 3
    qn, kn, vn, yn = (t.numpy() for t in (q, k, v, y))
    want = np.stack([t.transpose(0, 2, 1, 3) for t in (qn, kn, vn)], axis=2)
    for got, expected in ((joined, want), (last, np.concatenate([yn, yn.T], -1)),
                          (copy, qn.transpose(0, 2, 1, 3))):
        assert got.dtype == dtype and got.is_contiguous()
        np.testing.assert_array_equal(got.numpy(), expected)
    # inputs of different shapes: the operator
    other = torch.randn(6, 2, dtype=dtype)

    def uneven(y, other):
        return aten.cat([y, other], 1)

    compiled = compile_fx(make_fx(uneven)(y, other), [y, other])
    np.testing.assert_array_equal(compiled(y, other).numpy(),
                                  np.concatenate([yn, other.numpy()], 1))
    assert compiled.templates[0].calls == {"template": 0, "library": 1}


def _sums(x, y):
    return aten.sum(x, [0, 1]), aten.sum(y, [0]), aten.sum(x, [0]), aten.sum(y, [0], True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_column_sum_template(dtype) -> None:
    gen = torch.Generator().manual_seed(9)
    x = torch.randn(3, 50, 37, generator=gen, dtype=dtype)
    y = torch.randn(70, 9, generator=gen, dtype=dtype)
    compiled = compile_fx(make_fx(_sums)(x, y), [x, y])
    # the rows of x, of y; x over dim 0 only and a keepdim sum are the operator's
    assert [type(t).__name__ for t in compiled.templates] == ["ColumnSum"] * 2
    got = compiled(x, y)
    assert [t.calls for t in compiled.templates] == [{"template": 1, "library": 0}] * 2
    xn, yn = _np(x), _np(y)
    tol = 1e-4 if dtype == torch.float32 else 1e-12
    for g, want in zip(got, (xn.sum(axis=(0, 1)), yn.sum(axis=0), xn.sum(axis=0),
                             yn.sum(axis=0, keepdims=True))):
        assert g.dtype == dtype and tuple(g.shape) == want.shape
        np.testing.assert_allclose(_np(g), want, rtol=tol, atol=tol)
    strided = torch.randn(9, 70, dtype=dtype).t()  # not contiguous: the operator
    np.testing.assert_allclose(_np(compiled(x, strided)[1]), _np(strided).sum(axis=0),
                               rtol=tol, atol=tol)
    assert compiled.templates[1].calls == {"template": 1, "library": 1}


def _gelu_grads(g, x, g2, x2):
    d = aten.gelu_backward(g, x)
    bias = aten.sum(aten.view(d, [-1, d.shape[-1]]), [0])  # a linear layer's bias gradient
    lone = aten.gelu_backward(g2, x2)  # no sum: the template alone
    product = aten.mm(aten.view(d, [-1, d.shape[-1]]), aten.t(x2))  # (keeps the two apart)
    tanh = aten.gelu_backward(g2, x2, approximate="tanh")  # not the exact form: the operator
    return product, bias, lone, tanh


def _gelu_grad_reference(g: np.ndarray, x: np.ndarray) -> np.ndarray:
    import math

    cdf = np.vectorize(lambda v: 0.5 * math.erfc(-v / math.sqrt(2.0)))(x)
    return g * (cdf + x * np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_gelu_backward_template_sums_the_bias_gradient(dtype) -> None:
    gen = torch.Generator().manual_seed(5)
    g = torch.randn(3, 40, 37, generator=gen, dtype=dtype)
    x = torch.randn(3, 40, 37, generator=gen, dtype=dtype) * 3  # far into both tails
    g2, x2 = (torch.randn(29, 37, generator=gen, dtype=dtype) for _ in range(2))
    inputs = [g, x, g2, x2]
    compiled = compile_fx(make_fx(_gelu_grads)(*inputs), inputs)
    targets = _targets(compiled)
    assert aten.sum.dim_IntList not in targets and targets.count(aten.gelu_backward.default) == 2
    assert [(type(t).__name__, t.column_sum) for t in compiled.templates] == [
        ("GeluBackward", True), ("GeluBackward", False)]  # the tanh form has none
    product, bias, lone, tanh = compiled(*inputs)
    assert [t.calls for t in compiled.templates] == [{"template": 1, "library": 0}] * 2
    want = _gelu_grad_reference(_np(g), _np(x))
    tol = 2e-6 if dtype == torch.float32 else 1e-12
    np.testing.assert_allclose(_np(bias), want.reshape(-1, 37).sum(axis=0), rtol=tol,
                               atol=tol * 30)
    np.testing.assert_allclose(_np(product), want.reshape(-1, 37) @ _np(x2).T, rtol=tol,
                               atol=tol * 30)
    np.testing.assert_allclose(_np(lone), _gelu_grad_reference(_np(g2), _np(x2)), rtol=tol,
                               atol=tol)
    np.testing.assert_array_equal(_np(tanh), _np(aten.gelu_backward(g2, x2, approximate="tanh")))
    # extremes: a zero gradient far out, the sign of zero, inf and nan as the library has them
    edge = torch.tensor([[-1e30, -90.0, -10.0, -0.0, 0.0, 10.0, 90.0, 1e30, float("inf"),
                          float("nan")] + [0.25 * k - 3.0 for k in range(27)]], dtype=dtype)
    ones = torch.ones_like(edge)
    got = compiled(ones, edge, ones, edge)
    np.testing.assert_allclose(_np(got[2]), _np(aten.gelu_backward(ones, edge)), rtol=tol,
                               atol=tol, equal_nan=True)
    # a strided input: the operators
    strided = torch.randn(37, 29, dtype=dtype).t()
    np.testing.assert_allclose(_np(compiled(g, x, strided, x2)[2]),
                               _gelu_grad_reference(_np(strided), _np(x2)), rtol=tol, atol=tol)
    assert compiled.templates[1].calls == {"template": 2, "library": 1}


def _blocked(g, x, w, b, res, qkv):
    _, mean, rstd = aten.native_layer_norm(x, [x.shape[-1]], w, b, 1e-5)
    grad_in, grad_w, grad_b = aten.native_layer_norm_backward(
        g, x, [x.shape[-1]], mean, rstd, w, b, [True, True, True])
    total = aten.add(res, grad_in)
    gelu = aten.gelu_backward(g, x)
    parts = [aten.unsqueeze(aten.transpose(t, 1, 2), 2) for t in aten.unbind(qkv)]
    joined = aten.cat(parts, 2)  # its rows cut into chunks across the three inputs
    return (total, grad_w, grad_b, aten.sum(total, [0, 1]), gelu, aten.sum(gelu, [0, 1]),
            joined, aten.sum(aten.view(joined, [-1, joined.shape[-1] * 12]), [0]))


def test_templates_on_the_pool_give_the_same_bits_at_any_thread_count() -> None:
    # above config.parallel_threshold: the row blocks run on the thread pool, and the sums
    # over rows add fixed blocks' partials in block order
    gen = torch.Generator().manual_seed(8)
    g, x, res = (torch.randn(12, 320, 96, generator=gen) for _ in range(3))
    w, b = torch.randn(96, generator=gen), torch.randn(96, generator=gen)
    qkv = torch.randn(3, 12, 4, 320, 24, generator=gen)
    inputs = [g, x, w, b, res, qkv]
    compiled = compile_fx(make_fx(_blocked)(*inputs), inputs)
    assert sorted(type(t).__name__ for t in compiled.templates) == [
        "ColumnSum", "GeluBackward", "LayerNormBackward", "StridedCopy"]
    threads = torch.get_num_threads()
    try:
        results = []
        for count in (1, 2, 3):
            torch.set_num_threads(count)
            results.append(compiled(*inputs))
    finally:
        torch.set_num_threads(threads)
    assert all(t.calls["library"] == 0 for t in compiled.templates)
    for other in results[1:]:
        for got, want in zip(other, results[0]):
            np.testing.assert_array_equal(got.numpy(), want.numpy())
    want = _blocked(*inputs)  # the operators
    for got, expected in zip(results[0], want):
        np.testing.assert_allclose(_np(got), _np(expected), rtol=1e-4, atol=2e-3)


def _transposed_twice(x, w):
    h = aten.mm(x, w)
    back = aten.t(aten.t(h))  # h itself
    used = aten.mm(x, aten.t(aten.t(w)))  # an input read through it: w
    return back, used, aten.t(aten.t(x))  # an input returned: kept a view


def test_double_transposes_fold() -> None:
    gen = torch.Generator().manual_seed(3)
    x, w = torch.randn(6, 5, generator=gen), torch.randn(5, 5, generator=gen)
    compiled = compile_fx(make_fx(_transposed_twice)(x, w), [x, w])
    assert _targets(compiled).count(aten.t.default) == 2  # only the returned input's pair
    back, used, same = compiled(x, w)
    want = x.numpy().astype(np.float64) @ w.numpy()
    np.testing.assert_allclose(_np(back), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(_np(used), want, rtol=1e-5, atol=1e-5)
    assert same is not x and same.data_ptr() == x.data_ptr()
    np.testing.assert_array_equal(same.numpy(), x.numpy())
