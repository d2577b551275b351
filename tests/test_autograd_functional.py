"""torch.autograd.functional: jacobian/hessian (reverse and forward mode), vjp, jvp, hvp, vhp
against derivatives written out in numpy."""

from __future__ import annotations

import numpy as np
import pytest

import torch
from torch.autograd import functional as AF

X = np.array([0.3, -1.2, 2.0])
Y = np.array([1.5, 0.4])


def f_np_jac(x: np.ndarray) -> np.ndarray:
    """Jacobian of f(x) = (sin(x0) * x1, x1 * x2^2, exp(x0 + x2))."""
    return np.array([
        [np.cos(x[0]) * x[1], np.sin(x[0]), 0.0],
        [0.0, x[2] ** 2, 2 * x[1] * x[2]],
        [np.exp(x[0] + x[2]), 0.0, np.exp(x[0] + x[2])],
    ])


def f(x: torch.Tensor) -> torch.Tensor:
    return torch.stack([x[0].sin() * x[1], x[1] * x[2] ** 2, (x[0] + x[2]).exp()])


def s_np_hess(x: np.ndarray) -> np.ndarray:
    """Hessian of s(x) = x0^2 x1 + sin(x2) x0."""
    return np.array([
        [2 * x[1], 2 * x[0], np.cos(x[2])],
        [2 * x[0], 0.0, 0.0],
        [np.cos(x[2]), 0.0, -np.sin(x[2]) * x[0]],
    ])


def s(x: torch.Tensor) -> torch.Tensor:
    return x[0] ** 2 * x[1] + x[2].sin() * x[0]


def t64(a: np.ndarray) -> torch.Tensor:
    return torch.tensor(a, dtype=torch.float64)


@pytest.mark.parametrize("strategy,vectorize", [("reverse-mode", False),
                                                 ("reverse-mode", True),
                                                 ("forward-mode", True)])
def test_jacobian_both_strategies(strategy: str, vectorize: bool) -> None:
    jac = AF.jacobian(f, t64(X), strategy=strategy, vectorize=vectorize)
    np.testing.assert_allclose(jac.numpy(), f_np_jac(X), rtol=1e-12, atol=1e-14)
    assert not jac.requires_grad


def test_jacobian_forward_mode_tuples() -> None:
    def g(a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return a * b.sum(), (a ** 2).sum()

    a, b = np.array([1.0, -2.0, 0.5]), Y
    jac = AF.jacobian(g, (t64(a), t64(b)), strategy="forward-mode", vectorize=True)
    np.testing.assert_allclose(jac[0][0].numpy(), np.eye(3) * b.sum())
    np.testing.assert_allclose(jac[0][1].numpy(), np.outer(a, np.ones(2)))
    np.testing.assert_allclose(jac[1][0].numpy(), 2 * a)
    np.testing.assert_array_equal(jac[1][1].numpy(), np.zeros(2))
    rev = AF.jacobian(g, (t64(a), t64(b)))
    for i in range(2):
        for j in range(2):
            np.testing.assert_allclose(jac[i][j].numpy(), rev[i][j].numpy(), rtol=1e-12)


@pytest.mark.parametrize("outer", ["reverse-mode", "forward-mode"])
def test_hessian_outer_strategies(outer: str) -> None:
    hess = AF.hessian(s, t64(X), vectorize=outer == "forward-mode",
                      outer_jacobian_strategy=outer)
    np.testing.assert_allclose(hess.numpy(), s_np_hess(X), rtol=1e-12, atol=1e-14)
    assert not hess.requires_grad


def test_vector_products() -> None:
    v3 = np.array([0.5, -1.0, 2.0])
    out, vjp = AF.vjp(f, t64(X), t64(v3))
    np.testing.assert_allclose(vjp.numpy(), v3 @ f_np_jac(X), rtol=1e-12)
    np.testing.assert_allclose(out.numpy(), f(t64(X)).numpy())
    _, jvp = AF.jvp(f, t64(X), t64(v3))
    np.testing.assert_allclose(jvp.numpy(), f_np_jac(X) @ v3, rtol=1e-12)
    _, hvp = AF.hvp(s, t64(X), t64(v3))
    np.testing.assert_allclose(hvp.numpy(), s_np_hess(X) @ v3, rtol=1e-12)
    _, vhp = AF.vhp(s, t64(X), t64(v3))
    np.testing.assert_allclose(vhp.numpy(), v3 @ s_np_hess(X), rtol=1e-12)


def test_forward_mode_errors_as_pytorch() -> None:
    x = t64(X)
    with pytest.raises(NotImplementedError, match="only implemented for `vectorize=True`"):
        AF.jacobian(f, x, strategy="forward-mode")
    with pytest.raises(NotImplementedError, match="`create_graph=True` and"):
        AF.jacobian(f, x, strategy="forward-mode", vectorize=True, create_graph=True)
    with pytest.raises(NotImplementedError, match="only implemented for `vectorize=True`"):
        AF.hessian(s, x, outer_jacobian_strategy="forward-mode")
    with pytest.raises(RuntimeError, match="`strict=True` and `vectorized=True`"):
        AF.jacobian(f, x, strict=True, vectorize=True)
    with pytest.raises(AssertionError, match='Expected strategy to be either'):
        AF.jacobian(f, x, strategy="sideways")


def test_functional_is_an_autograd_attribute() -> None:
    import torch.autograd.functional as by_import

    assert torch.autograd.functional is by_import
    assert callable(torch.autograd.functional.hessian)


def test_dir_of_autograd_lists_its_lazy_submodules() -> None:
    names = dir(torch.autograd)
    assert "functional" in names and "forward_ad" in names and "grad" in names
