"""torch.nn.init (fans, gains, distributions) and torch.nn.utils (clipping, vectors)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import torch
import torch.nn as nn
from torch.nn import init


def test_calculate_gain_values_documented_by_pytorch():
    assert init.calculate_gain("linear") == 1.0 == init.calculate_gain("conv2d")
    assert init.calculate_gain("sigmoid") == 1.0
    assert init.calculate_gain("tanh") == pytest.approx(5 / 3)
    assert init.calculate_gain("relu") == pytest.approx(math.sqrt(2))
    assert init.calculate_gain("leaky_relu") == pytest.approx(math.sqrt(2 / (1 + 0.01**2)))
    assert init.calculate_gain("leaky_relu", 0.2) == pytest.approx(1.3867504905630728)
    assert init.calculate_gain("selu") == 0.75
    with pytest.raises(ValueError, match="Unsupported nonlinearity foo"):
        init.calculate_gain("foo")
    with pytest.raises(ValueError, match="negative_slope True not a valid number"):
        init.calculate_gain("leaky_relu", True)


def test_fans():
    assert init._calculate_fan_in_and_fan_out(torch.empty(6, 4)) == (4, 6)
    assert init._calculate_fan_in_and_fan_out(torch.empty(8, 3, 5, 5)) == (75, 200)
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init._calculate_fan_in_and_fan_out(torch.empty(3))


def test_distributions_have_the_documented_bounds_and_spread():
    torch.manual_seed(0)
    w = torch.empty(400, 300)
    init.kaiming_uniform_(w, a=math.sqrt(5))
    assert w.abs().max().item() <= 1 / math.sqrt(300) + 1e-7
    init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
    assert w.std().item() == pytest.approx(math.sqrt(2) / math.sqrt(400), rel=0.03)
    init.xavier_uniform_(w, gain=2.0)
    bound = 2.0 * math.sqrt(6 / 700)
    assert w.abs().max().item() <= bound + 1e-7
    assert w.std().item() == pytest.approx(bound / math.sqrt(3), rel=0.03)
    init.xavier_normal_(w)
    assert w.std().item() == pytest.approx(math.sqrt(2 / 700), rel=0.03)
    init.trunc_normal_(w, mean=1.0, std=2.0, a=-1.0, b=2.5)
    assert w.min().item() >= -1.0 and w.max().item() <= 2.5
    init.uniform_(w, -3, -2)
    assert -3 <= w.min().item() and w.max().item() <= -2
    init.normal_(w, 5.0, 0.5)
    assert w.mean().item() == pytest.approx(5.0, abs=0.01)
    init.constant_(w, 0.25)
    assert w.unique().tolist() == [0.25]
    init.zeros_(w)
    init.ones_(w)
    assert w.sum().item() == w.numel()


def test_initialisers_are_not_recorded_by_autograd():
    p = nn.Parameter(torch.empty(3, 3))
    init.normal_(p)
    assert p.grad_fn is None and p.requires_grad


def test_structured_initialisers():
    e = init.eye_(torch.empty(2, 3))
    assert e.tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions"):
        init.eye_(torch.empty(2))
    w = init.dirac_(torch.empty(2, 2, 3, 3))
    assert w.sum().item() == 2 and w[0, 0, 1, 1].item() == 1 and w[1, 1, 1, 1].item() == 1
    torch.manual_seed(1)
    q = init.orthogonal_(torch.empty(4, 6), gain=2.0)
    np.testing.assert_allclose((q @ q.t()).numpy(), 4 * np.eye(4), atol=1e-5)
    s = init.sparse_(torch.empty(10, 4), sparsity=0.3)
    assert ((s == 0).sum(0) >= 3).all()


def test_clip_grad_norm_matches_numpy():
    torch.manual_seed(2)
    params = [nn.Parameter(torch.randn(3, 4)), nn.Parameter(torch.randn(5))]
    grads = [torch.randn(3, 4), torch.randn(5)]
    for p, g in zip(params, grads):
        p.grad = g.clone()
    flat = np.concatenate([g.numpy().ravel() for g in grads])
    total = nn.utils.clip_grad_norm_(params, max_norm=1.0)
    assert total.item() == pytest.approx(np.linalg.norm(flat), rel=1e-6)
    scale = 1.0 / (np.linalg.norm(flat) + 1e-6)
    np.testing.assert_allclose(params[0].grad.numpy(), grads[0].numpy() * scale, rtol=1e-5)
    for p, g in zip(params, grads):
        p.grad = g.clone()
    total = nn.utils.clip_grad_norm_(params, max_norm=100.0, norm_type=math.inf)
    assert total.item() == pytest.approx(np.abs(flat).max())
    np.testing.assert_array_equal(params[1].grad.numpy(), grads[1].numpy())  # not scaled up
    params[0].grad[0, 0] = math.nan
    with pytest.raises(RuntimeError, match="is non-finite, so it cannot be clipped"):
        nn.utils.clip_grad_norm_(params, 1.0, error_if_nonfinite=True)


def test_clip_grad_value_and_vector_round_trip():
    p = nn.Parameter(torch.zeros(4))
    p.grad = torch.tensor([-3.0, -0.5, 0.5, 3.0])
    nn.utils.clip_grad_value_([p], 1.0)
    assert p.grad.tolist() == [-1.0, -0.5, 0.5, 1.0]
    m = nn.Linear(3, 2)
    vec = nn.utils.parameters_to_vector(m.parameters())
    assert vec.shape == (8,)
    nn.utils.vector_to_parameters(torch.arange(8.0), m.parameters())
    assert m.weight.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert m.bias.tolist() == [6.0, 7.0]
