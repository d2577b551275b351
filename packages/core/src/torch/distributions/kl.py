"""``kl_divergence`` and its registry: ``KL(p || q)`` for pairs of distribution types.

``register_kl(P, Q)`` adds an implementation; a lookup picks the registered pair whose types
are the closest ancestors of ``type(p)`` and ``type(q)`` (by method resolution order, the
first type first), so a subclass inherits its parent's formula.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Gamma
from .gumbel import Gumbel
from .independent import Independent
from .laplace import Laplace
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .pareto import Pareto
from .poisson import Poisson
from .transformed_distribution import TransformedDistribution
from .uniform import Uniform
from .utils import _sum_rightmost

__all__ = ["kl_divergence", "register_kl"]

_KLFunction = Callable[[Any, Any], torch.Tensor]
_KL_REGISTRY: dict[tuple[type, type], _KLFunction] = {}
_KL_MEMOIZE: dict[tuple[type, type], _KLFunction | None] = {}


def register_kl(type_p: type, type_q: type) -> Callable[[_KLFunction], _KLFunction]:
    """Decorator registering ``fn(p, q)`` as ``KL(p || q)`` for ``p: type_p``, ``q: type_q``.

    Any classes are accepted, as in PyTorch: libraries register pairs with distribution
    classes of their own (pyro's ``Distribution`` is not a subclass of this one).

    :raises TypeError: either argument is not a class.
    """
    if not isinstance(type_p, type):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not isinstance(type_q, type):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fn: _KLFunction) -> _KLFunction:
        _KL_REGISTRY[type_p, type_q] = fn
        _KL_MEMOIZE.clear()
        return fn

    return decorator


def _dispatch_kl(type_p: type, type_q: type) -> _KLFunction | None:
    best: tuple[int, int] | None = None
    found = None
    mro_p, mro_q = type_p.__mro__, type_q.__mro__
    for (super_p, super_q), fn in _KL_REGISTRY.items():
        if super_p in mro_p and super_q in mro_q:
            rank = (mro_p.index(super_p), mro_q.index(super_q))
            if best is None or rank < best:
                best, found = rank, fn
    return found


def kl_divergence(p: Distribution, q: Distribution) -> torch.Tensor:
    """``KL(p || q)``, batched over the distributions' batch shape.

    :raises NotImplementedError: no formula is registered for the pair of types.
    """
    key = (type(p), type(q))
    if key not in _KL_MEMOIZE:
        _KL_MEMOIZE[key] = _dispatch_kl(*key)
    fn = _KL_MEMOIZE[key]
    if fn is None:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type "
                                  f"{p.__class__.__name__} and q type {q.__class__.__name__}")
    return fn(p, q)


def _softplus(x: torch.Tensor) -> torch.Tensor:
    return x.clamp(min=0) + torch.log1p(torch.exp(-x.abs()))


@register_kl(Normal, Normal)
def _kl_normal_normal(p: Normal, q: Normal) -> torch.Tensor:
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p: Bernoulli, q: Bernoulli) -> torch.Tensor:
    inf = float("inf")
    t1 = p.probs * (_softplus(-q.logits) - _softplus(-p.logits))
    t1 = t1.masked_fill(q.probs == 0, inf).masked_fill(p.probs == 0, 0.0)
    t2 = (1 - p.probs) * (_softplus(q.logits) - _softplus(p.logits))
    t2 = t2.masked_fill(q.probs == 1, inf).masked_fill(p.probs == 1, 0.0)
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p: Categorical, q: Categorical) -> torch.Tensor:
    t = p.probs * (p.logits - q.logits)
    t = t.masked_fill((q.probs == 0).expand_as(t), float("inf"))
    t = t.masked_fill((p.probs == 0).expand_as(t), 0.0)
    return t.sum(-1)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p: Uniform, q: Uniform) -> torch.Tensor:
    result = ((q.high - q.low) / (p.high - p.low)).log()
    outside = (q.low > p.low) | (q.high < p.high)
    return result.masked_fill(outside, float("inf"))


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p: Uniform, q: Normal) -> torch.Tensor:
    width = p.high - p.low
    t1 = (math.sqrt(math.pi * 2) * q.scale / width).log()
    t2 = width.pow(2) / 12
    t3 = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
    return t1 + 0.5 * (t2 + t3) / q.scale.pow(2)


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p: Gamma, q: Gamma) -> torch.Tensor:
    t1 = q.concentration * torch.log(p.rate / q.rate)
    t2 = torch.lgamma(q.concentration) - torch.lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * torch.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p: Dirichlet, q: Dirichlet) -> torch.Tensor:
    sum_p = p.concentration.sum(-1)
    sum_q = q.concentration.sum(-1)
    t1 = sum_p.lgamma() - sum_q.lgamma()
    t2 = (p.concentration.lgamma() - q.concentration.lgamma()).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = p.concentration.digamma() - sum_p.digamma().unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Beta, Beta)
def _kl_beta_beta(p: Beta, q: Beta) -> torch.Tensor:
    return _kl_dirichlet_dirichlet(p._dirichlet, q._dirichlet)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p: MultivariateNormal, q: MultivariateNormal) -> torch.Tensor:
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with different "
                         "event shapes cannot be computed")
    n = p.event_shape[0]
    lp, lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = lq.diagonal(dim1=-2, dim2=-1).log().sum(-1) - lp.diagonal(
        dim1=-2, dim2=-1).log().sum(-1)
    shape = torch.broadcast_shapes(lp.shape, lq.shape)
    # tr(Sq^-1 Sp) = ||Lq^-1 Lp||_F^2.
    solved = torch.linalg.solve_triangular(lq.expand(shape), lp.expand(shape), upper=False)
    term2 = solved.pow(2).sum((-2, -1))
    term3 = _batch_mahalanobis(lq, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


@register_kl(Independent, Independent)
def _kl_independent_independent(p: Independent, q: Independent) -> torch.Tensor:
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist),
                          p.reinterpreted_batch_ndims)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p: TransformedDistribution,
                                q: TransformedDistribution) -> torch.Tensor:
    # KL is invariant under a shared bijection; anything else has no closed form here.
    if p.transforms != q.transforms or p.event_shape != q.event_shape:
        raise NotImplementedError
    extra = len(p.event_shape) - len(p.base_dist.event_shape)
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist), extra)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p: Exponential, q: Exponential) -> torch.Tensor:
    rate_ratio = q.rate / p.rate
    return rate_ratio - 1 - rate_ratio.log()


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p: Laplace, q: Laplace) -> torch.Tensor:
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    t1 = -scale_ratio.log()
    t2 = loc_abs_diff / q.scale
    t3 = scale_ratio * torch.exp(-loc_abs_diff / p.scale)
    return t1 + t2 + t3 - 1


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehot_onehot(p: OneHotCategorical, q: OneHotCategorical) -> torch.Tensor:
    return _kl_categorical_categorical(p._categorical, q._categorical)


# -- pairs of different families ------------------------------------------------------------
# KL(p || q) = -H(p) - E_p[log q], with E_p[log q] written from p's moments.

_EULER_GAMMA = 0.5772156649015329


def _kl_to_normal(p: Any, q: Normal) -> torch.Tensor:
    # E_p[(x - loc)^2] = Var_p + (mean_p - loc)^2 is all a normal's log density needs.
    second_moment = p.variance + (p.mean - q.loc).pow(2)
    return (-p.entropy() + torch.log(q.scale * math.sqrt(2 * math.pi))
            + second_moment / (2 * q.scale.pow(2)))


for _family in (Laplace, Exponential, Gamma, Beta):
    register_kl(_family, Normal)(_kl_to_normal)


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p: Normal, q: Laplace) -> torch.Tensor:
    shift = p.loc - q.loc
    # E|x - loc_q| for a normal x: the folded normal's mean.
    mean_abs = (p.scale * math.sqrt(2 / math.pi) * torch.exp(-shift.pow(2) / (2 * p.scale.pow(2)))
                + shift * torch.erf(shift / (p.scale * math.sqrt(2))))
    return -p.entropy() + torch.log(2 * q.scale) + mean_abs / q.scale


def _gamma_expected_log_density(q: Gamma, mean: torch.Tensor,
                                mean_log: torch.Tensor) -> torch.Tensor:
    return (torch.xlogy(q.concentration, q.rate) - torch.lgamma(q.concentration)
            + (q.concentration - 1) * mean_log - q.rate * mean)


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p: Exponential, q: Gamma) -> torch.Tensor:
    mean_log = -_EULER_GAMMA - p.rate.log()
    return -p.entropy() - _gamma_expected_log_density(q, p.mean, mean_log)


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p: Gamma, q: Exponential) -> torch.Tensor:
    return -p.entropy() - q.rate.log() + q.rate * p.mean


def _uniform_mean_log(low: torch.Tensor, high: torch.Tensor) -> torch.Tensor:
    # E[log x] for x uniform on [low, high] (low >= 0): (h log h - h - l log l + l) / (h - l).
    return (torch.xlogy(high, high) - high - torch.xlogy(low, low) + low) / (high - low)


def _outside_to_inf(result: torch.Tensor, outside: torch.Tensor) -> torch.Tensor:
    return result.masked_fill(outside, float("inf"))


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p: Uniform, q: Gamma) -> torch.Tensor:
    mean_log = _uniform_mean_log(p.low.clamp(min=0), p.high.clamp(min=0))
    result = -p.entropy() - _gamma_expected_log_density(q, p.mean, mean_log)
    return _outside_to_inf(result, p.low < 0)


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p: Uniform, q: Exponential) -> torch.Tensor:
    result = -p.entropy() - q.rate.log() + q.rate * p.mean
    return _outside_to_inf(result, p.low < 0)


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p: Uniform, q: Beta) -> torch.Tensor:
    low, high = p.low.clamp(0, 1), p.high.clamp(0, 1)
    mean_log_x = _uniform_mean_log(low, high)
    # E[log(1 - x)] is E[log y] for y = 1 - x uniform on [1 - high, 1 - low].
    mean_log_1mx = _uniform_mean_log(1 - high, 1 - low)
    a, b = q.concentration1, q.concentration0
    log_norm = torch.lgamma(a + b) - torch.lgamma(a) - torch.lgamma(b)
    expected = log_norm + (a - 1) * mean_log_x + (b - 1) * mean_log_1mx
    return _outside_to_inf(-p.entropy() - expected, (p.low < 0) | (p.high > 1))


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p: Poisson, q: Poisson) -> torch.Tensor:
    return torch.xlogy(p.rate, p.rate) - torch.xlogy(p.rate, q.rate) - p.rate + q.rate


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p: ExponentialFamily, q: ExponentialFamily) -> torch.Tensor:
    # The Bregman divergence of the log normalizer F between the natural parameters:
    # KL = F(theta_q) - F(theta_p) - <theta_q - theta_p, grad F(theta_p)>.
    if type(p) is not type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential "
                                  "families cannot be computed using Bregman divergences")
    p_thetas = [theta.detach().requires_grad_() for theta in p._natural_params]
    q_thetas = q._natural_params
    p_log_normalizer = p._log_normalizer(*p_thetas)
    grads = torch.autograd.grad(p_log_normalizer.sum(), p_thetas, create_graph=True)
    result = q._log_normalizer(*q_thetas) - p_log_normalizer
    for p_theta, q_theta, grad in zip(p_thetas, q_thetas, grads):
        term = (q_theta - p_theta) * grad
        result = result - _sum_rightmost(term, len(q.event_shape))
    return result


def _kl_gaussians(p: Any, q: Any) -> torch.Tensor:
    """KL between two Gaussians given by ``loc`` and a lower Cholesky factor ``scale_tril``
    of the covariance (the low-rank forms go through their dense factor)."""
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two (Low Rank) Multivariate Normals with "
                         "different event shapes cannot be computed")
    n = p.event_shape[0]
    lp, lq = p.scale_tril, q.scale_tril
    half_log_det_ratio = (lq.diagonal(dim1=-2, dim2=-1).log().sum(-1)
                          - lp.diagonal(dim1=-2, dim2=-1).log().sum(-1))
    shape = torch.broadcast_shapes(lp.shape, lq.shape)
    trace = torch.linalg.solve_triangular(lq.expand(shape), lp.expand(shape),
                                          upper=False).pow(2).sum((-2, -1))
    maha = _batch_mahalanobis(lq, q.loc - p.loc)
    return half_log_det_ratio + 0.5 * (trace + maha - n)


register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)(_kl_gaussians)
register_kl(LowRankMultivariateNormal, MultivariateNormal)(_kl_gaussians)
register_kl(MultivariateNormal, LowRankMultivariateNormal)(_kl_gaussians)


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli(p: ContinuousBernoulli, q: ContinuousBernoulli) -> torch.Tensor:
    # log p(x) = x logits + log(1 - probs) + log C(probs): only E_p[x] is needed.
    return (p.mean * (p.logits - q.logits) + p._cont_bern_log_norm() + torch.log1p(-p.probs)
            - q._cont_bern_log_norm() - torch.log1p(-q.probs))


def _infinite(*params: torch.Tensor) -> torch.Tensor:
    """KL = inf over the broadcast batch: p puts mass where q has none."""
    shape = torch.broadcast_shapes(*(param.shape for param in params))
    return torch.full(shape, math.inf, dtype=params[0].dtype, device=params[0].device)


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p: Bernoulli, q: Poisson) -> torch.Tensor:
    # log q(x) = x log(rate) - rate for x in {0, 1} (log x! = 0).
    return -p.entropy() - p.probs * torch.log(q.rate) + q.rate


@register_kl(Poisson, Bernoulli)
@register_kl(Poisson, Binomial)
def _kl_poisson_bounded(p: Poisson, q: Any) -> torch.Tensor:
    return _infinite(p.rate, q.probs)


def _continuous_bernoulli_expected_log_density(q: ContinuousBernoulli,
                                               mean: torch.Tensor) -> torch.Tensor:
    """E_p[log q(x)] for a continuous Bernoulli q and any p on [0, 1] with mean ``mean``."""
    return mean * q.logits + torch.log1p(-q.probs) + q._cont_bern_log_norm()


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p: Beta, q: ContinuousBernoulli) -> torch.Tensor:
    return -p.entropy() - _continuous_bernoulli_expected_log_density(q, p.mean)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p: Uniform, q: ContinuousBernoulli) -> torch.Tensor:
    result = -p.entropy() - _continuous_bernoulli_expected_log_density(q, p.mean)
    outside = (p.low < 0) | (p.high > 1)
    return torch.where(outside, math.inf, result)


@register_kl(Exponential, ContinuousBernoulli)
@register_kl(Gamma, ContinuousBernoulli)
@register_kl(Gumbel, ContinuousBernoulli)
@register_kl(Laplace, ContinuousBernoulli)
@register_kl(Normal, ContinuousBernoulli)
@register_kl(Pareto, ContinuousBernoulli)
def _kl_unbounded_continuous_bernoulli(p: Any, q: ContinuousBernoulli) -> torch.Tensor:
    # Each of these puts mass outside [0, 1].
    return _infinite(p.mean, q.probs)


@register_kl(ContinuousBernoulli, Pareto)
def _kl_continuous_bernoulli_pareto(p: ContinuousBernoulli, q: Pareto) -> torch.Tensor:
    # A Pareto has no mass below its positive scale, where p has some.
    return _infinite(p.probs, q.scale)


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p: ContinuousBernoulli,
                                         q: Exponential) -> torch.Tensor:
    return -p.entropy() - torch.log(q.rate) + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p: ContinuousBernoulli, q: Normal) -> torch.Tensor:
    second_moment = p.variance + (p.mean - q.loc).pow(2)
    return (-p.entropy() + 0.5 * math.log(2 * math.pi) + torch.log(q.scale)
            + second_moment / (2 * q.scale.pow(2)))


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p: ContinuousBernoulli, q: Uniform) -> torch.Tensor:
    result = -p.entropy() + torch.log(q.high - q.low)
    return torch.where((q.low > 0) | (q.high < 1), math.inf, result)
