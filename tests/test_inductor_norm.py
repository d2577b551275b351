"""torch._inductor: a layer norm computed in the kernel of the pointwise group before it,
against numpy (values), eager (gradients through AOT autograd) and the fused interpreter."""

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
    monkeypatch.setattr(config, "cache_dir", str(tmp_path_factory.getbasetemp() / "norm-cache"))
    monkeypatch.setattr(config, "compile_in_background", False)
    monkeypatch.setattr(config, "cxx", "g++")


def _layer_norm_np(s: np.ndarray, w, b, eps: float):
    """Layer norm over the last axis in float64: (out, mean, rstd), keepdim statistics."""
    mean = s.mean(axis=-1, keepdims=True)
    var = ((s - mean) ** 2).mean(axis=-1, keepdims=True)
    rstd = 1.0 / np.sqrt(var + eps)
    out = (s - mean) * rstd
    if w is not None:
        out = out * w
    if b is not None:
        out = out + b
    return out, mean, rstd


def _residual_norm(x, y, w, b):
    s = x + y * 0.5
    out, mean, rstd = aten.native_layer_norm(s, [s.shape[-1]], w, b, 1e-5)
    return s, out, mean, rstd


def _np(t: torch.Tensor) -> np.ndarray:
    return t.numpy().astype(np.float64)


CASES = [
    # (x shape, y shape, transpose x, dtype, weight, bias)
    ((12, 64, 128), (12, 64, 128), False, torch.float32, True, True),
    ((5, 7, 37), (37,), False, torch.float32, True, True),  # odd sizes, a broadcast input
    ((33, 19), (19,), True, torch.float32, True, False),  # a transposed (strided) input
    ((3, 4, 5, 129), (3, 4, 5, 129), False, torch.float64, False, True),
    ((9, 1000), (9, 1000), False, torch.float64, False, False),
]


@pytest.mark.parametrize("shape,yshape,transposed,dtype,has_w,has_b", CASES)
def test_residual_add_and_layer_norm_are_one_kernel(shape, yshape, transposed, dtype, has_w,
                                                     has_b) -> None:
    gen = torch.Generator().manual_seed(sum(shape))
    if transposed:
        x = (torch.randn(shape[::-1], generator=gen, dtype=dtype) * 3 + 1).t()
    else:
        x = torch.randn(shape, generator=gen, dtype=dtype) * 3 + 1
    y = torch.randn(yshape, generator=gen, dtype=dtype)
    n = shape[-1]
    w = torch.randn(n, generator=gen, dtype=dtype) if has_w else None
    b = torch.randn(n, generator=gen, dtype=dtype) if has_b else None
    compiled = compile_fx(make_fx(_residual_norm)(x, y, w, b), [x, y, w, b])
    assert len(compiled.groups) == 1 and compiled.groups[0].group.norm is not None
    s, out, mean, rstd = compiled(x, y, w, b)
    assert compiled.groups[0].calls["compiled"] == 1
    want_s = _np(x) + _np(y) * 0.5
    want = _layer_norm_np(want_s, None if w is None else _np(w), None if b is None else _np(b),
                          1e-5)
    tol = 2e-5 if dtype == torch.float32 else 1e-11
    for got, expected in zip((s, out, mean, rstd), (want_s, *want)):
        assert got.dtype == dtype and tuple(got.shape) == expected.shape
        assert got.is_contiguous()
        np.testing.assert_allclose(_np(got), expected, rtol=tol, atol=tol)


def test_a_norm_of_a_value_the_graph_does_not_keep() -> None:
    # the prologue's value is read by the layer norm only: normalised in the output's row
    x, w = torch.randn(6, 50), torch.randn(50)

    def fn(x, w):
        return aten.native_layer_norm(x * 2.0 - 1.0, [50], w, None, 1e-3)

    compiled = compile_fx(make_fx(fn)(x, w), [x, w])
    group = compiled.groups[0].group
    assert group.norm is not None and group.outputs == [group.norm]
    got = compiled(x, w)
    want = _layer_norm_np(_np(x) * 2 - 1, _np(w), None, 1e-3)
    for g, e in zip(got, want):
        np.testing.assert_allclose(_np(g), e, rtol=2e-5, atol=2e-5)


