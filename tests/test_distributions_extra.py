"""Cauchy, Chi2, HalfNormal, Gumbel, Geometric, Weibull, Pareto, Binomial and
MixtureSameFamily (torch.distributions),
checked against their defining formulas; PyTorch 2.13 gives the same values (HalfNormal,
Gumbel, Weibull and Pareto are written out here rather than built as transformed
distributions, so their classes' bases differ)."""

from __future__ import annotations

import math

import pytest

import torch
from torch.distributions import (
    Binomial,
    Categorical,
    Cauchy,
    Chi2,
    Distribution,
    Gamma,
    Geometric,
    Gumbel,
    HalfNormal,
    Independent,
    MixtureSameFamily,
    Normal,
    Pareto,
    Weibull,
)

X = [0.5, -1.2, 2.0]
SCALES = [0.7, 1.5, 2.0]
VALUES = [0.2, 0.7, 1.9]


def _t(values: list[float]) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64)


def test_cauchy():
    d = Cauchy(_t(X), _t(SCALES))
    want = [-math.log(math.pi * s * (1 + ((v - m) / s) ** 2)) for m, s, v in zip(X, SCALES, VALUES)]
    assert d.log_prob(_t(VALUES)).tolist() == pytest.approx(want)
    assert d.cdf(_t(VALUES)).tolist() == pytest.approx(
        [math.atan((v - m) / s) / math.pi + 0.5 for m, s, v in zip(X, SCALES, VALUES)])
    assert d.icdf(d.cdf(_t(VALUES))).tolist() == pytest.approx(VALUES)
    assert d.entropy().tolist() == pytest.approx([math.log(4 * math.pi * s) for s in SCALES])
    assert torch.isnan(d.mean).all() and torch.isinf(d.variance).all()
    assert d.rsample((5,)).shape == (5, 3) and d.expand((2, 3)).batch_shape == (2, 3)
    with pytest.raises(ValueError, match="scale"):
        Cauchy(0.0, -1.0)


def test_chi2_is_a_gamma():
    d = Chi2(_t(SCALES))
    assert isinstance(d, Gamma) and d.df.tolist() == pytest.approx(SCALES)
    k = SCALES
    want = [(a / 2 - 1) * math.log(v) - v / 2 - (a / 2) * math.log(2) - math.lgamma(a / 2)
            for a, v in zip(k, VALUES)]
    assert d.log_prob(_t(VALUES)).tolist() == pytest.approx(want)
    assert d.mean.tolist() == pytest.approx(k) and d.variance.tolist() == pytest.approx(
        [2 * a for a in k])
    assert Chi2(3.0).batch_shape == () and d.expand((2, 3)).df.shape == (2, 3)


def test_half_normal():
    d = HalfNormal(_t(SCALES))
    want = [math.log(2) - 0.5 * math.log(2 * math.pi * s * s) - v * v / (2 * s * s)
            for s, v in zip(SCALES, VALUES)]
    assert d.log_prob(_t(VALUES)).tolist() == pytest.approx(want)
    assert d.cdf(_t(VALUES)).tolist() == pytest.approx(
        [math.erf(v / (s * math.sqrt(2))) for s, v in zip(SCALES, VALUES)])
    assert d.mean.tolist() == pytest.approx([s * math.sqrt(2 / math.pi) for s in SCALES])
    assert d.entropy().tolist() == pytest.approx(
        [0.5 * math.log(math.pi * s * s / 2) + 0.5 for s in SCALES])
    assert (d.rsample((50,)) >= 0).all()
    unchecked = HalfNormal(_t(SCALES), validate_args=False)
    assert unchecked.log_prob(_t([-0.5, 0.5, 1.0]))[0].item() == -math.inf
    with pytest.raises(ValueError, match="support"):
        d.log_prob(_t([-0.5, 0.5, 1.0]))


def test_gumbel():
    d = Gumbel(_t(X), _t(SCALES))
    z = [(v - m) / s for m, s, v in zip(X, SCALES, VALUES)]
    assert d.log_prob(_t(VALUES)).tolist() == pytest.approx(
        [-(zi + math.exp(-zi)) - math.log(s) for zi, s in zip(z, SCALES)])
    assert d.cdf(_t(VALUES)).tolist() == pytest.approx([math.exp(-math.exp(-zi)) for zi in z])
    assert d.icdf(d.cdf(_t(VALUES))).tolist() == pytest.approx(VALUES)
    euler = 0.5772156649015329
    assert d.mean.tolist() == pytest.approx([m + s * euler for m, s in zip(X, SCALES)])
    assert d.variance.tolist() == pytest.approx([(math.pi * s) ** 2 / 6 for s in SCALES])
    assert d.entropy().tolist() == pytest.approx([math.log(s) + 1 + euler for s in SCALES])
    assert isinstance(d, Distribution) and torch.isfinite(d.rsample((100,))).all()


def test_geometric():
    probs = [0.2, 0.7, 1.0]
    d = Geometric(_t(probs))
    ks = [0.0, 3.0, 0.0]
    assert d.log_prob(_t(ks)).tolist() == pytest.approx(
        [k * math.log1p(-q) + math.log(q) if q < 1 else 0.0 for q, k in zip(probs, ks)])
    assert d.mean.tolist() == pytest.approx([1 / q - 1 for q in probs])
    assert d.variance.tolist() == pytest.approx([(1 / q - 1) / q for q in probs])
    q = 0.2  # entropy: (-(1 - q) log(1 - q) - q log q) / q
    assert d.entropy()[0].item() == pytest.approx(
        (-(1 - q) * math.log(1 - q) - q * math.log(q)) / q)
    by_logits = Geometric(logits=_t([0.5]))
    assert by_logits.probs.item() == pytest.approx(1 / (1 + math.exp(-0.5)))
    draws = d.sample((200,))
    assert draws.shape == (200, 3) and (draws >= 0).all() and (draws == draws.floor()).all()
    assert (draws[:, 2] == 0).all()  # p = 1: success at once


