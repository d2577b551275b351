"""torch.distributions added for PyTorch parity: Poisson, Multinomial, NegativeBinomial,
HalfCauchy, InverseGamma, (Logit)RelaxedBernoulli, RelaxedOneHotCategorical /
ExpRelaxedCategorical, LowRankMultivariateNormal, ExponentialFamily, the Abs / Power / Softplus /
Softmax / StickBreaking transforms and their KL divergences.

Expected values come from scipy.stats and numpy (independent implementations), from closed
forms written here, from sample moments (tolerances of several standard errors), from finite
differences and from Monte-Carlo estimates.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.special as sps
import scipy.stats as st
from scipy.integrate import quad

import torch
from torch.distributions import (
    AbsTransform,
    AffineTransform,
    Bernoulli,
    Beta,
    Binomial,
    CatTransform,
    ContinuousBernoulli,
    CorrCholeskyTransform,
    CumulativeDistributionTransform,
    Exponential,
    ExponentialFamily,
    ExpTransform,
    FisherSnedecor,
    Gamma,
    GeneralizedPareto,
    HalfCauchy,
    IndependentTransform,
    InverseGamma,
    Kumaraswamy,
    LKJCholesky,
    LogisticNormal,
    LowerCholeskyTransform,
    LowRankMultivariateNormal,
    Multinomial,
    MultivariateNormal,
    NegativeBinomial,
    Normal,
    OneHotCategoricalStraightThrough,
    Pareto,
    Poisson,
    PositiveDefiniteTransform,
    PowerTransform,
    RelaxedBernoulli,
    RelaxedOneHotCategorical,
    ReshapeTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StackTransform,
    StickBreakingTransform,
    Uniform,
    VonMises,
    Wishart,
    biject_to,
    constraint_registry,
    constraints,
    kl_divergence,
    transform_to,
)
from torch.distributions.relaxed_bernoulli import LogitRelaxedBernoulli
from torch.distributions.relaxed_categorical import ExpRelaxedCategorical

D = torch.float64


def t(values: object) -> torch.Tensor:
    return torch.tensor(values, dtype=D)


def close(actual: torch.Tensor, expected: object, tol: float = 1e-9) -> None:
    np.testing.assert_allclose(np.asarray(actual.detach().tolist(), dtype=float),
                               np.asarray(expected, dtype=float), rtol=tol, atol=tol)


@pytest.fixture(autouse=True)
def _seed() -> None:
    torch.manual_seed(0)


def test_submodules_by_pytorch_names() -> None:
    from torch.distributions.exp_family import ExponentialFamily as E
    from torch.distributions.half_cauchy import HalfCauchy as HC
    from torch.distributions.inverse_gamma import InverseGamma as IG
    from torch.distributions.lowrank_multivariate_normal import LowRankMultivariateNormal as LR
    from torch.distributions.multinomial import Multinomial as M
    from torch.distributions.negative_binomial import NegativeBinomial as NB
    from torch.distributions.poisson import Poisson as P
    from torch.distributions.relaxed_bernoulli import (
        LogitRelaxedBernoulli as LRB,
        RelaxedBernoulli as RB,
    )
    from torch.distributions.relaxed_categorical import (
        ExpRelaxedCategorical as ERC,
        RelaxedOneHotCategorical as ROC,
    )
    assert (E, HC, IG, LR, M, NB, P, LRB, RB, ERC, ROC) == (
        ExponentialFamily, HalfCauchy, InverseGamma, LowRankMultivariateNormal, Multinomial,
        NegativeBinomial, Poisson, LogitRelaxedBernoulli, RelaxedBernoulli,
        ExpRelaxedCategorical, RelaxedOneHotCategorical)
    assert issubclass(Poisson, ExponentialFamily)


# ---- Poisson -------------------------------------------------------------------------------

def test_poisson_log_prob_moments_and_sampling() -> None:
    rate = [0.5, 3.0, 20.0]
    d = Poisson(t(rate))
    k = t([[0.0, 2.0, 25.0], [4.0, 0.0, 13.0]])
    close(d.log_prob(k), st.poisson.logpmf(np.array(k.tolist()), rate))
    close(d.mean, rate)
    close(d.variance, rate)
    close(d.mode, [0.0, 3.0, 20.0])
    n = 40000
    samples = d.sample((n,))
    assert samples.shape == (n, 3)
    assert bool((samples == samples.round()).all()) and bool((samples >= 0).all())
    se = np.sqrt(np.array(rate) / n)
    assert np.all(np.abs(np.array(samples.mean(0).tolist()) - rate) < 5 * se)
    assert d.has_rsample is False
    assert d.expand((4, 3)).sample().shape == (4, 3)


def test_poisson_exponential_family_entropy_and_kl() -> None:
    p, q = Poisson(t([2.0, 7.0])), Poisson(t([1.0, 9.0]))
    # Poisson has no carrier-measure mean in closed form (as in PyTorch): entropy raises.
    with pytest.raises(NotImplementedError):
        p.entropy()
    expected = [2 * math.log(2) - 2 + 1, 7 * math.log(7 / 9) - 7 + 9]
    close(kl_divergence(p, q), expected)
    # The generic Bregman-divergence KL of the exponential family agrees.
    from torch.distributions.kl import _kl_expfamily_expfamily
    close(_kl_expfamily_expfamily(p, q), expected)


def test_poisson_validation() -> None:
    with pytest.raises(ValueError):
        Poisson(t([-1.0]), validate_args=True)
    with pytest.raises(ValueError):
        Poisson(t([1.0]), validate_args=True).log_prob(t([1.5]))


# ---- Multinomial ---------------------------------------------------------------------------

def test_multinomial_log_prob_entropy_moments() -> None:
    probs = np.array([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]])
    d = Multinomial(10, t(probs.tolist()))
    assert d.batch_shape == (2,) and d.event_shape == (3,)
    x = np.array([2.0, 3.0, 5.0])
    close(d.log_prob(t(x.tolist())), [st.multinomial.logpmf(x, 10, p) for p in probs])
    close(d.entropy(), [st.multinomial.entropy(10, p) for p in probs])
    close(d.mean, 10 * probs)
    close(d.variance, 10 * probs * (1 - probs))
    # Unnormalised logits are normalised.
    same = Multinomial(10, logits=t(np.log(probs * 7).tolist()))
    close(same.log_prob(t(x.tolist())), d.log_prob(t(x.tolist())))


def test_multinomial_samples() -> None:
    probs = np.array([0.2, 0.3, 0.5])
    d = Multinomial(6, t(probs.tolist()))
    n = 20000
    s = d.sample((n,))
    assert s.shape == (n, 3)
    assert bool((s.sum(-1) == 6).all())
    mean = np.array(s.mean(0).tolist())
    se = np.sqrt(6 * probs * (1 - probs) / n)
    assert np.all(np.abs(mean - 6 * probs) < 5 * se)
    assert d.expand((2, 4)).sample((5,)).shape == (5, 2, 4, 3)


def test_multinomial_errors_and_zero_probability() -> None:
    with pytest.raises(NotImplementedError):
        Multinomial(t(3.0), t([0.5, 0.5]))  # type: ignore[arg-type]
    d = Multinomial(3, t([0.0, 0.5, 0.5]))
    close(d.log_prob(t([0.0, 1.0, 2.0])), math.log(3 * 0.125))
    with pytest.raises(ValueError):
        Multinomial(3, t([0.5, 0.5]), validate_args=True).log_prob(t([-1.0, 4.0]))


# ---- NegativeBinomial ----------------------------------------------------------------------

def test_negative_binomial_matches_scipy() -> None:
    r, p = np.array([3.0, 0.5]), np.array([0.3, 0.6])
    d = NegativeBinomial(t(r.tolist()), probs=t(p.tolist()))
    k = np.array([[0.0, 2.0], [5.0, 11.0]])
    # scipy's nbinom counts failures with success probability p_s: ours is p_s = 1 - p.
    close(d.log_prob(t(k.tolist())), st.nbinom.logpmf(k, r, 1 - p))
    close(d.mean, st.nbinom.mean(r, 1 - p))
    close(d.variance, st.nbinom.var(r, 1 - p))
    close(d.mode, np.floor(np.maximum((r - 1) * p / (1 - p), 0)))
    logits = NegativeBinomial(t(r.tolist()), logits=t(np.log(p / (1 - p)).tolist()))
    close(logits.log_prob(t(k.tolist())), st.nbinom.logpmf(k, r, 1 - p))


def test_negative_binomial_samples() -> None:
    d = NegativeBinomial(t([4.0]), probs=t([0.4]))
    n = 40000
    s = d.sample((n,))
    mean, var = 4 * 0.4 / 0.6, 4 * 0.4 / 0.36
    assert abs(float(s.mean()) - mean) < 5 * math.sqrt(var / n)
    assert bool((s == s.round()).all())
    with pytest.raises(ValueError):
        NegativeBinomial(t([1.0]), probs=t([1.0]), validate_args=True)
    with pytest.raises(ValueError):
        NegativeBinomial(t([1.0]))


# ---- HalfCauchy, InverseGamma --------------------------------------------------------------

def test_half_cauchy_matches_scipy() -> None:
    scale = np.array([1.0, 2.5])
    d = HalfCauchy(t(scale.tolist()))
    x = np.array([0.3, 4.0])
    close(d.log_prob(t(x.tolist())), st.halfcauchy.logpdf(x, scale=scale))
    close(d.cdf(t(x.tolist())), st.halfcauchy.cdf(x, scale=scale))
    close(d.icdf(t([0.25, 0.9])), st.halfcauchy.ppf([0.25, 0.9], scale=scale))
    close(d.entropy(), st.halfcauchy.entropy(scale=scale))
    assert math.isinf(float(d.mean[0]))
    unchecked = HalfCauchy(t(scale.tolist()), validate_args=False)
    assert unchecked.log_prob(t([-1.0, 1.0])).tolist()[0] == -math.inf
    with pytest.raises(ValueError):
        HalfCauchy(t(scale.tolist()), validate_args=True).log_prob(t([-1.0, 1.0]))
    s = d.rsample((50000,))
    assert bool((s >= 0).all())
    # The median of HalfCauchy(scale) is scale (a robust check, the mean being infinite).
    med = np.median(np.array(s.tolist()), axis=0)
    assert np.all(np.abs(med - scale) < 0.05 * scale)
    assert d.expand((3, 2)).batch_shape == (3, 2)


def test_inverse_gamma_matches_scipy() -> None:
    a, b = np.array([3.0, 0.8]), np.array([2.0, 1.0])
    d = InverseGamma(t(a.tolist()), t(b.tolist()))
    x = np.array([0.5, 3.0])
    close(d.log_prob(t(x.tolist())), st.invgamma.logpdf(x, a, scale=b))
    close(d.entropy(), st.invgamma.entropy(a, scale=b))
    close(d.cdf(t(x.tolist())), st.invgamma.cdf(x, a, scale=b))
    close(Gamma(t(a.tolist()), t(b.tolist())).cdf(t(x.tolist())), st.gamma.cdf(x, a, scale=1 / b))
    close(d.mean, [1.0, math.inf])
    close(d.mode, b / (a + 1))
    d2 = InverseGamma(t([4.0]), t([3.0]))
    close(d2.variance, st.invgamma.var(4.0, scale=3.0))
    s = d2.rsample((40000,))
    assert abs(float(s.mean()) - 1.0) < 5 * math.sqrt(float(d2.variance) / 40000)
    with pytest.raises(ValueError):
        InverseGamma(t([-1.0]), t([1.0]), validate_args=True)


def test_inverse_gamma_rsample_gradient_and_kl() -> None:
    rate = t([2.0]).requires_grad_()
    d = InverseGamma(t([3.0]), rate)
    torch.manual_seed(1)
    s = d.rsample((7,))
    s.sum().backward()
    # 1/X with X = G/rate is G'/... linear in rate: d(sum)/d rate = sum / rate.
    close(rate.grad, [float(s.sum()) / 2.0], 1e-9)
    p, q = InverseGamma(t([3.0]), t([2.0])), InverseGamma(t([2.0]), t([1.5]))
    x = p.sample((200000,))
    mc = float((p.log_prob(x) - q.log_prob(x)).mean())
    assert abs(float(kl_divergence(p, q)) - mc) < 0.02


# ---- Relaxed Bernoulli / categorical -------------------------------------------------------

def test_relaxed_bernoulli_density_and_samples() -> None:
    temp, p = 0.7, np.array([0.3, 0.8])
    d = RelaxedBernoulli(t(temp), probs=t(p.tolist()))
    y = np.array([0.2, 0.9])
    # Binary Concrete density (Maddison et al. 2017) with a = p / (1 - p).
    alpha = p / (1 - p)
    dens = (temp * alpha * y ** (-temp - 1) * (1 - y) ** (-temp - 1)
            / (alpha * y ** (-temp) + (1 - y) ** (-temp)) ** 2)
    close(d.log_prob(t(y.tolist())), np.log(dens))
    s = d.rsample((50000,))
    assert bool(((s > 0) & (s < 1)).all())
    # P(Y > 1/2) = P(logit + L > 0) = p, whatever the temperature.
    frac = np.array((s > 0.5).double().mean(0).tolist())
    assert np.all(np.abs(frac - p) < 5 * np.sqrt(p * (1 - p) / 50000))
    logit = LogitRelaxedBernoulli(t(temp), logits=t(np.log(alpha).tolist()))
    z = np.array([-1.0, 2.0])
    close(logit.log_prob(t(z.tolist())),
          st.logistic.logpdf(z, loc=np.log(alpha) / temp, scale=1 / temp))
    assert d.expand((3, 2)).rsample().shape == (3, 2)


def test_relaxed_bernoulli_rsample_gradient_by_finite_differences() -> None:
    def sample(logit: float, grad: bool) -> tuple[torch.Tensor, torch.Tensor]:
        torch.manual_seed(3)
        param = t([logit]).requires_grad_(grad)
        return RelaxedBernoulli(t(0.5), logits=param).rsample((5,)).sum(), param
    value, param = sample(0.3, True)
    value.backward()
    eps = 1e-6
    numeric = (float(sample(0.3 + eps, False)[0]) - float(sample(0.3 - eps, False)[0])) / (2 * eps)
    assert abs(float(param.grad) - numeric) < 1e-6


def test_relaxed_one_hot_categorical_density_and_samples() -> None:
    temp, probs = 0.5, np.array([0.2, 0.5, 0.3])
    d = RelaxedOneHotCategorical(t(temp), probs=t(probs.tolist()))
    assert d.batch_shape == () and d.event_shape == (3,)
    y = np.array([0.1, 0.6, 0.3])
    k = 3
    # Concrete density (Maddison et al. 2017, eq. 1).
    dens = (math.factorial(k - 1) * temp ** (k - 1)
            * np.prod(probs * y ** (-temp - 1)) / np.sum(probs * y ** (-temp)) ** k)
    close(d.log_prob(t(y.tolist())), math.log(dens))
    s = d.rsample((30000,))
    close(s.sum(-1), np.ones(30000), 1e-9)
    # The argmax of a Gumbel-softmax sample is distributed as the categorical.
    freq = np.bincount(np.array(s.argmax(-1).tolist()), minlength=3) / 30000
    assert np.all(np.abs(freq - probs) < 5 * np.sqrt(probs * (1 - probs) / 30000))
    log_d = ExpRelaxedCategorical(t(temp), probs=t(probs.tolist()))
    x = np.log(y)
    # The ExpConcrete density is the Concrete one times the Jacobian prod(y).
    close(log_d.log_prob(t(x.tolist())), math.log(dens) + x.sum())
    assert d.expand((4,)).rsample((2,)).shape == (2, 4, 3)


def test_relaxed_one_hot_gradient_by_finite_differences() -> None:
    weights = t([1.0, -2.0, 0.5])

    def value(logits: list[float], grad: bool) -> tuple[torch.Tensor, torch.Tensor]:
        torch.manual_seed(5)
        param = t(logits).requires_grad_(grad)
        sample = RelaxedOneHotCategorical(t(0.8), logits=param).rsample((4,))
        return (sample * weights).sum(), param
    base = [0.1, 0.4, -0.3]
    out, param = value(base, True)
    out.backward()
    eps = 1e-6
    for i in range(3):
        up, down = list(base), list(base)
        up[i] += eps
        down[i] -= eps
        numeric = (float(value(up, False)[0]) - float(value(down, False)[0])) / (2 * eps)
        assert abs(float(param.grad[i]) - numeric) < 1e-6


# ---- LowRankMultivariateNormal -------------------------------------------------------------

def _lowrank() -> tuple[LowRankMultivariateNormal, np.ndarray, np.ndarray]:
    loc = np.array([[0.1, 0.2, -0.3], [1.0, 0.0, 0.5]])
    w = np.array([[0.5, 0.1], [-0.2, 0.3], [0.4, -0.6]])
    diag = np.array([0.5, 1.0, 2.0])
    cov = w @ w.T + np.diag(diag)
    return LowRankMultivariateNormal(t(loc.tolist()), t(w.tolist()), t(diag.tolist())), loc, cov


def test_lowrank_mvn_matches_scipy() -> None:
    d, loc, cov = _lowrank()
    assert d.batch_shape == (2,) and d.event_shape == (3,)
    x = np.array([0.3, -0.1, 0.2])
    close(d.log_prob(t(x.tolist())),
          [st.multivariate_normal.logpdf(x, mean=m, cov=cov) for m in loc])
    close(d.entropy(), [st.multivariate_normal.entropy(mean=loc[0], cov=cov)] * 2)
    close(d.covariance_matrix[0], cov)
    close(d.precision_matrix[1], np.linalg.inv(cov))
    close(d.scale_tril[0], np.linalg.cholesky(cov))
    close(d.variance[0], np.diag(cov))
    n = 40000
    s = d.rsample((n,))
    assert s.shape == (n, 2, 3)
    centered = np.array(s[:, 0].tolist()) - loc[0]
    emp = centered.T @ centered / n
    assert np.all(np.abs(emp - cov) < 6 * np.sqrt((cov ** 2 + np.outer(np.diag(cov),
                                                                      np.diag(cov))) / n))


def test_lowrank_mvn_shape_errors() -> None:
    with pytest.raises(ValueError):
        LowRankMultivariateNormal(t([0.0, 0.0]), t([1.0, 1.0]), t([1.0, 1.0]))
    with pytest.raises(ValueError):
        LowRankMultivariateNormal(t([0.0, 0.0]), t([[1.0], [1.0], [1.0]]), t([1.0, 1.0]))
    with pytest.raises(ValueError):
        LowRankMultivariateNormal(t([0.0, 0.0]), t([[1.0], [1.0]]), t([1.0, -1.0]),
                                  validate_args=True)


def test_lowrank_kl_against_closed_form_numpy() -> None:
    d, loc, cov = _lowrank()
    q_cov = np.array([[2.0, 0.3, 0.0], [0.3, 1.0, 0.2], [0.0, 0.2, 1.5]])
    q_loc = np.array([0.5, -0.5, 0.0])
    q = MultivariateNormal(t(q_loc.tolist()), t(q_cov.tolist()))

    def kl(m0: np.ndarray, s0: np.ndarray, m1: np.ndarray, s1: np.ndarray) -> float:
        inv = np.linalg.inv(s1)
        diff = m1 - m0
        return 0.5 * (np.trace(inv @ s0) + diff @ inv @ diff - 3
                      + np.log(np.linalg.det(s1) / np.linalg.det(s0)))
    close(kl_divergence(d, q), [kl(m, cov, q_loc, q_cov) for m in loc])
    close(kl_divergence(q, d), [kl(q_loc, q_cov, m, cov) for m in loc])
    q_low = LowRankMultivariateNormal(t(q_loc.tolist()), t([[1.0], [0.0], [0.5]]),
                                      t([1.0, 1.0, 1.0]))
    q_low_cov = np.array([[1.0], [0.0], [0.5]]) @ np.array([[1.0, 0.0, 0.5]]) + np.eye(3)
    close(kl_divergence(d, q_low), [kl(m, cov, q_loc, q_low_cov) for m in loc])


# ---- Transforms ----------------------------------------------------------------------------

def _numeric_jacobian(fn, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:  # type: ignore[no-untyped-def]
    cols = []
    for i in range(x.size):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        cols.append((fn(up) - fn(down)) / (2 * eps))
    return np.stack(cols, -1)


@pytest.mark.parametrize("transform", [SoftplusTransform(), PowerTransform(t(2.5)),
                                       PowerTransform(t(-1.0))])
def test_elementwise_transforms_inverse_and_jacobian(transform: object) -> None:
    x = np.array([0.3, 1.2, 2.0])
    tx = t(x.tolist())
    y = transform(tx)  # type: ignore[operator]
    close(transform.inv(y), x, 1e-9)  # type: ignore[attr-defined]
    diag = np.diag(_numeric_jacobian(lambda v: np.array(transform(t(v.tolist())).tolist()), x))
    close(transform.log_abs_det_jacobian(tx, y), np.log(np.abs(diag)), 1e-6)  # type: ignore[attr-defined]


def test_softplus_and_power_values() -> None:
    x = np.array([-3.0, 0.0, 40.0])
    close(SoftplusTransform()(t(x.tolist())), np.logaddexp(0, x))
    close(PowerTransform(t(3.0))(t([2.0])), [8.0])
    assert PowerTransform(t(2.0)) == PowerTransform(t(2.0))
    assert PowerTransform(t(2.0)) != PowerTransform(t(3.0))


def test_abs_and_softmax_transforms() -> None:
    close(AbsTransform()(t([-2.0, 3.0])), [2.0, 3.0])
    close(AbsTransform().inv(t([2.0])), [2.0])
    assert AbsTransform() == AbsTransform()
    x = np.array([[0.1, 2.0, -1.0], [5.0, 5.0, 5.0]])
    y = SoftmaxTransform()(t(x.tolist()))
    close(y, sps.softmax(x, axis=-1))
    # The inverse recovers x up to an additive constant per row.
    back = np.array(SoftmaxTransform().inv(y).tolist())
    np.testing.assert_allclose(back - back[:, :1], x - x[:, :1], atol=1e-9)
    assert SoftmaxTransform().codomain is constraints.simplex


def test_stick_breaking_transform() -> None:
    tr = StickBreakingTransform()
    x = np.array([0.3, -1.0, 0.8])
    y = tr(t(x.tolist()))
    assert y.shape == (4,)
    close(y.sum(), 1.0)
    assert bool((y > 0).all())
    close(tr(t([0.0, 0.0, 0.0])), [0.25] * 4)
    close(tr.inv(y), x, 1e-9)
    # The Jacobian of x -> y[:-1] is square (the last coordinate is determined).
    jac = _numeric_jacobian(lambda v: np.array(tr(t(v.tolist())).tolist())[:-1], x)
    close(tr.log_abs_det_jacobian(t(x.tolist()), y), math.log(abs(np.linalg.det(jac))), 1e-6)
    assert tr.forward_shape((5, 3)) == (5, 4) and tr.inverse_shape((5, 4)) == (5, 3)


def test_corr_cholesky_transform() -> None:
    tr = CorrCholeskyTransform()
    x = np.array([0.3, -0.5, 1.2, 0.1, -0.7, 0.4])
    y = tr(t(x.tolist()))
    assert y.shape == (4, 4)
    ya = np.array(y.tolist())
    assert np.allclose(np.triu(ya, 1), 0)
    # Rows of unit norm with a positive diagonal: y y^T is a correlation matrix.
    np.testing.assert_allclose((ya ** 2).sum(-1), np.ones(4), atol=1e-12)
    assert np.all(np.diag(ya) > 0)
    np.testing.assert_allclose(ya[1:, 0], np.tanh(x[[0, 1, 3]]), atol=1e-12)
    close(tr.inv(y), x, 1e-9)
    rows, cols = np.tril_indices(4, -1)
    jac = _numeric_jacobian(lambda v: np.array(tr(t(v.tolist())).tolist())[rows, cols], x)
    close(tr.log_abs_det_jacobian(t(x.tolist()), y), math.log(abs(np.linalg.det(jac))), 1e-6)
    assert tr.forward_shape((2, 6)) == (2, 4, 4) and tr.inverse_shape((4, 4)) == (6,)


def test_matrix_transforms() -> None:
    m = np.array([[0.5, 2.0], [-0.3, 0.1]])
    lower = np.array([[math.exp(0.5), 0.0], [-0.3, math.exp(0.1)]])
    close(LowerCholeskyTransform()(t(m.tolist())), lower)
    close(LowerCholeskyTransform().inv(t(lower.tolist())), np.tril(m))
    close(PositiveDefiniteTransform()(t(m.tolist())), lower @ lower.T)
    close(PositiveDefiniteTransform().inv(t((lower @ lower.T).tolist())), np.tril(m))
    r = ReshapeTransform((6,), (2, 3))
    x = t(np.arange(12.0).reshape(2, 6).tolist())
    close(r(x), np.arange(12.0).reshape(2, 2, 3))
    close(r.inv(r(x)), np.arange(12.0).reshape(2, 6))
    close(r.log_abs_det_jacobian(x, r(x)), [0.0, 0.0])
    assert r.forward_shape((4, 6)) == (4, 2, 3)
    with pytest.raises(ValueError):
        ReshapeTransform((5,), (2, 3))
    ind = IndependentTransform(ExpTransform(), 1)
    v = np.array([[0.1, 0.2], [0.3, -0.4]])
    close(ind.log_abs_det_jacobian(t(v.tolist()), ind(t(v.tolist()))), v.sum(-1))
    assert ind.domain.event_dim == 1


def test_cat_stack_and_cdf_transforms() -> None:
    ct = CatTransform([ExpTransform(), AffineTransform(1.0, 2.0)], dim=0, lengths=[2, 1])
    z = np.array([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]])
    y = ct(t(z.tolist()))
    close(y, np.concatenate([np.exp(z[:2]), 1 + 2 * z[2:]]))
    close(ct.inv(y), z)
    # dim 0 is a batch dim (event_dim 0): the pieces' log-Jacobians are concatenated.
    close(ct.log_abs_det_jacobian(t(z.tolist()), y),
          np.concatenate([z[:2], np.full((1, 2), math.log(2))]))
    stt = StackTransform([ExpTransform(), AffineTransform(1.0, 2.0)], dim=1)
    w = t([[0.1, 0.2]])
    close(stt(w), [[math.exp(0.1), 1.4]])
    close(stt.log_abs_det_jacobian(w, stt(w)), [[0.1, math.log(2)]])
    cdf = CumulativeDistributionTransform(Normal(t(0.5), t(2.0)))
    q = np.array([-1.0, 0.5, 3.0])
    close(cdf(t(q.tolist())), st.norm.cdf(q, 0.5, 2.0))
    close(cdf.inv(cdf(t(q.tolist()))), q, 1e-7)
    close(cdf.log_abs_det_jacobian(t(q.tolist()), None), st.norm.logpdf(q, 0.5, 2.0))


@pytest.mark.parametrize("constraint", [
    constraints.real, constraints.positive, constraints.greater_than(2.0),
    constraints.greater_than_eq(-1.0), constraints.less_than(1.0), constraints.unit_interval,
    constraints.interval(-1.0, 3.0), constraints.half_open_interval(0.0, 5.0),
    constraints.simplex, constraints.independent(constraints.positive, 1),
    constraints.corr_cholesky,
])
def test_biject_to_lands_in_the_constraint_and_inverts(constraint: constraints.Constraint) -> None:
    bij = biject_to(constraint)
    size = 6 if constraint is constraints.corr_cholesky else 3
    x = t(np.linspace(-2.0, 2.5, size).tolist())
    y = bij(x)
    assert bool(constraint.check(y).all())
    assert bij.bijective
    close(bij.inv(y), np.linspace(-2.0, 2.5, size), 1e-8)
    assert bool(transform_to(constraint)(x).isfinite().all())
    assert bool(constraint.check(transform_to(constraint)(x)).all())


def test_transform_to_matrices_and_registry_errors() -> None:
    m = t([[0.5, 2.0], [-0.3, 0.1]])
    assert bool(constraints.positive_definite.check(
        transform_to(constraints.positive_definite)(m)))
    assert bool(constraints.lower_cholesky.check(transform_to(constraints.lower_cholesky)(m)))
    assert isinstance(transform_to(constraints.simplex), SoftmaxTransform)
    assert isinstance(biject_to(constraints.simplex), StickBreakingTransform)
    with pytest.raises(NotImplementedError):
        biject_to(constraints.lower_cholesky)
    registry = constraint_registry.ConstraintRegistry()
    registry.register(constraints.positive, lambda c: ExpTransform())
    assert isinstance(registry(constraints.positive), ExpTransform)
    with pytest.raises(TypeError):
        registry.register(3, lambda c: ExpTransform())


def test_mixture_same_family_constraint() -> None:
    c = constraints.MixtureSameFamilyConstraint(constraints.independent(constraints.positive, 1))
    assert c.event_dim == 1 and not c.is_discrete
    assert c.check(t([[1.0, 2.0], [1.0, -2.0]])).tolist() == [True, False]


# ---- FisherSnedecor, Kumaraswamy, GeneralizedPareto, VonMises, LogisticNormal --------------

def test_fisher_snedecor_matches_scipy() -> None:
    d1, d2 = np.array([1.0, 5.0, 6.0]), np.array([1.0, 10.0, 12.0])
    d = FisherSnedecor(t(d1.tolist()), t(d2.tolist()))
    x = np.array([0.5, 1.5, 2.0])
    close(d.log_prob(t(x.tolist())), st.f.logpdf(x, d1, d2))
    mean = np.array(d.mean.tolist())
    assert math.isnan(mean[0])
    close(d.mean[1:], st.f.mean(d1[1:], d2[1:]))
    close(d.variance[1:], st.f.var(d1[1:], d2[1:]))
    close(d.mode[1:], (d1[1:] - 2) / d1[1:] * d2[1:] / (d2[1:] + 2))
    s = FisherSnedecor(t([6.0]), t([12.0])).rsample((40000,))
    assert abs(float(s.mean()) - 1.2) < 5 * math.sqrt(0.96 / 40000)


def test_kumaraswamy_closed_forms() -> None:
    a, b = np.array([2.0, 3.0, 0.5]), np.array([3.0, 2.0, 2.0])
    d = Kumaraswamy(t(a.tolist()), t(b.tolist()))
    x = np.array([0.3, 0.6, 0.1])
    close(d.log_prob(t(x.tolist())),
          np.log(a * b) + (a - 1) * np.log(x) + (b - 1) * np.log1p(-x ** a))
    close(d.cdf(t(x.tolist())), 1 - (1 - x ** a) ** b)
    # Moments by numerical integration of the density.
    grid = np.linspace(1e-7, 1 - 1e-7, 400001)
    for i in range(2):
        dens = a[i] * b[i] * grid ** (a[i] - 1) * (1 - grid ** a[i]) ** (b[i] - 1)
        m1 = np.trapezoid(grid * dens, grid)
        m2 = np.trapezoid(grid ** 2 * dens, grid)
        ent = -np.trapezoid(dens * np.log(dens), grid)
        close(d.mean[i], m1, 1e-6)
        close(d.variance[i], m2 - m1 ** 2, 1e-6)
        close(d.entropy()[i], ent, 1e-5)
    close(d.mode[:2], ((a[:2] - 1) / (a[:2] * b[:2] - 1)) ** (1 / a[:2]))
    s = d.rsample((40000,))
    assert bool(((s > 0) & (s < 1)).all())
    se = np.sqrt(np.array(d.variance.tolist()) / 40000)
    assert np.all(np.abs(np.array(s.mean(0).tolist()) - np.array(d.mean.tolist())) < 5 * se)


def test_generalized_pareto_matches_scipy() -> None:
    c = np.array([0.0, 0.3, -0.5])
    loc, scale = np.array([0.5, -1.0, 0.0]), np.array([1.0, 2.0, 1.5])
    d = GeneralizedPareto(t(loc.tolist()), t(scale.tolist()), t(c.tolist()))
    x = np.array([1.2, 0.5, 2.0])
    close(d.log_prob(t(x.tolist())), st.genpareto.logpdf(x, c, loc, scale))
    close(d.cdf(t(x.tolist())), st.genpareto.cdf(x, c, loc, scale))
    close(d.icdf(t([0.3, 0.6, 0.9])), st.genpareto.ppf([0.3, 0.6, 0.9], c, loc, scale))
    close(d.mean, st.genpareto.mean(c, loc, scale))
    close(d.variance, st.genpareto.var(c, loc, scale))
    close(d.entropy(), st.genpareto.entropy(c, loc, scale))
    # Outside the bounded support of c < 0: upper end loc - scale / c = 3.
    unchecked = GeneralizedPareto(t(0.0), t(1.5), t(-0.5), validate_args=False)
    assert unchecked.log_prob(t(3.5)).tolist() == -math.inf
    s = d.rsample((40000,))
    assert bool((s >= t(loc.tolist())).all())
    heavy = GeneralizedPareto(t(0.0), t(1.0), t(1.5))
    assert math.isnan(float(heavy.mean)) and math.isnan(float(heavy.variance))


def test_von_mises_matches_scipy() -> None:
    loc, kappa = np.array([0.5, -2.0, 1.0]), np.array([2.0, 0.3, 30.0])
    d = VonMises(t(loc.tolist()), t(kappa.tolist()))
    x = np.array([0.1, 2.0, 1.1])
    close(d.log_prob(t(x.tolist())), st.vonmises.logpdf(x, kappa, loc=loc))
    close(d.variance, 1 - sps.i1e(kappa) / sps.i0e(kappa))
    close(d.mean, loc)
    n = 40000
    s = np.array(d.sample((n,)).tolist())
    assert np.all((s >= -math.pi) & (s < math.pi))
    # Circular moments: E[cos(x - loc)] = I1/I0, E[sin(x - loc)] = 0.
    r = sps.i1e(kappa) / sps.i0e(kappa)
    assert np.all(np.abs(np.cos(s - loc).mean(0) - r) < 5 * np.sqrt(0.5 / n))
    assert np.all(np.abs(np.sin(s - loc).mean(0)) < 5 * np.sqrt(0.5 / n))
    assert d.has_rsample is False
    assert d.expand((2, 3)).sample().shape == (2, 3)


def test_logistic_normal() -> None:
    loc, scale = np.array([0.1, 0.2]), np.array([1.0, 2.0])
    d = LogisticNormal(t(loc.tolist()), t(scale.tolist()))
    assert d.batch_shape == () and d.event_shape == (3,)
    y = np.array([0.2, 0.3, 0.5])
    # Change of variables through the stick-breaking inverse (numpy).
    offset = np.log(np.array([2.0, 1.0]))
    stick = np.array([1.0, 1 - y[0]])
    frac = y[:2] / stick
    x = np.log(frac) - np.log1p(-frac) + offset
    jac = _numeric_jacobian(
        lambda v: np.array(StickBreakingTransform()(t(v.tolist())).tolist())[:2], x)
    expected = st.norm.logpdf(x, loc, scale).sum() - math.log(abs(np.linalg.det(jac)))
    close(d.log_prob(t(y.tolist())), expected, 1e-6)
    s = d.rsample((5,))
    assert s.shape == (5, 3)
    close(s.sum(-1), np.ones(5))
    assert LogisticNormal(t(0.1), t(1.0)).event_shape == (2,)


def test_one_hot_categorical_straight_through() -> None:
    probs = t([0.2, 0.5, 0.3]).requires_grad_()
    d = OneHotCategoricalStraightThrough(probs=probs)
    assert d.has_rsample
    s = d.rsample((4,))
    assert bool(((s == 0) | (s == 1)).all()) and bool((s.sum(-1) == 1).all())
    (s * t([1.0, 2.0, 3.0])).sum().backward()
    # The gradient passes straight through to the probabilities: 4 draws, weights 1, 2, 3,
    # through the normalisation p / sum(p) (sum 1 here), so d/dp_j = 4 (w_j - sum_k p_k w_k).
    expected = 4 * (np.array([1.0, 2.0, 3.0]) - (0.2 + 1.0 + 0.9))
    close(probs.grad, expected)


# ---- ContinuousBernoulli -------------------------------------------------------------------

@pytest.mark.parametrize("lam", [0.1, 0.4995, 0.7, 0.5, 0.93])
def test_continuous_bernoulli_against_numerical_integration(lam: float) -> None:
    d = ContinuousBernoulli(t([lam]))
    grid = np.linspace(0.0, 1.0, 200001)
    unnormalised = lam ** grid * (1 - lam) ** (1 - grid)
    norm = 1 / np.trapezoid(unnormalised, grid)
    dens = norm * unnormalised
    x = np.array([0.3, 0.6, 0.9])
    close(d.log_prob(t(x.tolist())), np.log(norm * lam ** x * (1 - lam) ** (1 - x)), 1e-7)
    m1 = np.trapezoid(grid * dens, grid)
    close(d.mean, [m1], 1e-7)
    close(d.variance, [np.trapezoid(grid ** 2 * dens, grid) - m1 ** 2], 1e-7)
    close(d.entropy(), [-np.trapezoid(dens * np.log(dens), grid)], 1e-7)
    cdf = np.array([quad(lambda u: norm * lam ** u * (1 - lam) ** (1 - u), 0, v)[0] for v in x])
    # Inside lims = (0.499, 0.501) the CDF and its inverse are the uniform ones (as PyTorch's).
    close(d.cdf(t(x.tolist())), cdf, 1e-6 if abs(lam - 0.5) > 1e-3 else 1e-3)
    close(d.cdf(d.icdf(t(x.tolist()))), x, 1e-9)
    # The exponential-family entropy (by the log normalizer) agrees with the closed form.
    by_logits = ContinuousBernoulli(logits=d.logits)
    close(ExponentialFamily.entropy(by_logits), d.entropy(), 1e-6)


def test_continuous_bernoulli_rsample_kl_and_validation() -> None:
    p, q = ContinuousBernoulli(t([0.2])), ContinuousBernoulli(logits=t([1.5]))
    s = p.rsample((100000,))
    assert bool(((s >= 0) & (s <= 1)).all())
    assert abs(float(s.mean()) - float(p.mean)) < 5 * math.sqrt(float(p.variance) / 100000)
    mc = float((p.log_prob(s) - q.log_prob(s)).mean())
    assert abs(float(kl_divergence(p, q)) - mc) < 0.01
    probs = t([0.3]).requires_grad_()
    torch.manual_seed(2)
    ContinuousBernoulli(probs).rsample((3,)).sum().backward()
    assert probs.grad is not None and bool(probs.grad.isfinite().all())
    with pytest.raises(ValueError):
        ContinuousBernoulli(t([1.5]), validate_args=True)


# ---- LKJCholesky ---------------------------------------------------------------------------

@pytest.mark.parametrize("eta", [0.7, 1.0, 3.0])
def test_lkj_cholesky_normalised(eta: float) -> None:
    # d = 2: L = [[1, 0], [r, sqrt(1 - r^2)]], a density over r in (-1, 1).
    d2 = LKJCholesky(2, t(eta))
    r = np.linspace(-0.999, 0.999, 7)
    factors = [[[1.0, 0.0], [v, math.sqrt(1 - v * v)]] for v in r]
    density = np.exp(np.array(d2.log_prob(t(factors)).tolist()))
    close(t(density.tolist()), (1 - r ** 2) ** (eta - 1) / sps.beta(0.5, eta), 1e-9)
    # d = 3: a density over (L21, L31, L32); integrate it by Monte Carlo over [-1, 1]^3.
    rng = np.random.default_rng(0)
    pts = rng.uniform(-1, 1, size=(400000, 3))
    valid = (np.abs(pts[:, 0]) < 1) & (pts[:, 1] ** 2 + pts[:, 2] ** 2 < 1)
    pts = pts[valid]
    mats = np.zeros((len(pts), 3, 3))
    mats[:, 0, 0] = 1
    mats[:, 1, 0], mats[:, 1, 1] = pts[:, 0], np.sqrt(1 - pts[:, 0] ** 2)
    mats[:, 2, 0], mats[:, 2, 1] = pts[:, 1], pts[:, 2]
    mats[:, 2, 2] = np.sqrt(1 - pts[:, 1] ** 2 - pts[:, 2] ** 2)
    values = np.exp(LKJCholesky(3, t(eta)).log_prob(torch.from_numpy(mats)).numpy())
    total = values.sum() * 8 / 400000
    assert abs(total - 1) < 5 * values.std() * 8 / math.sqrt(400000) + 1e-3


@pytest.mark.parametrize("eta", [1.0, 3.0])
def test_lkj_cholesky_samples_have_the_lkj_marginals(eta: float) -> None:
    dim, n = 4, 50000
    factors = LKJCholesky(dim, t(eta)).sample((n,))
    assert factors.shape == (n, dim, dim)
    assert bool(constraints.corr_cholesky.check(factors).all())
    corr = (factors @ factors.mT).numpy()
    # Each off-diagonal correlation is 2 B - 1 with B ~ Beta(a, a), a = eta - 1 + dim / 2.
    a = eta - 1 + dim / 2
    var = 1 / (2 * a + 1)
    for i, j in [(1, 0), (2, 0), (3, 0), (3, 2)]:
        assert abs(corr[:, i, j].var() - var) < 6 * var * math.sqrt(2 / n) * 1.5
        assert abs(corr[:, i, j].mean()) < 5 * math.sqrt(var / n)


def test_lkj_cholesky_shapes_and_errors() -> None:
    d = LKJCholesky(3, t([0.5, 2.0]))
    assert d.batch_shape == (2,) and d.event_shape == (3, 3)
    assert d.sample((5,)).shape == (5, 2, 3, 3)
    assert d.expand((4, 2)).sample().shape == (4, 2, 3, 3)
    with pytest.raises(ValueError):
        LKJCholesky(1, 1.0)
    with pytest.raises(ValueError):
        LKJCholesky(3, t([-1.0]), validate_args=True)


# ---- Wishart -------------------------------------------------------------------------------

_WISHART_SCALE = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.5]])


def test_wishart_matches_scipy() -> None:
    df = np.array([4.0, 6.5])
    w = Wishart(t(df.tolist()), covariance_matrix=t(_WISHART_SCALE.tolist()))
    assert w.batch_shape == (2,) and w.event_shape == (3, 3)
    x = np.array([[3.0, 0.5, 0.0], [0.5, 2.0, 0.1], [0.0, 0.1, 1.0]])
    close(w.log_prob(t(x.tolist())), [st.wishart.logpdf(x, v, _WISHART_SCALE) for v in df])
    close(w.entropy(), [st.wishart.entropy(v, _WISHART_SCALE) for v in df])
    close(w.mean[1], 6.5 * _WISHART_SCALE)
    diag = np.diag(_WISHART_SCALE)
    close(w.variance[0], 4.0 * (_WISHART_SCALE ** 2 + np.outer(diag, diag)))
    close(Wishart(t(6.0), covariance_matrix=t(_WISHART_SCALE.tolist())).mode,
          2.0 * _WISHART_SCALE)
    by_precision = Wishart(t(5.0), precision_matrix=t(np.linalg.inv(_WISHART_SCALE).tolist()))
    close(by_precision.log_prob(t(x.tolist())), st.wishart.logpdf(x, 5.0, _WISHART_SCALE))
    by_tril = Wishart(t(5.0), scale_tril=t(np.linalg.cholesky(_WISHART_SCALE).tolist()))
    close(by_tril.log_prob(t(x.tolist())), st.wishart.logpdf(x, 5.0, _WISHART_SCALE))


def test_wishart_samples_and_gradient() -> None:
    w = Wishart(t(5.5), covariance_matrix=t(_WISHART_SCALE.tolist()))
    n = 20000
    s = w.rsample((n,)).numpy()
    assert bool(constraints.positive_definite.check(torch.from_numpy(s[:100])).all())
    var = np.array(w.variance.tolist())
    assert np.all(np.abs(s.mean(0) - 5.5 * _WISHART_SCALE) < 5 * np.sqrt(var / n))

    def total(entry: float, grad: bool) -> tuple[torch.Tensor, torch.Tensor]:
        torch.manual_seed(4)
        tril = np.linalg.cholesky(_WISHART_SCALE)
        tril[1, 0] = entry
        param = t(tril.tolist()).requires_grad_(grad)
        return Wishart(t(4.0), scale_tril=param).rsample((3,)).sum(), param
    base = float(np.linalg.cholesky(_WISHART_SCALE)[1, 0])
    value, param = total(base, True)
    value.backward()
    eps = 1e-6
    numeric = (float(total(base + eps, False)[0]) - float(total(base - eps, False)[0])) / (2 * eps)
    assert abs(float(param.grad[1, 0]) - numeric) < 1e-5 * max(1.0, abs(numeric))


def test_wishart_errors() -> None:
    with pytest.raises(ValueError):
        Wishart(t(1.5), covariance_matrix=t(_WISHART_SCALE.tolist()), validate_args=True)
    with pytest.raises(ValueError):
        Wishart(t(5.0))
    with pytest.raises(ValueError):
        Wishart(t(5.0), covariance_matrix=t([[1.0, 2.0], [2.0, 1.0]]), validate_args=True)


# ---- KL divergences with the new distributions ---------------------------------------------

def test_kl_bernoulli_poisson_and_infinite_pairs() -> None:
    p, rate = np.array([0.3, 0.9]), np.array([0.5, 2.0])
    expected = [sum(pk * (math.log(pk) - st.poisson.logpmf(k, r))
                    for k, pk in ((0, 1 - pi), (1, pi))) for pi, r in zip(p, rate)]
    close(kl_divergence(Bernoulli(t(p.tolist())), Poisson(t(rate.tolist()))), expected)
    assert kl_divergence(Poisson(t([1.0])), Bernoulli(t([0.3]))).tolist() == [math.inf]
    assert kl_divergence(Poisson(t([1.0])), Binomial(3, t([0.3]))).tolist() == [math.inf]
    cb = ContinuousBernoulli(t([0.2]))
    for other in (Normal(t([0.0]), t([1.0])), Exponential(t([1.0])), Gamma(t([2.0]), t([1.0]))):
        assert kl_divergence(other, cb).tolist() == [math.inf]
    assert kl_divergence(cb, Pareto(t([1.0]), t([2.0]))).tolist() == [math.inf]
    assert kl_divergence(cb, Uniform(t([0.1]), t([1.0]))).tolist() == [math.inf]
    assert kl_divergence(Uniform(t([-0.1]), t([0.5])), cb).tolist() == [math.inf]


@pytest.mark.parametrize("other", ["beta", "uniform"])
def test_kl_into_continuous_bernoulli_by_quadrature(other: str) -> None:
    lam = 0.7
    q = ContinuousBernoulli(t([lam]))
    norm = 1 / quad(lambda u: lam ** u * (1 - lam) ** (1 - u), 0, 1)[0]

    def log_q(u: float) -> float:
        return math.log(norm) + u * math.log(lam) + (1 - u) * math.log(1 - lam)
    if other == "beta":
        p: object = Beta(t([2.0]), t([3.0]))
        expected = quad(lambda u: st.beta.pdf(u, 2, 3) * (st.beta.logpdf(u, 2, 3) - log_q(u)),
                        0, 1)[0]
    else:
        p = Uniform(t([0.1]), t([0.6]))
        expected = quad(lambda u: 2 * (math.log(2) - log_q(u)), 0.1, 0.6)[0]
    close(kl_divergence(p, q), [expected], 1e-7)  # type: ignore[arg-type]


@pytest.mark.parametrize("other", ["exponential", "normal", "uniform"])
def test_kl_from_continuous_bernoulli_by_quadrature(other: str) -> None:
    lam = 0.2
    p = ContinuousBernoulli(t([lam]))
    norm = 1 / quad(lambda u: lam ** u * (1 - lam) ** (1 - u), 0, 1)[0]

    def dens(u: float) -> float:
        return norm * lam ** u * (1 - lam) ** (1 - u)
    q, log_q = {
        "exponential": (Exponential(t([2.0])), lambda u: st.expon.logpdf(u, scale=0.5)),
        "normal": (Normal(t([0.3]), t([2.0])), lambda u: st.norm.logpdf(u, 0.3, 2.0)),
        "uniform": (Uniform(t([-0.5]), t([1.5])), lambda u: -math.log(2.0)),
    }[other]
    expected = quad(lambda u: dens(u) * (math.log(dens(u)) - log_q(u)), 0, 1)[0]
    close(kl_divergence(p, q), [expected], 1e-7)


_INVALID = {
    "poisson rate": lambda: Poisson(t([-1.0]), validate_args=True),
    "poisson sample": lambda: Poisson(t([1.0]), validate_args=True).log_prob(t([-1.0])),
    "multinomial sample": lambda: Multinomial(4, t([0.2, 0.8]), validate_args=True).log_prob(
        t([5.0, 0.0])),
    "negative binomial sample": lambda: NegativeBinomial(
        t([2.0]), probs=t([0.3]), validate_args=True).log_prob(t([0.5])),
    "half cauchy scale": lambda: HalfCauchy(t(-2.0), validate_args=True),
    "inverse gamma sample": lambda: InverseGamma(t(2.0), t(3.0), validate_args=True).log_prob(
        t(-1.0)),
    "fisher df": lambda: FisherSnedecor(t(-2.0), t(5.0), validate_args=True),
    "kumaraswamy sample": lambda: Kumaraswamy(t(2.0), t(3.0), validate_args=True).log_prob(
        t(1.5)),
    "von mises concentration": lambda: VonMises(t(0.1), t(-2.0), validate_args=True),
    "continuous bernoulli sample": lambda: ContinuousBernoulli(
        t(0.3), validate_args=True).log_prob(t(1.3)),
    "relaxed bernoulli probs": lambda: RelaxedBernoulli(t(0.5), probs=t(1.3),
                                                        validate_args=True),
    "relaxed one-hot sample": lambda: RelaxedOneHotCategorical(
        t(0.5), probs=t([0.2, 0.8]), validate_args=True).log_prob(t([0.5, 0.6])),
    "logistic normal sample": lambda: LogisticNormal(
        t([0.1, 0.2]), t([1.0, 2.0]), validate_args=True).log_prob(t([0.5, 0.6, 0.1])),
    "generalized pareto sample": lambda: GeneralizedPareto(
        t(0.0), t(1.0), t(0.2), validate_args=True).log_prob(t(-1.0)),
    "wishart sample": lambda: Wishart(t(3.0), covariance_matrix=t([[1.0, 0.0], [0.0, 1.0]]),
                                      validate_args=True).log_prob(t([[1.0, 2.0], [2.0, 1.0]])),
    "lkj sample": lambda: LKJCholesky(2, t(2.0), validate_args=True).log_prob(
        t([[1.0, 0.0], [0.5, 0.5]])),
}


@pytest.mark.parametrize("case", sorted(_INVALID))
def test_validate_args_rejects_invalid_parameters_and_samples(case: str) -> None:
    with pytest.raises(ValueError):
        _INVALID[case]()


def test_mixture_same_family_support_checks_every_component() -> None:
    from torch.distributions import Categorical, MixtureSameFamily
    upper = t([[1.0, 2.0]] * 3)
    mix = MixtureSameFamily(Categorical(torch.ones(3, 2, dtype=D)),
                            Uniform(torch.zeros(3, 2, dtype=D), upper), validate_args=True)
    assert isinstance(mix.support, constraints.MixtureSameFamilyConstraint)
    # Each component has density 1 / width where the value is inside it.
    close(mix.log_prob(t([0.5, 0.9, 0.2])), [math.log(0.5 * 1 + 0.5 * 0.5)] * 3)
    with pytest.raises(ValueError):
        mix.log_prob(t([0.5, 1.5, 0.2]))  # outside the first component's [0, 1]


@pytest.mark.parametrize("make", [
    lambda **kw: torch.distributions.Bernoulli(**kw),
    lambda **kw: torch.distributions.Geometric(**kw),
    lambda **kw: torch.distributions.Binomial(5, **kw),
    lambda **kw: torch.distributions.NegativeBinomial(5, **kw),
    lambda **kw: torch.distributions.ContinuousBernoulli(**kw),
    lambda **kw: LogitRelaxedBernoulli(torch.tensor(0.5), **kw),
])
@pytest.mark.parametrize("given", ["probs", "logits"])
def test_expand_carries_probs_and_logits(make, given):
    """expand keeps the parameter given and the one computed from it, both expanded, and the
    values the original has; giving both or neither is PyTorch's ValueError."""
    values = {"probs": torch.tensor([[0.2], [0.7]]), "logits": torch.tensor([[-1.0], [0.5]])}
    dist = make(**{given: values[given]})
    other = "logits" if given == "probs" else "probs"
    getattr(dist, other)  # computed and cached
    wide = dist.expand((2, 3))
    for name in ("probs", "logits"):
        got = getattr(wide, name)
        assert tuple(got.shape) == (2, 3)
        np.testing.assert_allclose(got.numpy(), getattr(dist, name).expand(2, 3).numpy())
    np.testing.assert_allclose(wide.probs.numpy()[:, 0],
                               values["probs"][:, 0].numpy() if given == "probs" else
                               1 / (1 + np.exp(-values["logits"][:, 0].numpy())), rtol=1e-6)
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        make(probs=values["probs"], logits=values["logits"])
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        make()
