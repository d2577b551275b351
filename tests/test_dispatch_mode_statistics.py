"""``x.mean()``, ``x.mean(dim)``, ``x.var(...)`` and ``x.std(...)`` reach PyTorch's operators
(``aten::mean``, ``aten::mean.dim``, ``aten::var.correction``, ``aten::std.correction``) under
a dispatch mode, one call each, with formula gradients.

The expected names are those of PyTorch's native_functions.yaml, in PyTorch's ``str(func)``
form; the same calls under a TorchDispatchMode in real PyTorch 2.13 (CPU) give the same lists.
Expected values and gradients come from numpy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from dispatch_recording import CallNames

import torch

X = np.array([[0.5, -1.25, 2.0, 3.5], [-0.75, 0.25, 1.5, -2.0], [4.0, -3.0, 0.125, 1.0]])

# call -> (expected operator, numpy value, numpy gradient of the sum of the result)
CASES: dict[str, tuple[Callable[[torch.Tensor], torch.Tensor], str, Any, Any]] = {
    "mean": (lambda x: x.mean(), "aten.mean.default", X.mean(), np.full(X.shape, 1 / X.size)),
    "mean_dim": (lambda x: x.mean(-1), "aten.mean.dim", X.mean(-1), np.full(X.shape, 1 / 4)),
    "mean_keepdim": (lambda x: torch.mean(x, (0, 1), keepdim=True), "aten.mean.dim",
                     X.mean(keepdims=True), np.full(X.shape, 1 / X.size)),
    "var_dim": (lambda x: x.var(-1), "aten.var.correction", X.var(-1, ddof=1),
                2 * (X - X.mean(-1, keepdims=True)) / 3),
    "var_biased": (lambda x: x.var(0, unbiased=False), "aten.var.correction", X.var(0),
                   2 * (X - X.mean(0, keepdims=True)) / 3),
    "std": (lambda x: x.std(), "aten.std.correction", X.std(ddof=1),
            (X - X.mean()) / ((X.size - 1) * X.std(ddof=1))),
    "std_correction": (lambda x: torch.std(x, 1, correction=2, keepdim=True),
                       "aten.std.correction", X.std(1, ddof=2, keepdims=True),
                       (X - X.mean(1, keepdims=True)) / (2 * X.std(1, ddof=2, keepdims=True))),
}


@pytest.mark.parametrize("name", list(CASES))
def test_one_pytorch_operator_with_the_right_values_and_gradient(name: str) -> None:
    fn, op, value, gradient = CASES[name]
    # (traced without grad: PyTorch's autograd adds a detach where it saves std's result)
    plain = torch.tensor(X)
    with CallNames() as recorder:
        y = fn(plain)
    assert recorder.names == [op]
    np.testing.assert_allclose(y.numpy(), value, rtol=1e-12)
    x = torch.tensor(X, requires_grad=True)
    g, = torch.autograd.grad(fn(x).sum(), x)
    np.testing.assert_allclose(g.numpy(), gradient, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", list(CASES))
def test_gradcheck_and_gradgradcheck(name: str) -> None:
    x = torch.tensor(X, requires_grad=True)
    assert torch.autograd.gradcheck(CASES[name][0], (x,))
    assert torch.autograd.gradgradcheck(CASES[name][0], (x,))


def test_std_of_a_constant_has_a_zero_gradient() -> None:
    # PyTorch's std_backward masks the 0 / 0 where the deviation is 0
    x = torch.ones(2, 3, dtype=torch.float64, requires_grad=True)
    g, = torch.autograd.grad(x.std(-1).sum(), x)
    assert g.tolist() == [[0.0] * 3] * 2


def test_mean_keeps_pytorchs_dtype_rules_and_meta() -> None:
    assert torch.ones(3, dtype=torch.float16).mean().dtype == torch.float16
    assert torch.arange(4).mean(dtype=torch.float64).item() == 1.5
    with pytest.raises(RuntimeError, match="could not infer output dtype"):
        torch.arange(4).mean()
    assert np.isnan(torch.empty(0).mean().item())
    m = torch.empty(2, 5, 3, device="meta")
    assert m.mean(1).shape == (2, 3) and m.var(-1, keepdim=True).shape == (2, 5, 1)
    assert m.std().shape == () and m.std().device.type == "meta"


@pytest.mark.parametrize("schema", [
    "mean(Tensor self, *, ScalarType? dtype=None) -> Tensor",
    "mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    "var.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, "
    "bool keepdim=False) -> Tensor",
    "std.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, "
    "bool keepdim=False) -> Tensor",
])
def test_schemas_are_pytorchs(schema: str) -> None:
    name, _, overload = schema.partition("(")[0].partition(".")
    op = getattr(getattr(torch.ops.aten, name), overload or "default")
    printed = str(getattr(op, "_schema", None) or op.schema)
    assert printed.removeprefix("aten::") == schema


@pytest.mark.parametrize("name", list(CASES))
def test_vmap_has_a_batching_rule_and_matches_the_loop(name: str) -> None:
    import warnings

    from torch.func import vmap

    fn = CASES[name][0]
    x = torch.randn(5, 3, 4, dtype=torch.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the per-sample fallback warns of its performance
        batched = vmap(fn)(x)
    torch.testing.assert_close(batched, torch.stack([fn(s) for s in x]))


# -- mse_loss: aten::mse_loss and aten::mse_loss_backward -------------------------------------


@pytest.mark.parametrize("reduction, enum", [("mean", 1), ("sum", 2), ("none", 0)])
def test_mse_loss_is_pytorchs_operator_pair(reduction: str, enum: int) -> None:
    target_values = X[::-1].copy() * 0.5
    x = torch.tensor(X, requires_grad=True)
    target = torch.tensor(target_values)
    with CallNames() as recorder:
        loss = torch.nn.functional.mse_loss(x, target, reduction=reduction)
    assert recorder.names == ["aten.mse_loss.default"]
    squares = (X - target_values) ** 2
    expected = {"mean": squares.mean(), "sum": squares.sum(), "none": squares}[reduction]
    np.testing.assert_allclose(loss.detach().numpy(), expected, rtol=1e-12)
    grad_output = torch.ones_like(loss)
    with CallNames() as recorder:
        g, = torch.autograd.grad(loss, x, grad_output)
    assert recorder.names == ["aten.mse_loss_backward.default"]
    scale = 2 / X.size if enum == 1 else 2
    np.testing.assert_allclose(g.numpy(), scale * (X - target_values), rtol=1e-12)
    assert torch.autograd.gradcheck(
        lambda a, b: torch.nn.functional.mse_loss(a, b, reduction=reduction),
        (x, torch.tensor(target_values, requires_grad=True)))
    assert torch.autograd.gradgradcheck(
        lambda a, b: torch.nn.functional.mse_loss(a, b, reduction=reduction),
        (x, torch.tensor(target_values, requires_grad=True)))


def _schema(op: Any) -> str:
    return str(getattr(op, "_schema", None) or op.schema).removeprefix("aten::")


def test_mse_loss_schemas_are_pytorchs() -> None:
    assert _schema(torch.ops.aten.mse_loss.default) == (
        "mse_loss(Tensor self, Tensor target, int reduction=1) -> Tensor")
    assert _schema(torch.ops.aten.mse_loss_backward.default) == (
        "mse_loss_backward(Tensor grad_output, Tensor self, Tensor target, int reduction) "
        "-> Tensor")


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss_under_vmap_matches_the_loop(reduction: str) -> None:
    import warnings

    from torch.func import grad, vmap

    def loss(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.mse_loss(a, b, reduction=reduction).sum()

    x, y = torch.randn(5, 3, 4, dtype=torch.float64), torch.randn(5, 3, 4, dtype=torch.float64)
    shared = torch.randn(3, 4, dtype=torch.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no per-sample fallback
        values = vmap(loss)(x, y)
        grads = vmap(grad(loss))(x, y)
        grads_shared = vmap(grad(loss), in_dims=(0, None))(x, shared)
    torch.testing.assert_close(values, torch.stack([loss(a, b) for a, b in zip(x, y)]))
    torch.testing.assert_close(grads, torch.stack([grad(loss)(a, b) for a, b in zip(x, y)]))
    torch.testing.assert_close(grads_shared, torch.stack([grad(loss)(a, shared) for a in x]))