def test_the_interpreter_runs_the_same_group(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(config, "cpp_codegen", False)
    x, y, w, b = torch.randn(4, 9, 24), torch.randn(24), torch.randn(24), torch.randn(24)
    compiled = compile_fx(make_fx(_residual_norm)(x, y, w, b), [x, y, w, b])
    assert compiled.groups[0].group.norm is not None
    got = compiled(x, y, w, b)
    assert compiled.groups[0].calls["interpreted"] == 1
    want_s = _np(x) + _np(y) * 0.5
    for g, e in zip(got, (want_s, *_layer_norm_np(want_s, _np(w), _np(b), 1e-5))):
        np.testing.assert_allclose(_np(g), e, rtol=2e-5, atol=2e-5)


def test_the_setting_leaves_layer_norm_a_library_call(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(config, "fuse_layer_norm", False)
    x, y, w, b = torch.randn(4, 24), torch.randn(4, 24), torch.randn(24), torch.randn(24)
    compiled = compile_fx(make_fx(_residual_norm)(x, y, w, b), [x, y, w, b])
    assert all(r.group.norm is None for r in compiled.groups)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_a_compiled_pre_norm_block_trains_as_eager(dtype, monkeypatch: pytest.MonkeyPatch
                                                  ) -> None:
    # forward with the fused residual + layer norm, backward from its mean and rstd
    gen = torch.Generator().manual_seed(5)
    x = torch.randn(3, 11, 40, generator=gen, dtype=dtype)
    w1 = torch.randn(40, 40, generator=gen, dtype=dtype).requires_grad_()
    ln_w = (torch.rand(40, generator=gen, dtype=dtype) + 0.5).requires_grad_()
    ln_b = torch.randn(40, generator=gen, dtype=dtype).requires_grad_()

    def block(x, w1, ln_w, ln_b):
        h = x + F.linear(x, w1)
        h = h + F.layer_norm(h, (40,), ln_w, ln_b)
        return (F.layer_norm(h + 1.0, (40,), ln_w, ln_b) * h).sum()

    from torch._inductor import compile_fx as compile_fx_module

    plans = []
    scheduler = compile_fx_module.schedule
    monkeypatch.setattr(compile_fx_module, "schedule",
                        lambda gm: plans.append(scheduler(gm)) or plans[-1])
    graphs = []
    compiled_graph = compile_fx_module.CompiledGraph
    monkeypatch.setattr(compile_fx_module, "CompiledGraph",
                        lambda gm: graphs.append(compiled_graph(gm)) or graphs[-1])
    compiled = torch.compile(block)
    params = [w1, ln_w, ln_b]
    got = compiled(x, *params)
    # the forward's two layer norms each end a group (after x + linear, after h + norm + 1.0)
    assert sum(g.norm is not None for g in plans[0].groups) == 2
    got_grads = torch.autograd.grad(got, params)
    want = block(x, *params)
    want_grads = torch.autograd.grad(want, params)
    tol = 2e-4 if dtype == torch.float32 else 1e-9
    torch.testing.assert_close(got, want, rtol=tol, atol=tol)
    for g, e in zip(got_grads, want_grads):
        torch.testing.assert_close(g, e, rtol=tol, atol=tol)
    # the backward's two layer norm gradients ran through the template
    backward = graphs[-1]
    assert [t.calls for t in backward.templates] == [{"template": 1, "library": 0}] * 2


def test_the_compiled_block_fuses_its_norms() -> None:
    x, w = torch.randn(2, 3, 8), torch.randn(8)

    def fn(x, w):
        return F.layer_norm(x + 1.0, (8,), w) * 2.0

    gm = make_fx(fn)(x, w)
    compiled = compile_fx(gm, [x, w])
    assert sum(r.group.norm is not None for r in compiled.groups) == 1
    want = _layer_norm_np(_np(x) + 1.0, _np(w), None, 1e-5)[0] * 2.0
    np.testing.assert_allclose(_np(compiled(x, w)), want, rtol=2e-5, atol=2e-5)


def _layer_norm_backward_np(g, x, w, eps: float):
    """The gradients of layer norm over the last axis, in float64 from its formula."""
    mean = x.mean(axis=-1, keepdims=True)
    rstd = 1.0 / np.sqrt(((x - mean) ** 2).mean(axis=-1, keepdims=True) + eps)
    xhat = (x - mean) * rstd
    gw = g * w
    grad_input = rstd * (gw - gw.mean(axis=-1, keepdims=True)
                         - xhat * (gw * xhat).mean(axis=-1, keepdims=True))
    rows = tuple(range(x.ndim - 1))
    return grad_input, (g * xhat).sum(axis=rows), g.sum(axis=rows)


def _norm_backward(g, x, mean, rstd, w, b):
    return aten.native_layer_norm_backward(g, x, [x.shape[-1]], mean, rstd, w, b,
                                           [True, True, True])


@pytest.mark.parametrize("shape,dtype,transposed", [
    ((12, 64, 128), torch.float32, False),
    ((7, 3, 37), torch.float32, False),  # odd sizes
    ((29, 130), torch.float64, False),
    ((31, 17), torch.float32, True),  # a transposed grad_out: the library's call
])
def test_layer_norm_backward_template(shape, dtype, transposed) -> None:
    gen = torch.Generator().manual_seed(shape[-1])
    x = torch.randn(shape, generator=gen, dtype=dtype) * 2 + 0.5
    w, b = torch.randn(shape[-1], generator=gen, dtype=dtype), torch.randn(shape[-1],
                                                                          dtype=dtype)
    _, mean, rstd = aten.native_layer_norm(x, [shape[-1]], w, b, 1e-5)
    g = torch.randn(shape[::-1], generator=gen, dtype=dtype).t() if transposed else \
        torch.randn(shape, generator=gen, dtype=dtype)
    compiled = compile_fx(make_fx(_norm_backward)(g, x, mean, rstd, w, b),
                          [g, x, mean, rstd, w, b])
    assert len(compiled.templates) == 1
    got = compiled(g, x, mean, rstd, w, b)
    calls = compiled.templates[0].calls
    assert calls == ({"template": 0, "library": 1} if transposed else
                     {"template": 1, "library": 0})
    want = _layer_norm_backward_np(_np(g), _np(x), _np(w), 1e-5)
    tol = 1e-4 if dtype == torch.float32 else 1e-10
    for got_t, expected in zip(got, want):
        assert got_t.dtype == dtype and tuple(got_t.shape) == expected.shape
        np.testing.assert_allclose(_np(got_t), expected, rtol=tol, atol=tol)


def test_calls_the_template_does_not_serve_go_to_the_operator() -> None:
    x, g = torch.randn(4, 10), torch.randn(4, 10)
    w = torch.randn(10)
    _, mean, rstd = aten.native_layer_norm(x, [10], w, None, 1e-5)

    def no_bias_grad(g, x, mean, rstd, w):
        return aten.native_layer_norm_backward(g, x, [10], mean, rstd, w, None,
                                               [True, True, False])

    compiled = compile_fx(make_fx(no_bias_grad)(g, x, mean, rstd, w), [g, x, mean, rstd, w])
    got = compiled(g, x, mean, rstd, w)
    assert compiled.templates[0].calls == {"template": 0, "library": 1}
    want = _layer_norm_backward_np(_np(g), _np(x), _np(w), 1e-5)
    np.testing.assert_allclose(_np(got[0]), want[0], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(_np(got[1]), want[1], rtol=1e-4, atol=1e-4)
    assert got[2] is None


def test_the_setting_turns_templates_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(config, "cpu_templates", False)
    x, g, w = torch.randn(4, 10), torch.randn(4, 10), torch.randn(10)
    _, mean, rstd = aten.native_layer_norm(x, [10], w, None, 1e-5)
    compiled = compile_fx(make_fx(_norm_backward)(g, x, mean, rstd, w, None),
                          [g, x, mean, rstd, w, None])
    assert compiled.templates == []


def _backward_then_residual(g, x, mean, rstd, w, b, residual):
    grads = aten.native_layer_norm_backward(g, x, [x.shape[-1]], mean, rstd, w, b,
                                            [True, True, True])
    total = aten.add(residual, grads[0])
    return total, aten.sum(total, [0, 1]), grads[1] * 2.0, grads[2]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_layer_norm_backward_residual_add_and_bias_sum_are_one_call(dtype) -> None:
    gen = torch.Generator().manual_seed(11)
    x = torch.randn(5, 9, 67, generator=gen, dtype=dtype) * 2 + 0.5
    w, b = torch.randn(67, generator=gen, dtype=dtype), torch.randn(67, generator=gen,
                                                                    dtype=dtype)
    _, mean, rstd = aten.native_layer_norm(x, [67], w, b, 1e-5)
    g, residual = torch.randn(5, 9, 67, dtype=dtype), torch.randn(5, 9, 67, dtype=dtype)
    inputs = [g, x, mean, rstd, w, b, residual]
    compiled = compile_fx(make_fx(_backward_then_residual)(*inputs), inputs)
    targets = {str(n.target) for n in compiled.gm.graph.nodes if n.op == "call_function"}
    assert not any("layer_norm_backward.default" in t or t == "aten.add.Tensor"
                   or t == "aten.sum.dim_IntList" for t in targets), targets
    assert [(t.residual, t.column_sum) for t in compiled.templates] == [(True, True)]
    total, bias_sum, grad_w2, grad_b = compiled(*inputs)
    assert compiled.templates[0].calls == {"template": 1, "library": 0}
    gi, gw, gb = _layer_norm_backward_np(_np(g), _np(x), _np(w), 1e-5)
    want_total = _np(residual) + gi
    tol = 1e-4 if dtype == torch.float32 else 1e-10
    for got, expected in ((total, want_total), (bias_sum, want_total.sum(axis=(0, 1))),
                          (grad_w2, gw * 2), (grad_b, gb)):
        assert got.dtype == dtype and tuple(got.shape) == expected.shape
        np.testing.assert_allclose(_np(got), expected, rtol=tol, atol=tol)
    # a strided residual: the operators serve the call, with the same results
    strided = torch.randn(67, 9, 5, dtype=dtype).permute(2, 1, 0)
    total, bias_sum, _, _ = compiled(g, x, mean, rstd, w, b, strided)
    assert compiled.templates[0].calls == {"template": 1, "library": 1}
    np.testing.assert_allclose(_np(total), _np(strided) + gi, rtol=tol, atol=tol)
    np.testing.assert_allclose(_np(bias_sum), (_np(strided) + gi).sum(axis=(0, 1)), rtol=tol,
                               atol=tol)


def test_a_grad_input_read_twice_is_not_rewritten() -> None:
    x, g, residual, w = torch.randn(3, 16), torch.randn(3, 16), torch.randn(3, 16), \
        torch.randn(16)
    _, mean, rstd = aten.native_layer_norm(x, [16], w, None, 1e-5)

    def fn(g, x, mean, rstd, w, residual):
        grads = aten.native_layer_norm_backward(g, x, [16], mean, rstd, w, None,
                                                [True, True, True])
        return aten.add(residual, grads[0]), grads[0] * 3.0

    inputs = [g, x, mean, rstd, w, residual]
    compiled = compile_fx(make_fx(fn)(*inputs), inputs)
    assert [(t.residual, t.column_sum) for t in compiled.templates] == [(False, False)]
    total, tripled = compiled(*inputs)
    gi = _layer_norm_backward_np(_np(g), _np(x), _np(w), 1e-5)[0]
    np.testing.assert_allclose(_np(total), _np(residual) + gi, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(_np(tripled), gi * 3, rtol=1e-4, atol=1e-4)
