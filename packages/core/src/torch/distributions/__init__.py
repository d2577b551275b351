"""``torch.distributions``: probability distributions with sampling (``rsample`` where
reparameterisable), ``log_prob``, ``entropy`` and moments, their constraints, transforms, and
``kl_divergence``. Everything is composite over ordinary torch ops, so it runs on any device and
differentiates through autograd; Gamma, Beta and Dirichlet sample through
``torch._standard_gamma``."""

from __future__ import annotations

from . import constraint_registry, constraints, transforms
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .chi2 import Chi2
from .constraint_registry import biject_to, transform_to
from .constraints import Constraint
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .fishersnedecor import FisherSnedecor
from .gamma import Gamma
from .generalized_pareto import GeneralizedPareto
from .geometric import Geometric
from .gumbel import Gumbel
from .half_cauchy import HalfCauchy
from .half_normal import HalfNormal
from .independent import Independent
from .inverse_gamma import InverseGamma
from .kl import kl_divergence, register_kl
from .kumaraswamy import Kumaraswamy
from .laplace import Laplace
from .lkj_cholesky import LKJCholesky
from .log_normal import LogNormal
from .logistic_normal import LogisticNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .negative_binomial import NegativeBinomial
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .pareto import Pareto
from .poisson import Poisson
from .relaxed_bernoulli import RelaxedBernoulli
from .relaxed_categorical import RelaxedOneHotCategorical
from .studentT import StudentT
from .transformed_distribution import TransformedDistribution
from .transforms import (
    AbsTransform,
    AffineTransform,
    CatTransform,
    ComposeTransform,
    CorrCholeskyTransform,
    CumulativeDistributionTransform,
    ExpTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    PowerTransform,
    ReshapeTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StackTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
    identity_transform,
)
from .uniform import Uniform
from .von_mises import VonMises
from .weibull import Weibull
from .wishart import Wishart

__all__ = [
    "AffineTransform", "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2",
    "ComposeTransform",
    "Constraint", "Dirichlet", "Distribution", "ExpTransform", "Exponential", "Gamma",
    "Geometric", "Gumbel", "Pareto", "Weibull",
    "HalfNormal", "Independent", "Laplace",
    "LogNormal", "MixtureSameFamily", "MultivariateNormal", "Normal", "OneHotCategorical",
    "SigmoidTransform", "StudentT", "TanhTransform",
    "Transform", "TransformedDistribution", "Uniform", "constraints", "kl_divergence",
    "register_kl", "transforms",
    "AbsTransform", "ExponentialFamily", "HalfCauchy", "InverseGamma",
    "LowRankMultivariateNormal", "Multinomial", "NegativeBinomial",
    "Poisson", "PowerTransform", "RelaxedBernoulli", "RelaxedOneHotCategorical",
    "SoftmaxTransform", "SoftplusTransform", "StickBreakingTransform",
    "CatTransform", "CorrCholeskyTransform", "CumulativeDistributionTransform",
    "IndependentTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform",
    "ReshapeTransform", "StackTransform", "biject_to", "constraint_registry", "transform_to",
    "FisherSnedecor", "GeneralizedPareto", "Kumaraswamy", "LogisticNormal",
    "OneHotCategoricalStraightThrough", "VonMises", "ContinuousBernoulli", "LKJCholesky", "Wishart",
    "identity_transform",
]
