"""The pointwise losses that are ``aten::`` operators of their own in PyTorch reach them under a
dispatch mode, one call each, with their ``*_backward`` operators in the backward pass:
``smooth_l1_loss``, ``huber_loss``, ``soft_margin_loss``, ``binary_cross_entropy`` and
``binary_cross_entropy_with_logits`` (whose backward PyTorch writes in elementwise ops).

The expected names are those of PyTorch's native_functions.yaml in its ``str(func)`` form;
expected values and gradients come from numpy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from dispatch_recording import CallNames

import torch
import torch.nn.functional as F

X = np.array([[0.5, -1.25, 2.0, 3.5], [-0.75, 0.25, 1.5, -2.0], [4.0, -3.0, 0.125, 1.0]])
T = np.array([[0.25, 1.0, -0.5, 3.0], [0.0, 0.5, 2.75, -2.25], [1.0, -1.0, 0.0, 0.75]])
P = np.array([[0.2, 0.9, 0.5, 0.35], [0.05, 0.6, 0.75, 0.45], [0.99, 0.3, 0.15, 0.7]])
Y = np.array([[1.0, 0.0, 0.25, 1.0], [0.0, 1.0, 0.5, 0.0], [1.0, 0.75, 0.0, 1.0]])
SIGNS = np.array([[1.0, -1.0, 1.0, 1.0], [-1.0, -1.0, 1.0, -1.0], [1.0, 1.0, -1.0, 1.0]])


def _sigmoid(z: Any) -> Any:
    return 1 / (1 + np.exp(-z))


def _smooth_l1(x: Any, t: Any, beta: float) -> tuple[Any, Any]:
    d = x - t
    small = np.abs(d) < beta
    return (np.where(small, 0.5 * d * d / beta, np.abs(d) - 0.5 * beta),
            np.where(small, d / beta, np.sign(d)))


def _huber(x: Any, t: Any, delta: float) -> tuple[Any, Any]:
    d = x - t
    small = np.abs(d) < delta
    return (np.where(small, 0.5 * d * d, delta * (np.abs(d) - 0.5 * delta)),
            np.where(small, d, delta * np.sign(d)))


def _soft_margin(x: Any, y: Any) -> tuple[Any, Any]:
    return np.log1p(np.exp(-y * x)), -y * _sigmoid(-y * x)


def _bce(p: Any, y: Any) -> tuple[Any, Any]:
    return (-(y * np.log(p) + (1 - y) * np.log(1 - p)), (p - y) / (p * (1 - p)))


def _bce_logits(x: Any, y: Any) -> tuple[Any, Any]:
    return _bce(_sigmoid(x), y)[0], _sigmoid(x) - y


# (no difference sits on a kink of the piecewise losses, where no derivative exists)
# name -> (call, input, target, operator, backward operator, numpy (loss, d loss / d input))
CASES: dict[str, tuple[Callable[..., torch.Tensor], Any, Any, str, str | None, Any]] = {
    "smooth_l1": (lambda a, b, r: F.smooth_l1_loss(a, b, reduction=r), X, T,
                  "aten.smooth_l1_loss.default", "aten.smooth_l1_loss_backward.default",
                  _smooth_l1(X, T, 1.0)),
    "smooth_l1_beta": (lambda a, b, r: F.smooth_l1_loss(a, b, reduction=r, beta=0.6), X, T,
                       "aten.smooth_l1_loss.default", "aten.smooth_l1_loss_backward.default",
                       _smooth_l1(X, T, 0.6)),
    "huber": (lambda a, b, r: F.huber_loss(a, b, reduction=r, delta=1.5), X, T,
              "aten.huber_loss.default", "aten.huber_loss_backward.default",
              _huber(X, T, 1.5)),
    "soft_margin": (lambda a, b, r: F.soft_margin_loss(a, b, reduction=r), X, SIGNS,
                    "aten.soft_margin_loss.default", "aten.soft_margin_loss_backward.default",
                    _soft_margin(X, SIGNS)),
    "bce": (lambda a, b, r: F.binary_cross_entropy(a, b, reduction=r), P, Y,
            "aten.binary_cross_entropy.default", "aten.binary_cross_entropy_backward.default",
            _bce(P, Y)),
    "bce_logits": (lambda a, b, r: F.binary_cross_entropy_with_logits(a, b, reduction=r), X, Y,
                   "aten.binary_cross_entropy_with_logits.default", None, _bce_logits(X, Y)),
}
REDUCTIONS = {"mean": lambda v: v.mean(), "sum": lambda v: v.sum(), "none": lambda v: v}


@pytest.mark.parametrize("reduction", sorted(REDUCTIONS))
@pytest.mark.parametrize("name", sorted(CASES))
def test_loss_is_one_operator_with_numpy_values_and_gradients(name: str,
                                                              reduction: str) -> None:
    call, xs, ts, op, backward_op, (values, slopes) = CASES[name]
    x = torch.tensor(xs, requires_grad=True)
    target = torch.tensor(ts)
    with CallNames() as recorder:
        loss = call(x, target, reduction)
    assert recorder.names == [op]
    np.testing.assert_allclose(loss.detach().numpy(), REDUCTIONS[reduction](values), rtol=1e-12)
    grad_output = torch.ones_like(loss)
    with CallNames() as recorder:
        g, = torch.autograd.grad(loss, x, grad_output)
    if backward_op is not None:
        assert recorder.names == [backward_op]
    scale = 1 / xs.size if reduction == "mean" else 1
    np.testing.assert_allclose(g.numpy(), scale * slopes, rtol=1e-10)


@pytest.mark.parametrize("name", sorted(CASES))
def test_loss_gradients_check_in_float64(name: str) -> None:
    call, xs, ts, *_ = CASES[name]
    for reduction in REDUCTIONS:
        x = torch.tensor(xs, requires_grad=True)
        target = torch.tensor(ts, requires_grad=True)  # the target's gradient too
        fn = lambda a, b, r=reduction: call(a, b, r)  # noqa: E731
        assert torch.autograd.gradcheck(fn, (x, target))
        assert torch.autograd.gradgradcheck(fn, (x, target))


def test_weighted_binary_cross_entropies() -> None:
    weight = np.array([0.5, 2.0, 1.0, 3.0])
    pos_weight = np.array([1.5, 0.5, 2.0, 1.0])
    p, y = torch.tensor(P, requires_grad=True), torch.tensor(Y)
    w = torch.tensor(weight, requires_grad=True)
    with CallNames() as recorder:
        loss = F.binary_cross_entropy(p, y, weight=w)
    assert recorder.names == ["aten.expand.default", "aten.binary_cross_entropy.default"]
    np.testing.assert_allclose(loss.item(), (weight * _bce(P, Y)[0]).mean(), rtol=1e-12)
    assert torch.autograd.gradcheck(
        lambda a, b, c: F.binary_cross_entropy(a, b, weight=c, reduction="sum"),
        (p, y.clone().requires_grad_(), w))
    assert torch.autograd.gradgradcheck(
        lambda a, b, c: F.binary_cross_entropy(a, b, weight=c), (p, y.clone().requires_grad_(), w))

    x = torch.tensor(X, requires_grad=True)
    pw = torch.tensor(pos_weight, requires_grad=True)
    with CallNames() as recorder:
        loss = F.binary_cross_entropy_with_logits(x, y, weight=w, pos_weight=pw,
                                                  reduction="none")
    assert recorder.names == ["aten.binary_cross_entropy_with_logits.default"]
    s = _sigmoid(X)
    expected = -weight * (pos_weight * Y * np.log(s) + (1 - Y) * np.log(1 - s))
    np.testing.assert_allclose(loss.detach().numpy(), expected, rtol=1e-12)
    args = (x, y.clone().requires_grad_(), w, pw)
    fn = lambda a, b, c, d: F.binary_cross_entropy_with_logits(a, b, weight=c, pos_weight=d)  # noqa: E731
    assert torch.autograd.gradcheck(fn, args)
    assert torch.autograd.gradgradcheck(fn, args)


def test_huber_weight_multiplies_the_unreduced_loss() -> None:
    weight = np.linspace(0.5, 2.0, X.size).reshape(X.shape)
    loss = F.huber_loss(torch.tensor(X), torch.tensor(T), weight=torch.tensor(weight))
    np.testing.assert_allclose(loss.item(), (weight * _huber(X, T, 1.0)[0]).mean(), rtol=1e-12)
    with pytest.raises(ValueError, match="Weights and input must have the same size"):
        F.huber_loss(torch.tensor(X), torch.tensor(T), weight=torch.ones(4))


def test_smooth_l1_with_zero_beta_is_the_l1_loss_and_targets_broadcast() -> None:
    x, t = torch.tensor(X), torch.tensor(T[0])
    with CallNames() as recorder, pytest.warns(UserWarning, match="target size"):
        loss = F.smooth_l1_loss(x, t, beta=0.0)
    assert "aten.smooth_l1_loss.default" not in recorder.names  # PyTorch's l1 composite
    np.testing.assert_allclose(loss.item(), np.abs(X - T[0]).mean(), rtol=1e-12)
    with pytest.warns(UserWarning, match="target size"):
        loss = F.smooth_l1_loss(x, t, beta=0.5, reduction="none")
    np.testing.assert_allclose(loss.numpy(), _smooth_l1(X, T[0], 0.5)[0], rtol=1e-12)


def test_errors_are_pytorchs() -> None:
    x, t = torch.tensor(X), torch.tensor(T)
    with pytest.raises(ValueError, match="bogus is not a valid value for reduction"):
        F.smooth_l1_loss(x, t, reduction="bogus")
    with pytest.raises(ValueError, match="bogus is not a valid value for reduction"):
        F.binary_cross_entropy_with_logits(x, t, reduction="bogus")
    with pytest.raises(ValueError, match="5 is not a valid value for reduction"):
        torch.ops.aten.huber_loss.default(x, t, 5)
    with pytest.raises(RuntimeError, match="negative values for beta"):
        F.smooth_l1_loss(x, t, beta=-1.0)
    with pytest.raises(RuntimeError, match="non-positive values for delta"):
        F.huber_loss(x, t, delta=0.0)
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(x, torch.tensor(Y))
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        torch.ops.aten.binary_cross_entropy.default(x, torch.tensor(Y))
    with pytest.raises(ValueError, match="different to the input size"):
        F.binary_cross_entropy(torch.tensor(P), torch.tensor(Y[0]))
    with pytest.raises(ValueError, match="must be the same as input size"):
        F.binary_cross_entropy_with_logits(x, torch.tensor(Y[0]))
    with pytest.raises(TypeError, match="argument 'target'"):
        torch.ops.aten.soft_margin_loss.default(x, 1.0)


def test_saturated_binary_cross_entropy_is_clamped_as_in_pytorch() -> None:
    p = torch.tensor([0.0, 1.0, 0.5], dtype=torch.float64, requires_grad=True)
    y = torch.tensor([1.0, 1.0, 0.0], dtype=torch.float64)
    loss = F.binary_cross_entropy(p, y, reduction="none")
    np.testing.assert_allclose(loss.detach().numpy(), [100.0, 0.0, np.log(2)], rtol=1e-12)
    g, = torch.autograd.grad(loss.sum(), p)
    # (x - y) / max(x (1 - x), 1e-12): -1e12 at the saturated wrong end, 0 at the right one
    np.testing.assert_allclose(g.numpy(), [-1e12, 0.0, 2.0], rtol=1e-12)


@pytest.mark.parametrize("name", sorted(CASES))
def test_loss_on_meta_tensors_has_pytorchs_layout(name: str) -> None:
    call, xs, ts, *_ = CASES[name]
    x = torch.empty(xs.shape, device="meta", requires_grad=True)
    target = torch.empty(ts.shape, device="meta")
    for reduction, shape in (("mean", ()), ("none", xs.shape)):
        loss = call(x, target, reduction)
        assert loss.device.type == "meta" and tuple(loss.shape) == tuple(shape)
        g, = torch.autograd.grad(loss, x, torch.ones_like(loss))
        assert g.device.type == "meta" and tuple(g.shape) == xs.shape


def test_schemas_are_pytorchs() -> None:
    def schema(op: Any) -> str:
        return str(getattr(op, "_schema", None) or op.schema).removeprefix("aten::")

    aten = torch.ops.aten
    assert schema(aten.smooth_l1_loss.default) == (
        "smooth_l1_loss(Tensor self, Tensor target, int reduction=1, float beta=1.0) -> Tensor")
    assert schema(aten.huber_loss_backward.default) == (
        "huber_loss_backward(Tensor grad_output, Tensor self, Tensor target, int reduction, "
        "float delta) -> Tensor")
    assert schema(aten.binary_cross_entropy.default) == (
        "binary_cross_entropy(Tensor self, Tensor target, Tensor? weight=None, "
        "int reduction=1) -> Tensor")
    assert schema(aten.binary_cross_entropy_with_logits.default) == (
        "binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? weight=None, "
        "Tensor? pos_weight=None, int reduction=1) -> Tensor")


@pytest.mark.parametrize("reduction", sorted(REDUCTIONS))
@pytest.mark.parametrize("name", sorted(CASES))
def test_loss_under_vmap_matches_the_loop_without_fallback(name: str, reduction: str) -> None:
    import warnings

    from torch.func import grad, vmap

    call, xs, ts, *_ = CASES[name]

    def loss(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return call(a, b, reduction).sum()

    x = torch.tensor(np.stack([xs, xs[::-1] * 0.5, xs * 0.25]))
    target = torch.tensor(np.stack([ts, ts[:, ::-1], ts[::-1]]))
    shared = torch.tensor(ts)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a batching rule, not the per-sample fallback
        values = vmap(loss)(x, target)
        grads = vmap(grad(loss))(x, target)
        grads_shared = vmap(grad(loss), in_dims=(0, None))(x, shared)
    torch.testing.assert_close(values, torch.stack([loss(a, b) for a, b in zip(x, target)]))
    torch.testing.assert_close(grads, torch.stack([grad(loss)(a, b) for a, b in zip(x, target)]))
    torch.testing.assert_close(grads_shared, torch.stack([grad(loss)(a, shared) for a in x]))


def test_weighted_losses_under_vmap_match_the_loop() -> None:
    from torch.func import grad, vmap

    weight, pos_weight = torch.tensor([0.5, 2.0, 1.0, 3.0]), torch.tensor([1.5, 0.5, 2.0, 1.0])
    y = torch.tensor(Y)

    def loss(a: torch.Tensor) -> torch.Tensor:
        return (F.binary_cross_entropy(torch.sigmoid(a), y, weight=weight)
                + F.binary_cross_entropy_with_logits(a, y, weight=weight, pos_weight=pos_weight))

    x = torch.tensor(np.stack([X, X * 0.5]))
    torch.testing.assert_close(vmap(grad(loss))(x), torch.stack([grad(loss)(a) for a in x]))


# each operator exported and run by onnxruntime against the eager result (float32 inputs)
ONNX_CASES: dict[str, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = {
    "smooth_l1": lambda x, p: F.smooth_l1_loss(x, x.flip(-1), beta=0.7),
    "smooth_l1_none": lambda x, p: F.smooth_l1_loss(x, x.flip(-1), reduction="none"),
    "huber_sum": lambda x, p: F.huber_loss(x, x.flip(-1), reduction="sum", delta=1.5),
    "soft_margin": lambda x, p: F.soft_margin_loss(x, torch.sign(x.flip(-1))),
    "bce": lambda x, p: F.binary_cross_entropy(p, p.flip(-1)),
    "bce_weight_none": lambda x, p: F.binary_cross_entropy(
        p, p.flip(0), weight=torch.linspace(0.5, 2.0, 8), reduction="none"),
    "bce_logits": lambda x, p: F.binary_cross_entropy_with_logits(x, p),
    "rrelu_eval": lambda x, p: F.rrelu(x, 0.1, 0.3),
    "grid_sample": lambda x, p: F.grid_sample(
        x.reshape(1, 2, 3, 4), p.reshape(1, 3, 4, 2) * 2.4 - 1.2, align_corners=False),
    "grid_sample_nearest_border": lambda x, p: F.grid_sample(
        x.reshape(1, 2, 3, 4), p.reshape(1, 3, 4, 2) * 2.4 - 1.2, mode="nearest",
        padding_mode="border", align_corners=True),
    "grid_sample_bicubic_reflection": lambda x, p: F.grid_sample(
        x.reshape(1, 2, 3, 4), p.reshape(1, 3, 4, 2) * 2.4 - 1.2, mode="bicubic",
        padding_mode="reflection", align_corners=False),
    "bce_logits_weights": lambda x, p: F.binary_cross_entropy_with_logits(
        x, p, weight=torch.linspace(0.5, 2.0, 8), pos_weight=torch.linspace(2.0, 0.5, 8),
        reduction="sum"),
}


@pytest.mark.parametrize("name", sorted(ONNX_CASES))
def test_loss_operators_export_to_onnx(name: str) -> None:
    import io

    onnx = pytest.importorskip("onnx", reason="torch.onnx.export writes files with onnx")
    ort = pytest.importorskip("onnxruntime", reason="exported files are run with onnxruntime")
    fn = ONNX_CASES[name]

    class Wrapped(torch.nn.Module):
        def forward(self, x: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
            return fn(x, p)

    rng = np.random.default_rng(3)
    x = torch.tensor(rng.normal(0, 2, (3, 8)), dtype=torch.float32)
    p = torch.tensor(rng.uniform(0.05, 0.95, (3, 8)), dtype=torch.float32)
    buffer = io.BytesIO()
    torch.onnx.export(Wrapped(), (x, p), buffer, input_names=["x", "p"])
    onnx.checker.check_model(onnx.load_from_string(buffer.getvalue()))
    session = ort.InferenceSession(buffer.getvalue(), providers=["CPUExecutionProvider"])
    got = session.run(None, {"x": x.numpy(), "p": p.numpy()})[0]
    np.testing.assert_allclose(got, fn(x, p).numpy(), rtol=1e-5, atol=1e-5)


# -- rrelu: aten::rrelu_with_noise --------------------------------------------------------------


@pytest.mark.parametrize("training", [True, False])
def test_rrelu_is_rrelu_with_noise(training: bool) -> None:
    lower, upper = 0.1, 0.3
    x = torch.tensor(X, requires_grad=True)
    with CallNames() as recorder:
        y = F.rrelu(x, lower, upper, training=training)
    assert recorder.names == ["aten.empty_like.default", "aten.rrelu_with_noise.default"]
    with CallNames() as recorder:
        g, = torch.autograd.grad(y.sum(), x)
    assert "aten.rrelu_with_noise_backward.default" in recorder.names
    values = y.detach().numpy()
    negative = X <= 0
    np.testing.assert_array_equal(values[~negative], X[~negative])
    slopes = values[negative] / X[negative]
    if training:  # a slope per element, drawn from U(lower, upper); the gradient is that slope
        assert ((slopes >= lower) & (slopes <= upper)).all() and np.unique(slopes).size > 1
    else:
        np.testing.assert_allclose(slopes, (lower + upper) / 2, rtol=1e-12)
    np.testing.assert_allclose(g.numpy()[negative], slopes, rtol=1e-12)
    np.testing.assert_array_equal(g.numpy()[~negative], 1.0)


def test_rrelu_with_noise_fills_noise_and_checks_bounds() -> None:
    x = torch.tensor(X)
    noise = torch.zeros(X.shape, dtype=torch.float64)
    y = torch.ops.aten.rrelu_with_noise.default(x, noise, 0.2, 0.4, True)
    negative = X <= 0
    np.testing.assert_array_equal(noise.numpy()[~negative], 1.0)  # PyTorch's kernel writes 1
    np.testing.assert_allclose(y.numpy(), X * noise.numpy(), rtol=1e-12)
    untouched = torch.zeros(X.shape, dtype=torch.float64)
    torch.ops.aten.rrelu_with_noise.default(x, untouched, 0.2, 0.4, False)
    assert not untouched.any()  # evaluation leaves noise alone
    with pytest.raises(RuntimeError, match="Lower bound should be less than or equal"):
        F.rrelu(x, 0.5, 0.25, training=True)
    gen = torch.Generator().manual_seed(5)
    first = torch.rrelu(x, 0.2, 0.4, training=True, generator=gen)
    gen.manual_seed(5)
    torch.testing.assert_close(torch.rrelu(x, 0.2, 0.4, training=True, generator=gen), first)


def test_rrelu_derivatives_and_meta() -> None:
    x = torch.tensor(X, requires_grad=True)
    assert torch.autograd.gradcheck(lambda a: F.rrelu(a, 0.1, 0.3), (x,))
    assert torch.autograd.gradgradcheck(lambda a: F.rrelu(a, 0.1, 0.3), (x,))
    meta = torch.empty(3, 4, device="meta", requires_grad=True)
    y = F.rrelu(meta, training=True)
    assert y.device.type == "meta" and tuple(y.shape) == (3, 4)
    g, = torch.autograd.grad(y.sum(), meta)
    assert g.device.type == "meta" and tuple(g.shape) == (3, 4)


# -- grid_sample: aten::grid_sampler_2d ---------------------------------------------------------


def _numpy_bilinear_zeros(image: Any, grid: Any, align_corners: bool) -> Any:
    """Bilinear sampling of (N, C, H, W) at (N, Ho, Wo, (x, y)), zero outside: a loop."""
    n, c, h, w = image.shape
    out = np.zeros((n, c) + grid.shape[1:3])
    for b in range(n):
        for i in range(grid.shape[1]):
            for j in range(grid.shape[2]):
                gx, gy = grid[b, i, j]
                if align_corners:
                    px, py = (gx + 1) * (w - 1) / 2, (gy + 1) * (h - 1) / 2
                else:
                    px, py = ((gx + 1) * w - 1) / 2, ((gy + 1) * h - 1) / 2
                x0, y0 = int(np.floor(px)), int(np.floor(py))
                for yy, wy in ((y0, 1 - (py - y0)), (y0 + 1, py - y0)):
                    for xx, wx in ((x0, 1 - (px - x0)), (x0 + 1, px - x0)):
                        if 0 <= yy < h and 0 <= xx < w:
                            out[b, :, i, j] += wy * wx * image[b, :, yy, xx]
    return out


GRID_MODES = [(m, p, a) for m in ("bilinear", "nearest", "bicubic")
              for p in ("zeros", "border", "reflection") for a in (False, True)]


@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_is_grid_sampler_2d_with_numpy_values(align_corners: bool) -> None:
    rng = np.random.default_rng(0)
    image, grid = rng.normal(size=(2, 3, 4, 5)), rng.uniform(-1.3, 1.3, (2, 3, 4, 2))
    x, g = torch.tensor(image, requires_grad=True), torch.tensor(grid, requires_grad=True)
    with CallNames() as recorder:
        out = F.grid_sample(x, g, align_corners=align_corners)
    assert recorder.names == ["aten.grid_sampler_2d.default"]
    np.testing.assert_allclose(out.detach().numpy(),
                               _numpy_bilinear_zeros(image, grid, align_corners), rtol=1e-12)
    with CallNames() as recorder:
        torch.autograd.grad(out.sum(), (x, g), retain_graph=True)
    assert recorder.names.count("aten.grid_sampler_2d_backward.default") == 1
    # the input's gradient is the transpose of the (linear) sampling: <S x, y> = <x, S^T y>
    probe = rng.normal(size=out.shape)
    gx, = torch.autograd.grad(out, x, torch.tensor(probe))
    np.testing.assert_allclose((gx.numpy() * image).sum(),
                               (probe * _numpy_bilinear_zeros(image, grid, align_corners)).sum(),
                               rtol=1e-10)


@pytest.mark.parametrize("mode, padding_mode, align_corners", GRID_MODES)
def test_grid_sampler_2d_gradients_check(mode: str, padding_mode: str,
                                         align_corners: bool) -> None:
    rng = np.random.default_rng(1)
    # small: each Jacobian column of the second-derivative check runs the engine twice
    x = torch.tensor(rng.normal(size=(1, 1, 3, 3)), requires_grad=True)
    grid = torch.tensor(rng.uniform(-1.2, 1.2, (1, 2, 2, 2)), requires_grad=True)

    def fn(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return F.grid_sample(a, b, mode=mode, padding_mode=padding_mode,
                             align_corners=align_corners)

    assert torch.autograd.gradcheck(fn, (x, grid))
    assert torch.autograd.gradgradcheck(fn, (x, grid))
    if mode == "nearest":  # PyTorch hands the grid a zero gradient, not none
        _, gg = torch.autograd.grad(fn(x, grid).sum(), (x, grid))
        assert gg is not None and not gg.any()


def test_grid_sampler_2d_meta_schema_and_errors() -> None:
    x = torch.empty(2, 3, 4, 5, device="meta", requires_grad=True)
    grid = torch.empty(2, 6, 7, 2, device="meta", requires_grad=True)
    out = F.grid_sample(x, grid, align_corners=False)
    assert out.device.type == "meta" and tuple(out.shape) == (2, 3, 6, 7)
    gx, gg = torch.autograd.grad(out.sum(), (x, grid))
    assert tuple(gx.shape) == (2, 3, 4, 5) and tuple(gg.shape) == (2, 6, 7, 2)
    schema = str(torch.ops.aten.grid_sampler_2d.default._schema).removeprefix("aten::")
    assert schema == ("grid_sampler_2d(Tensor input, Tensor grid, int interpolation_mode, "
                      "int padding_mode, bool align_corners) -> Tensor")
    with pytest.raises(RuntimeError, match="expected grid and input to have same batch size"):
        F.grid_sample(torch.zeros(2, 1, 3, 3), torch.zeros(1, 2, 2, 2), align_corners=False)
    with pytest.raises(ValueError, match="expected padding_mode to be 'zeros'"):
        F.grid_sample(torch.zeros(1, 1, 3, 3), torch.zeros(1, 2, 2, 2), padding_mode="wrap")


# -- nll_loss of (N, C, d1, ...) inputs: aten::nll_loss2d_forward --------------------------------


def _numpy_nll(logp: Any, target: Any, weight: Any, ignore_index: int) -> tuple[Any, Any]:
    """Per-element losses (N, d...) and weights of class-dim-1 ``logp``, by a loop."""
    losses, weights = np.zeros(target.shape), np.zeros(target.shape)
    for pos in np.ndindex(*target.shape):
        t = target[pos]
        if t == ignore_index:
            continue
        w = 1.0 if weight is None else weight[t]
        losses[pos] = -w * logp[(pos[0], t) + pos[1:]]
        weights[pos] = w
    return losses, weights


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (2, 3, 5), (2, 3, 2, 2, 2)])
@pytest.mark.parametrize("reduction", sorted(REDUCTIONS))
def test_spatial_nll_loss_is_nll_loss2d(shape: tuple[int, ...], reduction: str) -> None:
    rng = np.random.default_rng(4)
    logp = rng.normal(size=shape)
    target = rng.integers(0, 3, (shape[0],) + shape[2:])
    target.reshape(-1)[1] = -100  # one ignored
    weight = np.array([0.5, 2.0, 1.25])
    x = torch.tensor(logp, requires_grad=True)
    with CallNames() as recorder:
        loss = F.nll_loss(x, torch.tensor(target), weight=torch.tensor(weight),
                          reduction=reduction)
    assert recorder.names.count("aten.nll_loss2d_forward.default") == 1
    assert "aten.nll_loss_forward.default" not in recorder.names
    losses, weights = _numpy_nll(logp, target, weight, -100)
    expected = {"none": losses, "sum": losses.sum(), "mean": losses.sum() / weights.sum()}
    np.testing.assert_allclose(loss.detach().numpy(), expected[reduction], rtol=1e-12)
    with CallNames() as recorder:
        g, = torch.autograd.grad(loss, x, torch.ones_like(loss))
    assert recorder.names.count("aten.nll_loss2d_backward.default") == 1
    want = np.zeros(shape)
    scale = 1 / weights.sum() if reduction == "mean" else 1.0
    for pos in np.ndindex(*target.shape):
        if target[pos] != -100:
            want[(pos[0], target[pos]) + pos[1:]] = -weights[pos] * scale
    np.testing.assert_allclose(g.numpy(), want, rtol=1e-12)
    fn = lambda a: F.nll_loss(a, torch.tensor(target), reduction=reduction)  # noqa: E731
    assert torch.autograd.gradgradcheck(fn, (x,))


def test_nll_loss2d_errors_meta_and_cross_entropy() -> None:
    aten = torch.ops.aten
    x = torch.zeros(2, 3, 4, 5)
    with pytest.raises(RuntimeError, match="only batches of spatial targets supported"):
        aten.nll_loss2d_forward.default(x, torch.zeros(2, 4, dtype=torch.int64), None, 1, -100)
    with pytest.raises(RuntimeError, match="only batches of spatial inputs supported"):
        aten.nll_loss2d_forward.default(x[0], torch.zeros(2, 4, 5, dtype=torch.int64), None, 1,
                                        -100)
    with pytest.raises(RuntimeError, match="size mismatch"):
        aten.nll_loss2d_forward.default(x, torch.zeros(2, 4, 4, dtype=torch.int64), None, 1,
                                        -100)
    with pytest.raises(IndexError, match="Target 7 is out of bounds"):
        F.nll_loss(x, torch.full((2, 4, 5), 7))
    meta = torch.empty(2, 3, 4, 5, device="meta", requires_grad=True)
    out = F.nll_loss(meta, torch.zeros(2, 4, 5, dtype=torch.int64, device="meta"),
                     reduction="none")
    assert out.device.type == "meta" and tuple(out.shape) == (2, 4, 5)
    g, = torch.autograd.grad(out.sum(), meta)
    assert tuple(g.shape) == (2, 3, 4, 5)
    # cross-entropy of (N, C, H, W) logits: log_softmax, then the same operator
    logits = torch.tensor(np.random.default_rng(5).normal(size=(2, 3, 2, 2)))
    target = torch.tensor([[[0, 1], [2, 0]], [[1, 1], [2, 2]]])
    loss = F.cross_entropy(logits, target)
    logp = logits.numpy() - np.log(np.exp(logits.numpy()).sum(1, keepdims=True))
    np.testing.assert_allclose(loss.item(), _numpy_nll(logp, target.numpy(), None, -100)[0]
                               .mean(), rtol=1e-12)


@pytest.mark.parametrize("reduction", sorted(REDUCTIONS))
def test_nll_losses_export_to_onnx(reduction: str) -> None:
    import io

    onnx = pytest.importorskip("onnx", reason="torch.onnx.export writes files with onnx")
    ort = pytest.importorskip("onnxruntime", reason="exported files are run with onnxruntime")
    target4 = torch.tensor([[[0, 1, 2], [2, -100, 1]], [[1, 1, 0], [2, 2, 0]]])
    target2 = torch.tensor([0, 2, -100, 1])
    weight = torch.tensor([0.5, 2.0, 1.5])

    class Wrapped(torch.nn.Module):
        def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, ...]:
            return (F.nll_loss(F.log_softmax(x, 1), target4, weight=weight, reduction=reduction),
                    F.nll_loss(y, target2, reduction=reduction))

    rng = np.random.default_rng(6)
    x = torch.tensor(rng.normal(size=(2, 3, 2, 3)), dtype=torch.float32)
    y = torch.tensor(rng.normal(size=(4, 3)), dtype=torch.float32)
    buffer = io.BytesIO()
    torch.onnx.export(Wrapped(), (x, y), buffer, input_names=["x", "y"])
    onnx.checker.check_model(onnx.load_from_string(buffer.getvalue()))
    session = ort.InferenceSession(buffer.getvalue(), providers=["CPUExecutionProvider"])
    got = session.run(None, {"x": x.numpy(), "y": y.numpy()})
    for value, want in zip(got, Wrapped()(x, y)):
        np.testing.assert_allclose(value, want.numpy(), rtol=1e-5, atol=1e-6)


# -- affine_grid: aten::affine_grid_generator ---------------------------------------------------


@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid_is_affine_grid_generator(align_corners: bool) -> None:
    rng = np.random.default_rng(7)
    thetas = rng.normal(size=(2, 2, 3))
    theta = torch.tensor(thetas, requires_grad=True)
    with CallNames() as recorder:
        grid = F.affine_grid(theta, (2, 1, 3, 4), align_corners=align_corners)
    assert recorder.names == ["aten.affine_grid_generator.default"]

    def axis(steps: int) -> Any:
        line = np.linspace(-1, 1, steps)
        return line if align_corners else line * (steps - 1) / steps

    ys, xs = np.meshgrid(axis(3), axis(4), indexing="ij")
    base = np.stack([xs, ys, np.ones_like(xs)], -1)  # (H, W, 3)
    np.testing.assert_allclose(grid.detach().numpy(),
                               np.einsum("hwk,njk->nhwj", base, thetas), rtol=1e-12)
    with CallNames() as recorder:
        g, = torch.autograd.grad(grid.sum(), theta)
    assert recorder.names.count("aten.affine_grid_generator_backward.default") == 1
    np.testing.assert_allclose(g.numpy(), np.broadcast_to(base.sum((0, 1)), (2, 2, 3)),
                               rtol=1e-12, atol=1e-12)
    fn = lambda t: F.affine_grid(t, (2, 1, 3, 4), align_corners=align_corners)  # noqa: E731
    assert torch.autograd.gradcheck(fn, (theta,))
    assert torch.autograd.gradgradcheck(fn, (theta,))
    volume = torch.tensor(rng.normal(size=(1, 3, 4)), requires_grad=True)
    assert torch.autograd.gradcheck(
        lambda t: F.affine_grid(t, (1, 1, 2, 3, 2), align_corners=align_corners), (volume,))


def test_affine_grid_meta_and_onnx() -> None:
    import io

    meta = torch.empty(2, 2, 3, device="meta", requires_grad=True)
    grid = F.affine_grid(meta, (2, 1, 3, 4), align_corners=False)
    assert grid.device.type == "meta" and tuple(grid.shape) == (2, 3, 4, 2)
    assert tuple(torch.autograd.grad(grid.sum(), meta)[0].shape) == (2, 2, 3)

    onnx = pytest.importorskip("onnx", reason="torch.onnx.export writes files with onnx")
    ort = pytest.importorskip("onnxruntime", reason="exported files are run with onnxruntime")

    class Warp(torch.nn.Module):
        def forward(self, image: torch.Tensor, theta: torch.Tensor) -> torch.Tensor:
            grid = F.affine_grid(theta, (2, 3, 5, 6), align_corners=False)
            return F.grid_sample(image, grid, align_corners=False)

    rng = np.random.default_rng(8)
    image = torch.tensor(rng.normal(size=(2, 3, 4, 4)), dtype=torch.float32)
    theta = torch.tensor(rng.normal(0, 0.5, (2, 2, 3)), dtype=torch.float32)
    buffer = io.BytesIO()
    torch.onnx.export(Warp(), (image, theta), buffer, input_names=["image", "theta"])
    onnx.checker.check_model(onnx.load_from_string(buffer.getvalue()))
    session = ort.InferenceSession(buffer.getvalue(), providers=["CPUExecutionProvider"])
    got = session.run(None, {"image": image.numpy(), "theta": theta.numpy()})[0]
    np.testing.assert_allclose(got, Warp()(image, theta).numpy(), rtol=1e-4, atol=1e-5)


def test_operators_run_on_fake_tensors() -> None:
    from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode

    with FakeTensorMode():
        x, t = torch.randn(4, 3, requires_grad=True), torch.rand(4, 3)
        p = torch.rand(4, 3).requires_grad_()
        calls = {
            (): [lambda: F.smooth_l1_loss(x, t), lambda: F.soft_margin_loss(x, t),
                 lambda: F.binary_cross_entropy(p, t),
                 lambda: F.binary_cross_entropy_with_logits(x, t, pos_weight=torch.ones(3)),
                 lambda: F.nll_loss(torch.randn(2, 3, 4, 5, requires_grad=True),
                                    torch.zeros(2, 4, 5, dtype=torch.int64))],
            (4, 3): [lambda: F.huber_loss(x, t, reduction="none"),
                     lambda: F.rrelu(x, training=True)],
            (2, 3, 6, 7): [lambda: F.grid_sample(torch.randn(2, 3, 4, 5, requires_grad=True),
                                                 torch.rand(2, 6, 7, 2, requires_grad=True),
                                                 align_corners=False)],
            (2, 4, 5, 2): [lambda: F.affine_grid(torch.randn(2, 2, 3, requires_grad=True),
                                                 (2, 3, 4, 5), align_corners=False)],
        }
        for shape, fns in calls.items():
            for fn in fns:
                out = fn()
                assert isinstance(out, FakeTensor) and tuple(out.shape) == shape
                out.sum().backward()


def _numpy_trilinear_zeros(volume: Any, grid: Any) -> Any:
    """Trilinear sampling (align_corners=False, zeros outside) of (N, C, D, H, W) at
    (N, Do, Ho, Wo, (x, y, z)): a loop over points and the eight corners."""
    n, c, depth, h, w = volume.shape
    out = np.zeros((n, c) + grid.shape[1:4])
    for b in range(n):
        for pos in np.ndindex(*grid.shape[1:4]):
            gx, gy, gz = grid[(b,) + pos]
            p = [((gz + 1) * depth - 1) / 2, ((gy + 1) * h - 1) / 2, ((gx + 1) * w - 1) / 2]
            lows = [int(np.floor(v)) for v in p]
            for bits in np.ndindex(2, 2, 2):
                idx = [lo + bit for lo, bit in zip(lows, bits)]
                weight = np.prod([(v - lo) if bit else 1 - (v - lo)
                                  for v, lo, bit in zip(p, lows, bits)])
                if all(0 <= i < s for i, s in zip(idx, (depth, h, w))):
                    out[(b, slice(None)) + pos] += weight * volume[b, :, idx[0], idx[1], idx[2]]
    return out


def test_volumetric_grid_sample_is_grid_sampler_3d() -> None:
    rng = np.random.default_rng(9)
    volume, grid = rng.normal(size=(1, 2, 3, 4, 3)), rng.uniform(-1.2, 1.2, (1, 2, 3, 2, 3))
    x, g = torch.tensor(volume, requires_grad=True), torch.tensor(grid, requires_grad=True)
    with CallNames() as recorder:
        out = F.grid_sample(x, g, align_corners=False)
    assert recorder.names == ["aten.grid_sampler_3d.default"]
    np.testing.assert_allclose(out.detach().numpy(), _numpy_trilinear_zeros(volume, grid),
                               rtol=1e-12)
    with CallNames() as recorder:
        torch.autograd.grad(out.sum(), (x, g))
    assert recorder.names.count("aten.grid_sampler_3d_backward.default") == 1
    for mode, padding in (("bilinear", "reflection"), ("nearest", "border")):
        fn = lambda a, b, m=mode, p=padding: F.grid_sample(  # noqa: E731
            a, b, mode=m, padding_mode=p, align_corners=True)
        assert torch.autograd.gradcheck(fn, (x, g))
    with pytest.raises(RuntimeError, match="bicubic interpolation only supports 4D input"):
        F.grid_sample(x, g, mode="bicubic", align_corners=False)


@pytest.mark.parametrize("reduction", sorted(REDUCTIONS))
def test_spatial_nll_loss_under_vmap_matches_the_loop_without_fallback(reduction: str) -> None:
    import warnings

    from torch.func import grad, vmap

    rng = np.random.default_rng(10)
    x = torch.tensor(rng.normal(size=(3, 2, 3, 2, 2)))
    target = torch.tensor(rng.integers(0, 3, (3, 2, 2, 2)))
    target[0, 0, 0, 0] = -100
    weight = torch.tensor([0.5, 2.0, 1.0], dtype=torch.float64)

    def loss(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return F.nll_loss(a, b, weight=weight, reduction=reduction).sum()

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a batching rule, not the per-sample fallback
        values = vmap(loss)(x, target)
        grads = vmap(grad(loss))(x, target)
        shared = vmap(grad(loss), in_dims=(0, None))(x, target[1])
    torch.testing.assert_close(values, torch.stack([loss(a, b) for a, b in zip(x, target)]))
    torch.testing.assert_close(grads, torch.stack([grad(loss)(a, b) for a, b in zip(x, target)]))
    torch.testing.assert_close(shared, torch.stack([grad(loss)(a, target[1]) for a in x]))


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
def test_grid_sample_under_vmap_matches_the_loop_without_fallback(mode: str) -> None:
    import warnings

    from torch.func import grad, vmap

    rng = np.random.default_rng(11)
    x = torch.tensor(rng.normal(size=(3, 2, 2, 3, 4)))
    grid = torch.tensor(rng.uniform(-1.1, 1.1, (3, 2, 2, 3, 2)))

    def loss(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return F.grid_sample(a, b, mode=mode, align_corners=False).pow(2).sum()

    both = grad(loss, argnums=(0, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a batching rule, not the per-sample fallback
        values = vmap(loss)(x, grid)
        grads = vmap(both)(x, grid)
        shared = vmap(both, in_dims=(None, 0))(x[0], grid)
    torch.testing.assert_close(values, torch.stack([loss(a, b) for a, b in zip(x, grid)]))
    for got, want in zip(grads, zip(*[both(a, b) for a, b in zip(x, grid)])):
        torch.testing.assert_close(got, torch.stack(want))
    for got, want in zip(shared, zip(*[both(x[0], b) for b in grid])):
        torch.testing.assert_close(got, torch.stack(want))


def test_decomposed_losses_call_in_pytorchs_order() -> None:
    # PyTorch writes kl_div and margin_ranking_loss in other ops too: the same calls, in the
    # same order (as real PyTorch 2.13's dispatch mode records them)
    x, t = torch.tensor(X), torch.tensor(np.abs(T))
    with CallNames() as recorder:
        F.kl_div(x, t, reduction="none")
    assert recorder.names[:3] == ["aten.mul.Tensor", "aten.xlogy.Tensor", "aten.sub.Tensor"]
    with CallNames() as recorder:
        loss = F.kl_div(x, t, reduction="none", log_target=True)
    assert recorder.names[:3] == ["aten.sub.Tensor", "aten.exp.default", "aten.mul.Tensor"]
    np.testing.assert_allclose(loss.numpy(), np.exp(np.abs(T)) * (np.abs(T) - X), rtol=1e-12)
    signs = torch.tensor(SIGNS)
    with CallNames() as recorder:
        loss = F.margin_ranking_loss(x, t, signs, margin=0.5, reduction="none")
    assert recorder.names[:3] == ["aten.sub.Tensor", "aten.neg.default", "aten.mul.Tensor"]
    np.testing.assert_allclose(loss.numpy(), np.maximum(0, -SIGNS * (X - np.abs(T)) + 0.5),
                               rtol=1e-12)