def test_weibull_and_pareto():
    lam, k = [1.5, 2.0], [0.8, 3.0]
    w = Weibull(_t(lam), _t(k))
    x = [0.5, 2.0]
    assert w.log_prob(_t(x)).tolist() == pytest.approx(
        [math.log(c / s) + (c - 1) * math.log(v / s) - (v / s) ** c
         for s, c, v in zip(lam, k, x)])
    assert w.mean.tolist() == pytest.approx([s * math.gamma(1 + 1 / c) for s, c in zip(lam, k)])
    assert w.cdf(_t(x)).tolist() == pytest.approx(
        [1 - math.exp(-((v / s) ** c)) for s, c, v in zip(lam, k, x)])
    assert (w.rsample((50,)) > 0).all()
    scale, alpha = [1.0, 2.0], [0.5, 3.0]
    p = Pareto(_t(scale), _t(alpha))
    y = [1.5, 2.5]
    assert p.log_prob(_t(y)).tolist() == pytest.approx(
        [math.log(a) + a * math.log(m) - (a + 1) * math.log(v) for m, a, v in zip(scale, alpha, y)])
    assert p.mean.tolist() == [math.inf, pytest.approx(3.0)]  # infinite for alpha <= 1
    assert p.entropy().tolist() == pytest.approx(
        [math.log(m / a) + 1 / a + 1 for m, a in zip(scale, alpha)])
    assert (p.rsample((50,)) >= p.scale).all()
    with pytest.raises(ValueError, match="support"):
        p.log_prob(_t([0.5, 2.5]))  # below the scale of the first


def _normal_density(x: float, mu: float, sigma: float) -> float:
    return math.exp(-0.5 * ((x - mu) / sigma) ** 2) / (sigma * math.sqrt(2 * math.pi))


def test_mixture_same_family():
    weights, mus, sigmas = [0.2, 0.5, 0.3], [-1.0, 0.0, 2.0], [0.5, 1.0, 0.8]
    d = MixtureSameFamily(Categorical(probs=_t(weights)), Normal(_t(mus), _t(sigmas)))
    xs = [-0.5, 1.0, 3.0]
    assert d.log_prob(_t(xs)).tolist() == pytest.approx(
        [math.log(sum(p * _normal_density(x, m, s) for p, m, s in zip(weights, mus, sigmas)))
         for x in xs])
    mean = sum(p * m for p, m in zip(weights, mus))
    assert d.mean.item() == pytest.approx(mean)
    assert d.variance.item() == pytest.approx(
        sum(p * (s * s + m * m) for p, m, s in zip(weights, mus, sigmas)) - mean * mean)
    assert d.batch_shape == () and d.sample((4,)).shape == (4,)
    # vector components through Independent: event shape (3,), batch shape (2,)
    loc = torch.arange(12.0, dtype=torch.float64).reshape(2, 2, 3) / 10
    vectors = MixtureSameFamily(Categorical(logits=_t([[0.1, 0.2], [0.3, -0.4]])),
                                Independent(Normal(loc, torch.ones_like(loc)), 1))
    assert (vectors.batch_shape, vectors.event_shape) == ((2,), (3,))
    assert vectors.sample((5,)).shape == (5, 2, 3)
    assert vectors.log_prob(torch.ones(2, 3, dtype=torch.float64)).shape == (2,)
    with pytest.raises(ValueError, match="does not equal"):
        MixtureSameFamily(Categorical(probs=torch.ones(2)), Normal(_t(mus), _t(sigmas)))


def test_binomial():
    n, probs = 5, [0.2, 0.7, 0.5]
    d = Binomial(n, _t(probs))
    ks = [1.0, 4.0, 5.0]
    assert d.log_prob(_t(ks)).tolist() == pytest.approx(
        [math.log(math.comb(n, int(k)) * q ** k * (1 - q) ** (n - k)) for q, k in zip(probs, ks)])
    assert d.mean.tolist() == pytest.approx([n * q for q in probs])
    assert d.variance.tolist() == pytest.approx([n * q * (1 - q) for q in probs])
    assert d.mode.tolist() == [1.0, 4.0, 3.0]  # floor((n + 1) p)
    pmf = [[math.comb(n, k) * q ** k * (1 - q) ** (n - k) for k in range(n + 1)] for q in probs]
    assert d.entropy().tolist() == pytest.approx(
        [-sum(p * math.log(p) for p in row) for row in pmf])
    assert d.enumerate_support().shape == (6, 3)
    draws = d.sample((500,))
    assert draws.shape == (500, 3) and (draws >= 0).all() and (draws <= n).all()
    by_logits = Binomial(_t([3.0, 6.0]), logits=_t([0.5, -1.0]))
    q = 1 / (1 + math.exp(-0.5))
    assert by_logits.log_prob(_t([2.0, 1.0]))[0].item() == pytest.approx(
        math.log(3 * q * q * (1 - q)))

