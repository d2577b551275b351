"""``torch.nn.functional``'s first functions against numpy: values, PyTorch's conventions and
errors, gradients of the composites (finite differences in float64). Functions whose core op is
not there yet (``torch.layer_norm``, ``torch.conv2d``, the aten loss and attention ops) skip."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np
import pytest
from numgrad import check_grad

import torch
import torch.nn.functional as F

RNG = np.random.default_rng(0)


def randn(*shape: int, dtype: np.dtype = np.float64) -> np.ndarray:
    return RNG.standard_normal(shape).astype(dtype)


def t(a: np.ndarray, requires_grad: bool = False) -> torch.Tensor:
    return torch.tensor(a, requires_grad=requires_grad)


def needs(path: str) -> None:
    """Skip when the core op ``path`` (under torch) has not landed yet."""
    torch.exp  # noqa: B018 - loads the op modules, which torch.ops.aten lookups do not do
    obj = torch
    for part in path.split(".")[1:]:
        try:
            obj = getattr(obj, part)
        except AttributeError:
            pytest.skip(f"{path} is not in core yet")


def log_softmax_np(x: np.ndarray, axis: int) -> np.ndarray:
    z = x - x.max(axis=axis, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=axis, keepdims=True))


# --------------------------------------------------------------------------- import


def test_import_paths() -> None:
    import torch.nn

    assert torch.nn.functional is F
    assert F.__name__ == "torch.nn.functional"
    assert set(F.__all__) <= set(dir(F))


# --------------------------------------------------------------------------- linear


@pytest.mark.parametrize("shape", [(5, 3), (2, 4, 3), (3,)])
@pytest.mark.parametrize("with_bias", [True, False])
def test_linear(shape: tuple[int, ...], with_bias: bool) -> None:
    x, w, b = randn(*shape), randn(4, 3), randn(4)
    out = F.linear(t(x), t(w), t(b) if with_bias else None)
    expected = x @ w.T + (b if with_bias else 0)
    assert tuple(out.shape) == expected.shape
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12, atol=1e-12)


def test_linear_grad() -> None:
    check_grad(F.linear, t(randn(5, 3)), t(randn(4, 3)), t(randn(4)))
    check_grad(lambda x, w: F.linear(x, w), t(randn(2, 5, 3)), t(randn(4, 3)))


def test_linear_shape_error() -> None:
    with pytest.raises(RuntimeError):
        F.linear(t(randn(2, 3)), t(randn(4, 2)))


# --------------------------------------------------------------------------- activations


def test_relu_values_nan_and_inplace() -> None:
    x = np.array([1.5, -2.0, 0.0, np.nan, -np.inf, np.inf])
    out = F.relu(t(x)).numpy()
    np.testing.assert_array_equal(out, [1.5, 0.0, 0.0, np.nan, 0.0, np.inf])
    y = t(x.copy())
    assert F.relu(y, inplace=True) is y
    np.testing.assert_array_equal(y.numpy(), out)
    z = t(x.copy())
    assert F.relu_(z) is z


def test_relu_grad_is_zero_at_zero() -> None:
    x = t(np.array([2.0, -1.0, 0.0]), requires_grad=True)
    F.relu(x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 0.0, 0.0])


def test_gelu_exact_and_tanh() -> None:
    x = randn(50)
    erf = np.vectorize(math.erf)
    np.testing.assert_allclose(F.gelu(t(x)).numpy(), x * 0.5 * (1 + erf(x / math.sqrt(2))),
                               rtol=1e-12, atol=1e-14)
    approx = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    np.testing.assert_allclose(F.gelu(t(x), approximate="tanh").numpy(), approx, rtol=1e-12,
                               atol=1e-14)
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh"):
        F.gelu(t(x), approximate="fast")


@pytest.mark.parametrize("fn", [F.gelu, lambda x: F.gelu(x, approximate="tanh"), F.silu,
                                F.sigmoid, F.tanh])
def test_activation_grads(fn: Callable[[torch.Tensor], torch.Tensor]) -> None:
    check_grad(fn, t(randn(3, 4)))


def test_silu_sigmoid_tanh() -> None:
    x = randn(20)
    sig = 1 / (1 + np.exp(-x))
    np.testing.assert_allclose(F.silu(t(x)).numpy(), x * sig, rtol=1e-12)
    np.testing.assert_allclose(F.sigmoid(t(x)).numpy(), sig, rtol=1e-12)
    np.testing.assert_allclose(F.tanh(t(x)).numpy(), np.tanh(x), rtol=1e-12)
    y = t(x.copy())
    assert F.silu(y, inplace=True) is y
    np.testing.assert_allclose(y.numpy(), x * sig, rtol=1e-12)


def test_float32_stays_float32() -> None:
    x = t(randn(4, dtype=np.float32))
    for fn in (F.relu, F.gelu, F.silu, F.sigmoid, F.tanh, lambda v: F.softmax(v, 0)):
        assert fn(x).dtype == torch.float32


# --------------------------------------------------------------------------- softmax


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_log_softmax(dim: int) -> None:
    x = randn(3, 5)
    np.testing.assert_allclose(F.log_softmax(t(x), dim).numpy(), log_softmax_np(x, dim),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(F.softmax(t(x), dim=dim).numpy(),
                               np.exp(log_softmax_np(x, dim)), rtol=1e-12, atol=1e-12)


def test_softmax_dtype_argument() -> None:
    x = randn(2, 3, dtype=np.float32)
    out = F.softmax(t(x), -1, dtype=torch.float64)
    assert out.dtype == torch.float64
    np.testing.assert_allclose(out.numpy(), np.exp(log_softmax_np(x.astype(np.float64), -1)),
                               rtol=1e-12)


@pytest.mark.parametrize(("ndim", "implicit"), [(1, 0), (2, 1), (3, 0), (4, 1)])
def test_softmax_implicit_dim_warns(ndim: int, implicit: int) -> None:
    x = randn(*([2, 3, 2, 2][:ndim]))
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        out = F.softmax(t(x))
    np.testing.assert_allclose(out.numpy(), np.exp(log_softmax_np(x, implicit)), rtol=1e-12)
    with pytest.warns(UserWarning, match="Implicit dimension choice for log_softmax"):
        F.log_softmax(t(x))


# --------------------------------------------------------------------------- dropout


def test_dropout_statistics_and_scale() -> None:
    torch.manual_seed(0)
    x = torch.ones(20000)
    out = F.dropout(x, p=0.3)
    values = out.numpy()
    kept = values != 0
    np.testing.assert_allclose(values[kept], 1 / 0.7, rtol=1e-6)
    assert abs(kept.mean() - 0.7) < 0.02
    assert x.numpy().min() == 1.0  # not in place


def test_dropout_modes() -> None:
    x = t(randn(10))
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    np.testing.assert_array_equal(F.dropout(x, 1.0).numpy(), np.zeros(10))
    y = t(np.ones(1000))
    assert F.dropout(y, 0.5, inplace=True) is y
    assert set(np.unique(y.numpy())) <= {0.0, 2.0}
    for p in (-0.1, 1.5):
        with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
            F.dropout(x, p)


def test_dropout_grad_uses_the_mask() -> None:
    torch.manual_seed(1)
    x = t(np.ones(200), requires_grad=True)
    out = F.dropout(x, 0.25)
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), out.detach().numpy(), rtol=1e-12)


# --------------------------------------------------------------------------- losses


def nll_np(logp: np.ndarray, target: np.ndarray, weight: np.ndarray | None, ignore: int,
           reduction: str) -> np.ndarray:
    classes = logp.shape[1]
    w = np.ones(classes) if weight is None else weight
    moved = np.moveaxis(logp, 1, -1).reshape(-1, classes)
    flat = target.reshape(-1)
    valid = flat != ignore
    safe = np.where(valid, flat, 0)
    per = -moved[np.arange(flat.size), safe] * w[safe] * valid
    if reduction == "none":
        return per.reshape(target.shape)
    if reduction == "sum":
        return per.sum()
    return per.sum() / (w[safe] * valid).sum()


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("shape", [(6, 4), (3, 4, 5)])
def test_nll_loss(reduction: str, weighted: bool, shape: tuple[int, ...]) -> None:
    logp = log_softmax_np(randn(*shape), 1)
    target = RNG.integers(0, 4, (shape[0], *shape[2:]))
    target.reshape(-1)[1] = -100  # one ignored entry
    weight = np.abs(randn(4)) + 0.1 if weighted else None
    out = F.nll_loss(t(logp), torch.tensor(target),
                     t(weight) if weighted else None, reduction=reduction)
    np.testing.assert_allclose(out.numpy(), nll_np(logp, target, weight, -100, reduction),
                               rtol=1e-12, atol=1e-12)


def test_nll_loss_unbatched_grad_and_errors() -> None:
    logp = log_softmax_np(randn(5), 0)
    out = F.nll_loss(t(logp), torch.tensor(2))
    np.testing.assert_allclose(out.item(), -logp[2], rtol=1e-12)
    check_grad(lambda x: F.nll_loss(x, torch.tensor([1, 0, 3])), t(randn(3, 4)))
    with pytest.raises(IndexError, match="Target 7 is out of bounds"):
        F.nll_loss(t(randn(2, 4)), torch.tensor([1, 7]))
    with pytest.raises(ValueError, match="batch_size"):
        F.nll_loss(t(randn(2, 4)), torch.tensor([1, 2, 3]))
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        F.nll_loss(t(randn(2, 4)), torch.tensor([1, 2]), reduction="avg")


def test_legacy_reduction_arguments() -> None:
    logp = log_softmax_np(randn(4, 3), 1)
    target = np.array([0, 1, 2, 1])
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        out = F.nll_loss(t(logp), torch.tensor(target), size_average=False)
    np.testing.assert_allclose(out.item(), nll_np(logp, target, None, -100, "sum"))
    with pytest.warns(UserWarning):
        out = F.mse_loss(t(logp), t(logp * 0), reduce=False)
    assert tuple(out.shape) == (4, 3)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss(reduction: str) -> None:
    a, b, w = randn(3, 4), randn(3, 4), np.abs(randn(3, 4))
    sq = (a - b) ** 2
    expected = {"mean": sq.mean(), "sum": sq.sum(), "none": sq}[reduction]
    np.testing.assert_allclose(F.mse_loss(t(a), t(b), reduction=reduction).numpy(), expected,
                               rtol=1e-12)
    weighted = {"mean": (sq * w).sum() / w.sum(), "sum": (sq * w).sum(), "none": sq * w}
    np.testing.assert_allclose(F.mse_loss(t(a), t(b), reduction=reduction, weight=t(w)).numpy(),
                               weighted[reduction], rtol=1e-12)
    check_grad(lambda x, y: F.mse_loss(x, y, reduction=reduction), t(a), t(b))


def test_mse_loss_broadcast_warning_and_errors() -> None:
    with pytest.warns(UserWarning, match="different to the input size"):
        F.mse_loss(t(randn(2, 3)), t(randn(3)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.mse_loss(t(randn(2, 3)), t(randn(2, 3)))
    with pytest.raises(ValueError, match="Weights and input must have the same size"):
        F.mse_loss(t(randn(2, 3)), t(randn(2, 3)), weight=t(randn(3)))
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        F.mse_loss(t(randn(2)), t(randn(2)), reduction="avg")


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_class_indices(reduction: str) -> None:
    needs("torch.ops.aten.cross_entropy_loss")
    x = randn(5, 4)
    target = np.array([0, 3, -100, 1, 2])
    weight = np.abs(randn(4)) + 0.1
    out = F.cross_entropy(t(x), torch.tensor(target), t(weight), reduction=reduction)
    expected = nll_np(log_softmax_np(x, 1), target, weight, -100, reduction)
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-10, atol=1e-12)


def test_cross_entropy_label_smoothing_and_probabilities() -> None:
    needs("torch.ops.aten.cross_entropy_loss")
    x = randn(3, 4)
    target = np.array([1, 0, 3])
    logp = log_softmax_np(x, 1)
    eps = 0.2
    smooth = (1 - eps) * -logp[np.arange(3), target] + eps * -logp.mean(axis=1)
    out = F.cross_entropy(t(x), torch.tensor(target), label_smoothing=eps)
    np.testing.assert_allclose(out.item(), smooth.mean(), rtol=1e-10)
    probs = np.exp(log_softmax_np(randn(3, 4), 1))
    out = F.cross_entropy(t(x), t(probs))
    np.testing.assert_allclose(out.item(), (-(probs * logp).sum(1)).mean(), rtol=1e-10)
    check_grad(lambda v: F.cross_entropy(v, torch.tensor(target)), t(x))


# --------------------------------------------------------------------------- ops in core


def test_layer_norm() -> None:
    needs("torch.layer_norm")
    x, w, b = randn(3, 4, 5), randn(5), randn(5)
    mean = x.mean(-1, keepdims=True)
    var = x.var(-1, keepdims=True)
    expected = (x - mean) / np.sqrt(var + 1e-5) * w + b
    np.testing.assert_allclose(F.layer_norm(t(x), (5,), t(w), t(b)).detach().numpy(), expected,
                               rtol=1e-10, atol=1e-10)
    flat = x.reshape(3, 20)
    expected = (flat - flat.mean(-1, keepdims=True)) / np.sqrt(flat.var(-1, keepdims=True) + 0.1)
    np.testing.assert_allclose(F.layer_norm(t(x), [4, 5], eps=0.1).detach().numpy(),
                               expected.reshape(3, 4, 5), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(F.layer_norm(t(x), 5).detach().numpy(),
                               (x - mean) / np.sqrt(var + 1e-5), rtol=1e-10, atol=1e-10)


def conv_np(x: np.ndarray, w: np.ndarray, stride: int, padding: int) -> np.ndarray:
    """Direct 2-d convolution (cross-correlation), groups=1."""
    x = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    n, _, h, wd = x.shape
    co, _, kh, kw = w.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    out = np.zeros((n, co, oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw]
            out[:, :, i, j] = np.tensordot(patch, w, axes=([1, 2, 3], [1, 2, 3]))
    return out


@pytest.mark.parametrize(("stride", "padding"), [(1, 0), (2, 1)])
def test_conv2d(stride: int, padding: int) -> None:
    needs("torch.conv2d")
    x, w, b = randn(2, 3, 7, 6), randn(4, 3, 3, 2), randn(4)
    out = F.conv2d(t(x), t(w), t(b), stride=stride, padding=padding)
    expected = conv_np(x, w, stride, padding) + b[:, None, None]
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-10, atol=1e-10)


def test_conv1d_conv3d() -> None:
    needs("torch.conv1d")
    needs("torch.conv3d")
    x, w = randn(2, 3, 9), randn(4, 3, 3)
    expected = conv_np(x[:, :, None, :], w[:, :, None, :], 1, 0)[:, :, 0, :]
    np.testing.assert_allclose(F.conv1d(t(x), t(w)).detach().numpy(), expected, rtol=1e-10,
                               atol=1e-10)
    x3, w3 = randn(1, 2, 3, 4, 4), randn(2, 2, 1, 3, 3)
    out = F.conv3d(t(x3), t(w3), padding=(0, 1, 1))
    expected = np.stack([conv_np(x3[:, :, d], w3[:, :, 0], 1, 1) for d in range(3)], axis=2)
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-10, atol=1e-10)


def test_scaled_dot_product_attention() -> None:
    needs("torch.ops.aten.scaled_dot_product_attention")
    q, k, v = randn(2, 3, 4, 8), randn(2, 3, 5, 8), randn(2, 3, 5, 6)
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(8)
    expected = np.exp(log_softmax_np(scores, -1)) @ v
    out = F.scaled_dot_product_attention(t(q), t(k), t(v))
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-10, atol=1e-10)
    mask = np.tril(np.ones((4, 5), dtype=bool))
    masked = np.where(mask, scores * 0.5 * math.sqrt(8), -np.inf)
    out = F.scaled_dot_product_attention(t(q), t(k), t(v), attn_mask=torch.tensor(mask),
                                         scale=0.5)
    np.testing.assert_allclose(out.detach().numpy(), np.exp(log_softmax_np(masked, -1)) @ v,
                               rtol=1e-10, atol=1e-10)
    causal = F.scaled_dot_product_attention(t(q), t(k), t(v), is_causal=True)
    masked = np.where(mask, scores, -np.inf)
    np.testing.assert_allclose(causal.detach().numpy(), np.exp(log_softmax_np(masked, -1)) @ v,
                               rtol=1e-10, atol=1e-10)
