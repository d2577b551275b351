"""Gradients of complex functions follow PyTorch's convention (the conjugate Wirtinger
derivative: ``grad * conj(f'(z))`` for a holomorphic f).

Each function is checked with gradcheck in float64 with its complex input and output seen as
real pairs (``view_as_complex``/``view_as_real``): finite differences of a real function of real
numbers then fix the only correct gradient, so a missing conjugate fails.
"""

from __future__ import annotations

import numpy as np
import pytest

import torch
from torch.autograd import gradcheck, gradgradcheck

FUNCTIONS = {
    "exp": lambda z: z.exp(),
    "log": lambda z: z.log(),
    "sin": lambda z: z.sin(),
    "sqrt": lambda z: z.sqrt(),
    "reciprocal": lambda z: z.reciprocal(),
    "tanh": lambda z: z.tanh(),
    "acosh": lambda z: z.acosh(),
    "asinh": lambda z: z.asinh(),
    "sigmoid": lambda z: z.sigmoid(),
    "square": lambda z: z.square(),
    "pow scalar": lambda z: z ** 3,
    "pow tensor": lambda z: z ** (z * 0.5),
    "times a complex number": lambda z: z * (1 + 2j),
    "divide": lambda z: (1 - 0.5j) / z,
    "sgn": lambda z: z.sgn(),
    "abs": lambda z: z.abs(),
    "angle": lambda z: z.angle(),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_complex_gradient_matches_finite_differences(name: str) -> None:
    fn = FUNCTIONS[name]
    # away from 0 and the branch cuts on the real and imaginary axes
    pairs = np.array([[0.8, 0.3], [1.5, -0.7], [0.4, 1.1], [2.0, 0.2], [-0.7, -0.4]])
    x = torch.tensor(pairs, dtype=torch.float64, requires_grad=True)

    def real_pairs(x: torch.Tensor) -> torch.Tensor:
        y = fn(torch.view_as_complex(x))
        return torch.view_as_real(y) if y.is_complex() else y

    assert gradcheck(real_pairs, (x,))
    assert gradgradcheck(real_pairs, (x,))


def test_complex_and_polar_are_differentiable() -> None:
    r = torch.tensor([0.5, 1.5, 2.0], dtype=torch.float64, requires_grad=True)
    theta = torch.tensor([0.3, -1.2, 2.5], dtype=torch.float64, requires_grad=True)
    for make in (torch.complex, torch.polar):
        assert gradcheck(lambda a, b, m=make: torch.view_as_real(m(a, b)), (r, theta))
        assert gradgradcheck(lambda a, b, m=make: torch.view_as_real(m(a, b)), (r, theta))
    # broadcasting parts: the gradient sums back to each part's shape
    one = torch.tensor([0.25], dtype=torch.float64, requires_grad=True)
    torch.complex(r, one).imag.sum().backward()
    assert one.grad.tolist() == [3.0]


def test_polar_gradient_at_zero_radius_is_zero_as_in_pytorch() -> None:
    # the phasor is taken as sgn(result), which is 0 where the radius is 0 (PyTorch's rule)
    r = torch.zeros(1, dtype=torch.float64, requires_grad=True)
    theta = torch.tensor([0.7], dtype=torch.float64, requires_grad=True)
    torch.polar(r, theta).real.sum().backward()
    assert r.grad.tolist() == [0.0] and theta.grad.tolist() == [0.0]
