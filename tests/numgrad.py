"""Finite-difference checks of autograd in float64, shared by the autograd test files:
first derivatives against central differences, second derivatives against central differences
of the first (built with ``create_graph=True``)."""

from __future__ import annotations

from collections.abc import Callable

import torch

F64 = torch.float64


# -- central differences ----------------------------------------------------------------------


def _replace(t: torch.Tensor, i: int, value: float) -> torch.Tensor:
    flat = t.detach().reshape(-1).tolist()
    flat[i] = value
    return torch.tensor(flat, dtype=t.dtype).reshape(t.shape)


def _random_like(t: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    return torch.randn(t.shape, dtype=t.dtype, generator=gen)


def check_grad(fn: Callable[..., torch.Tensor], *inputs: torch.Tensor, eps: float = 1e-6,
               atol: float = 1e-6, rtol: float = 1e-5) -> None:
    """Autograd's vector-Jacobian product of ``fn`` at ``inputs`` (for a random cotangent)
    equals the central differences of ``sum(fn(inputs) * cotangent)``."""
    gen = torch.Generator().manual_seed(0)
    leaves = [x.detach().requires_grad_(True) for x in inputs]
    out = fn(*leaves)
    cotangent = _random_like(out, gen)
    # a derivative that is constant in the inputs (the second derivative of a sum) does not
    # require grad: it is zero
    grads = (torch.autograd.grad(out, leaves, cotangent, allow_unused=True)
             if out.requires_grad else (None,) * len(leaves))

    def loss(args: list[torch.Tensor]) -> float:
        return float((fn(*args) * cotangent).sum())

    for k, x in enumerate(inputs):
        expected = []
        for i in range(x.numel()):
            base = x.reshape(-1).tolist()[i]
            plus, minus = list(inputs), list(inputs)
            plus[k], minus[k] = _replace(x, i, base + eps), _replace(x, i, base - eps)
            expected.append((loss(plus) - loss(minus)) / (2 * eps))
        want = torch.tensor(expected, dtype=F64).reshape(x.shape)
        got = grads[k] if grads[k] is not None else torch.zeros_like(want)
        torch.testing.assert_close(got, want, atol=atol, rtol=rtol,
                                   msg=lambda m, k=k: f"input {k}: {m}")


def check_gradgrad(fn: Callable[..., torch.Tensor], *inputs: torch.Tensor,
                   **tolerances: float) -> None:
    """Second derivatives: the gradient of ``sum(first derivatives * w)`` (built with
    ``create_graph=True``) equals central differences of that first-derivative expression."""
    gen = torch.Generator().manual_seed(1)
    weights: dict[str, list[torch.Tensor]] = {}

    def first(*xs: torch.Tensor) -> torch.Tensor:
        xs = tuple(x if x.requires_grad else x.detach().requires_grad_(True) for x in xs)
        out = fn(*xs)
        if "cotangent" not in weights:
            weights["cotangent"] = [_random_like(out, gen)]
            weights["w"] = [_random_like(x, gen) for x in xs]
        grads = torch.autograd.grad(out, xs, weights["cotangent"][0], create_graph=True,
                                    materialize_grads=True)
        return sum((g * w).sum() for g, w in zip(grads, weights["w"]))

    check_grad(first, *inputs, **tolerances)


def t64(values: object) -> torch.Tensor:
    return torch.tensor(values, dtype=F64)


def grad_of(fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    leaf = x.detach().requires_grad_(True)
    out = fn(leaf)
    (g,) = torch.autograd.grad(out, leaf, torch.ones_like(out))
    return g
