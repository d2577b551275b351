"""torch.distributions: values against PyTorch, sampling shapes and moments, gradients through
rsample, validation errors, expand, transforms and the kl_divergence registry.

``PYTORCH_VALUES`` below were computed once with real PyTorch 2.13 (CPU, float64) by evaluating
the expression named in ``CASES`` (the same expressions, with ``torch`` being PyTorch) and
printing ``.tolist()``; they are stored here so the test does not need PyTorch.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

import torch
from torch.distributions import (
    AffineTransform,
    Bernoulli,
    Beta,
    Categorical,
    ComposeTransform,
    Dirichlet,
    Distribution,
    Exponential,
    ExpTransform,
    Gamma,
    Independent,
    Laplace,
    LogNormal,
    MultivariateNormal,
    Normal,
    OneHotCategorical,
    SigmoidTransform,
    StudentT,
    TanhTransform,
    TransformedDistribution,
    Uniform,
    constraints,
    kl_divergence,
    register_kl,
)

inf = float("inf")
nan = float("nan")


def T(*values: float) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64)


def _mat(rows: list[list[float]]) -> torch.Tensor:
    return torch.tensor(rows, dtype=torch.float64)


COV = [[2., 0.5], [0.5, 1.]]
CASES = {
 "normal_lp": lambda: Normal(T(0., 1.5), T(1., 0.5)).log_prob(T(0.3, -2.)),
 "normal_ent": lambda: Normal(T(0., 1.5), T(1., 0.5)).entropy(),
 "normal_cdf": lambda: Normal(T(0., 1.5), T(1., 0.5)).cdf(T(0.3, -2.)),
 "normal_icdf": lambda: Normal(T(0., 1.5), T(1., 0.5)).icdf(T(0.3, 0.9)),
 "uniform_lp": lambda: Uniform(T(0., -1.), T(2., 3.)).log_prob(T(0.5, 2.5)),
 "uniform_ent": lambda: Uniform(T(0., -1.), T(2., 3.)).entropy(),
 "bern_lp": lambda: Bernoulli(probs=T(0.2, 0.9)).log_prob(T(1., 0.)),
 "bern_logits_lp": lambda: Bernoulli(logits=T(-3., 40.)).log_prob(T(1., 0.)),
 "bern_ent": lambda: Bernoulli(logits=T(-3., 0.5)).entropy(),
 "cat_lp": lambda: Categorical(logits=T(1., 2., 0.5)).log_prob(torch.tensor([0, 2])),
 "cat_probs_ent": lambda: Categorical(probs=T(0.2, 0.0, 0.8)).entropy(),
 "gamma_lp": lambda: Gamma(T(0.5, 3.), T(2., 0.7)).log_prob(T(0.4, 5.)),
 "gamma_ent": lambda: Gamma(T(0.5, 3.), T(2., 0.7)).entropy(),
 "beta_lp": lambda: Beta(T(0.5, 3.), T(2., 0.7)).log_prob(T(0.4, 0.95)),
 "beta_ent": lambda: Beta(T(0.5, 3.), T(2., 0.7)).entropy(),
 "dir_lp": lambda: Dirichlet(T(0.5, 2., 3.)).log_prob(T(0.2, 0.3, 0.5)),
 "dir_ent": lambda: Dirichlet(T(0.5, 2., 3.)).entropy(),
 "mvn_lp": lambda: MultivariateNormal(T(0.5, -1.), _mat(COV)).log_prob(T(0.3, 0.2)),
 "mvn_prec_lp": lambda: MultivariateNormal(T(0.5, -1.), precision_matrix=_mat(COV)).log_prob(T(0.3, 0.2)),  # noqa: E501 - one case per line
 "mvn_ent": lambda: MultivariateNormal(T(0.5, -1.), scale_tril=_mat([[2., 0.], [0.5, 1.]])).entropy(),  # noqa: E501 - one case per line
 "indep_lp": lambda: Independent(Normal(T(0., 1.5), T(1., 0.5)), 1).log_prob(T(0.3, -2.)),
 "lognormal_lp": lambda: TransformedDistribution(Normal(T(0.), T(1.)), [ExpTransform()]).log_prob(T(2.)),  # noqa: E501 - one case per line
 "tanh_affine_lp": lambda: TransformedDistribution(Normal(T(0., 1.), T(1., 2.)), [AffineTransform(0.5, 2.), TanhTransform()]).log_prob(T(0.3, -0.9)),  # noqa: E501 - one case per line
 "sigmoid_lp": lambda: TransformedDistribution(Normal(T(0.), T(1.)), [SigmoidTransform()]).log_prob(T(0.7)),  # noqa: E501 - one case per line
 "compose_lp": lambda: TransformedDistribution(Normal(T(0.), T(1.)), ComposeTransform([AffineTransform(1., 3.), ExpTransform()])).log_prob(T(2.)),  # noqa: E501 - one case per line
 "kl_normal": lambda: kl_divergence(Normal(T(0., 1.), T(1., 2.)), Normal(T(0.5, 0.), T(2., 1.))),
 "kl_bern": lambda: kl_divergence(Bernoulli(probs=T(0.3, 0.9)), Bernoulli(probs=T(0.5, 0.2))),
 "kl_cat": lambda: kl_divergence(Categorical(probs=T(0.3, 0.7, 0.)), Categorical(probs=T(0.2, 0.5, 0.3))),  # noqa: E501 - one case per line
 "kl_uniform": lambda: kl_divergence(Uniform(T(0., 0.), T(1., 1.)), Uniform(T(-1., 0.5), T(2., 2.))),  # noqa: E501 - one case per line
 "kl_uniform_normal": lambda: kl_divergence(Uniform(T(0.), T(2.)), Normal(T(0.5), T(1.5))),
 "kl_gamma": lambda: kl_divergence(Gamma(T(2., 0.5), T(1., 3.)), Gamma(T(3., 1.), T(2., 1.))),
 "kl_beta": lambda: kl_divergence(Beta(T(2., 0.5), T(1., 3.)), Beta(T(3., 1.), T(2., 1.))),
 "kl_dir": lambda: kl_divergence(Dirichlet(T(2., 0.5, 1.)), Dirichlet(T(1., 1., 1.))),
 "kl_mvn": lambda: kl_divergence(MultivariateNormal(T(0.5, -1.), _mat(COV)), MultivariateNormal(T(0., 0.), _mat([[1., 0.2], [0.2, 3.]]))),  # noqa: E501 - one case per line
 "kl_indep": lambda: kl_divergence(Independent(Normal(T(0., 1.), T(1., 2.)), 1), Independent(Normal(T(0.5, 0.), T(2., 1.)), 1)),  # noqa: E501 - one case per line
 "kl_transformed": lambda: kl_divergence(TransformedDistribution(Normal(T(0.), T(1.)), [ExpTransform()]), TransformedDistribution(Normal(T(1.), T(2.)), [ExpTransform()])),  # noqa: E501 - one case per line
 "gamma_var": lambda: Gamma(T(0.5, 3.), T(2., 0.7)).variance,
 "beta_var": lambda: Beta(T(0.5, 3.), T(2., 0.7)).variance,
 "dir_var": lambda: Dirichlet(T(0.5, 2., 3.)).variance,
 "mvn_var": lambda: MultivariateNormal(T(0.5, -1.), _mat(COV)).variance,
 "mvn_prec": lambda: MultivariateNormal(T(0.5, -1.), _mat(COV)).precision_matrix,
 "mvn_batch_lp": lambda: MultivariateNormal(_mat([[0., 1.], [2., -1.], [0.5, 0.5]]), _mat([[2., 0.5], [0.5, 1.]])).log_prob(_mat([[0.3, 0.2]])),  # noqa: E501 - one case per line
 "mvn_batch_ent": lambda: MultivariateNormal(_mat([[0., 1.], [2., -1.]]), scale_tril=_mat([[[1., 0.], [0.3, 2.]], [[0.5, 0.], [0., 1.]]])).entropy(),  # noqa: E501 - one case per line
 "kl_mvn_batch": lambda: kl_divergence(MultivariateNormal(_mat([[0., 1.], [2., -1.]]), _mat([[2., 0.5], [0.5, 1.]])), MultivariateNormal(T(0., 0.), scale_tril=_mat([[[1., 0.], [0.3, 2.]], [[0.5, 0.], [0., 1.]]]))),  # noqa: E501 - one case per line
 "td_affine_mvn": lambda: TransformedDistribution(MultivariateNormal(T(0., 1.), _mat([[2., 0.5], [0.5, 1.]])), [AffineTransform(T(1., 2.), T(0.5, 3.), event_dim=1)]).log_prob(T(0.3, 0.2)),  # noqa: E501 - one case per line
 "td_indep_normal_affine": lambda: TransformedDistribution(Normal(T(0., 1.), T(1., 2.)), [AffineTransform(T(1., 2.), T(0.5, 3.), event_dim=1)]).log_prob(T(0.3, 0.2)),  # noqa: E501 - one case per line
 "indep_td": lambda: Independent(TransformedDistribution(Normal(T(0., 1.), T(1., 2.)), [SigmoidTransform()]), 1).log_prob(T(0.3, 0.2)),  # noqa: E501 - one case per line
 "bern_lp_broadcast": lambda: Bernoulli(logits=T(-1., 2.)).log_prob(_mat([[1.], [0.]])),
 "cat_batch_lp": lambda: Categorical(logits=_mat([[1., 2., 0.5], [0., 0., 3.]])).log_prob(torch.tensor([[0], [2]])),  # noqa: E501 - one case per line
 "cat_batch_ent": lambda: Categorical(logits=_mat([[1., 2., 0.5], [0., 0., 3.]])).entropy(),
 "normal_cdf_td_exp": lambda: TransformedDistribution(Normal(T(0.), T(1.)), [ExpTransform()]).cdf(T(2.)),  # noqa: E501 - one case per line
 "td_neg_affine_cdf": lambda: TransformedDistribution(Normal(T(0.), T(1.)), [AffineTransform(0., -2.)]).cdf(T(1.)),  # noqa: E501 - one case per line
 "dir_mode": lambda: Dirichlet(T(0.5, 2., 3.)).mode,
 "beta_mode": lambda: Beta(T(2., 0.5), T(3., 0.7)).mode,
 "gamma_mode": lambda: Gamma(T(0.5, 3.), T(2., 0.7)).mode,
 "bern_mode": lambda: Bernoulli(probs=T(0.2, 0.5, 0.9)).mode,
 "tanh_ladj": lambda: TanhTransform().log_abs_det_jacobian(T(-30., 0.3, 5.), TanhTransform()(T(-30., 0.3, 5.))),  # noqa: E501 - one case per line
 "sigmoid_ladj": lambda: SigmoidTransform().log_abs_det_jacobian(T(-30., 0.3, 5.), SigmoidTransform()(T(-30., 0.3, 5.))),  # noqa: E501 - one case per line
 "perplexity": lambda: Categorical(probs=T(0.2, 0.3, 0.5)).perplexity(),
 "uniform_cdf": lambda: Uniform(T(0.), T(2.)).cdf(T(0.5)),
 "normal_stddev": lambda: Normal(T(0.), T(3.)).stddev,
 "exp_lp": lambda: Exponential(T(0.5, 2.)).log_prob(T(0.3, 4.)),
 "exp_ent": lambda: Exponential(T(0.5, 2.)).entropy(),
 "exp_cdf": lambda: Exponential(T(0.5, 2.)).cdf(T(0.3, 4.)),
 "laplace_lp": lambda: Laplace(T(0., 1.), T(0.5, 2.)).log_prob(T(0.3, -4.)),
 "laplace_ent": lambda: Laplace(T(0., 1.), T(0.5, 2.)).entropy(),
 "laplace_cdf": lambda: Laplace(T(0., 1.), T(0.5, 2.)).cdf(T(0.3, -4.)),
 "laplace_icdf": lambda: Laplace(T(0., 1.), T(0.5, 2.)).icdf(T(0.3, 0.9)),
 "lognormal_lp2": lambda: LogNormal(T(0., 1.), T(0.5, 2.)).log_prob(T(0.3, 4.)),
 "lognormal_ent": lambda: LogNormal(T(0., 1.), T(0.5, 2.)).entropy(),
 "lognormal_mean": lambda: LogNormal(T(0., 1.), T(0.5, 2.)).mean,
 "lognormal_var": lambda: LogNormal(T(0., 1.), T(0.5, 2.)).variance,
 "studentt_lp": lambda: StudentT(T(0.5, 3., 30.), T(0., 1., -1.), T(1., 2., 0.5)).log_prob(T(0.3, -4., 2.)),  # noqa: E501 - one case per line
 "studentt_ent": lambda: StudentT(T(0.5, 3., 30.), T(0., 1., -1.), T(1., 2., 0.5)).entropy(),
 "studentt_mean": lambda: StudentT(T(0.5, 3., 30.), T(0., 1., -1.), T(1., 2., 0.5)).mean,
 "studentt_var": lambda: StudentT(T(0.5, 1.5, 30.), T(0., 1., -1.), T(1., 2., 0.5)).variance,
 "kl_exp": lambda: kl_divergence(Exponential(T(0.5, 2.)), Exponential(T(1.5, 0.2))),
 "kl_laplace": lambda: kl_divergence(Laplace(T(0., 1.), T(0.5, 2.)), Laplace(T(1., -1.), T(1.5, 0.2))),  # noqa: E501 - one case per line
 "kl_lognormal": lambda: kl_divergence(LogNormal(T(0., 1.), T(0.5, 2.)), LogNormal(T(1., -1.), T(1.5, 0.2))),  # noqa: E501 - one case per line
 "onehot_lp": lambda: OneHotCategorical(logits=T(0.5, 1.0, -1.0)).log_prob(T(0., 1., 0.)),
 "onehot_ent": lambda: OneHotCategorical(probs=T(0.2, 0.3, 0.5)).entropy(),
 "onehot_var": lambda: OneHotCategorical(probs=T(0.2, 0.3, 0.5)).variance,
 "kl_onehot": lambda: kl_divergence(OneHotCategorical(logits=T(0.5, 1.0, -1.0)), OneHotCategorical(probs=T(0.2, 0.3, 0.5))),  # noqa: E501 - one case per line
 "kl_laplace_normal": lambda: kl_divergence(Laplace(T(0., 1.), T(0.5, 2.)), Normal(T(1., -1.), T(1.5, 0.2))),  # noqa: E501 - one case per line
 "kl_exp_normal": lambda: kl_divergence(Exponential(T(0.5, 2.)), Normal(T(1., -1.), T(1.5, 0.2))),
 "kl_gamma_normal": lambda: kl_divergence(Gamma(T(0.5, 3.), T(2., 0.7)), Normal(T(1., -1.), T(1.5, 0.2))),  # noqa: E501 - one case per line
 "kl_beta_normal": lambda: kl_divergence(Beta(T(0.5, 3.), T(2., 0.7)), Normal(T(1., -1.), T(1.5, 0.2))),  # noqa: E501 - one case per line
 "kl_normal_laplace": lambda: kl_divergence(Normal(T(1., -1.), T(1.5, 0.2)), Laplace(T(0., 1.), T(0.5, 2.))),  # noqa: E501 - one case per line
 "kl_exp_gamma": lambda: kl_divergence(Exponential(T(0.5, 2.)), Gamma(T(0.5, 3.), T(2., 0.7))),
 "kl_gamma_exp": lambda: kl_divergence(Gamma(T(0.5, 3.), T(2., 0.7)), Exponential(T(0.5, 2.))),
 "kl_uniform_gamma": lambda: kl_divergence(Uniform(T(0., 0.5, -1.), T(2., 3., 1.)), Gamma(T(0.5, 3., 2.), T(2., 0.7, 1.))),  # noqa: E501 - one case per line
 "kl_uniform_exp": lambda: kl_divergence(Uniform(T(0., 0.5, -1.), T(2., 3., 1.)), Exponential(T(0.5, 2., 1.))),  # noqa: E501 - one case per line
 "kl_uniform_beta": lambda: kl_divergence(Uniform(T(0., 0.2, -1.), T(1., 0.7, 0.5)), Beta(T(0.5, 3., 2.), T(2., 0.7, 1.))),  # noqa: E501 - one case per line
}

PYTORCH_VALUES = {
    "normal_lp": [-0.9639385332046727, -24.72579135264473],
    "normal_ent": [1.4189385332046727, 0.7257913526447274],
    "normal_cdf": [0.6179114221889526, 1.2798095916366492e-12],
    "normal_icdf": [-0.5244005127080409, 2.1407757827723004],
    "uniform_lp": [-0.6931471805599453, -1.3862943611198906],
    "uniform_ent": [0.6931471805599453, 1.3862943611198906],
    "bern_lp": [-1.6094379124341003, -2.302585092994046],
    "bern_logits_lp": [-3.048587351573742, -40.0],
    "bern_ent": [0.1908649711064423, 0.6628473185791794],
    "cat_lp": [-1.4643687841079451, -1.9643687841079451],
    "cat_probs_ent": 0.5004024235381879,
    "gamma_lp": [-0.56764598670765, -2.044296187507942],
    "gamma_ent": [-0.6025372506459566, 2.204253454301744],
    "beta_lp": [-0.3403623302806941, 1.2701909928648725],
    "beta_ent": [-0.7652789553347761, -0.7014726189655216],
    "dir_lp": 0.9067536349052947,
    "dir_ent": -1.9146769909858063,
    "mvn_lp": -3.0205421032341997,
    "mvn_prec_lp": -2.1980691724416337,
    "mvn_ent": 3.5310242469692907,
    "indep_lp": -25.689729885849403,
    "lognormal_lp": [-1.8523122207237188],
    "tanh_affine_lp": [-1.522310381941244, -1.1375806772974362],
    "sigmoid_lp": [0.2827523829516292],
    "compose_lp": [-2.7159290386993007],
    "kl_normal": [0.3493971805599453, 1.3068528194400546],
    "kl_bern": [0.08228287850505181, 1.145725502930663],
    "kl_cat": 0.3571700980672982,
    "kl_uniform": [1.0986122886681098, inf],
    "kl_uniform_normal": [0.7608860903825214],
    "kl_gamma": [0.19092130378164263, 1.1746690254207879],
    "kl_beta": [0.2082405307719446, 1.1080502011022095],
    "kl_dir": 0.7884225066489858,
    "kl_mvn": 0.7408272807408138,
    "kl_indep": 1.65625,
    "kl_transformed": [0.4431471805599453],
    "gamma_var": [0.125, 6.122448979591837],
    "beta_var": [0.045714285714285714, 0.032637582953856666],
    "dir_var": [0.012714558169103624, 0.03560076287349015, 0.03814367450731087],
    "mvn_var": [2.0000000000000004, 1.0],
    "mvn_prec": [[0.5714285714285713, -0.2857142857142857], [-0.2857142857142857, 1.142857142857143]],  # noqa: E501 - one case per line
    "mvn_batch_lp": [-2.5776849603770566, -4.349113531805628, -2.1633992460913425],
    "mvn_batch_ent": [3.5310242469692907, 2.1447298858494],
    "kl_mvn_batch": [0.6483392865922342, 11.027044925472342],
    "td_affine_mvn": -3.9060072113423643,
    "td_indep_normal_affine": -4.236489355077455,
    "indep_td": -0.20855196430375256,
    "bern_lp_broadcast": [[-1.3132616875182228, -0.1269280110429725], [-0.3132616875182228, -2.1269280110429727]],  # noqa: E501 - one case per line
    "cat_batch_lp": [[-1.4643687841079451, -3.094922956420961], [-1.9643687841079451, -0.09492295642096105]],  # noqa: E501 - one case per line
    "cat_batch_ent": [0.9059592564792269, 0.36659396088273544],
    "normal_cdf_td_exp": [0.7558914042144173],
    "td_neg_affine_cdf": [0.6914624612740131],
    "dir_mode": [0.0, 0.3333333333333333, 0.6666666666666666],
    "beta_mode": [0.3333333333333333, 1.0],
    "gamma_mode": [0.0, 2.857142857142857],
    "bern_mode": [0.0, nan, 1.0],
    "tanh_ladj": [-58.61370563888011, -0.08868153985188065, -8.613796436678543],
    "sigmoid_ladj": [-30.000000000000092, -1.4087104889370543, -5.0134306969782365],
    "perplexity": 2.8000940728538315,
    "uniform_cdf": [0.25],
    "normal_stddev": [3.0],
    "exp_lp": [-0.8431471805599453, -7.306852819440055],
    "exp_ent": [1.6931471805599454, 0.3068528194400547],
    "exp_cdf": [0.1392920235749422, 0.9996645373720975],
    "laplace_lp": [-0.6, -3.886294361119891],
    "laplace_ent": [1.0, 2.386294361119891],
    "laplace_cdf": [0.7255941819529867, 0.04104249931194942],
    "laplace_icdf": [-0.25541281188299536, 4.218875824868201],
    "lognormal_lp2": [-1.9209195754317088, -3.017032991563637],
    "lognormal_ent": [0.7257913526447274, 3.112085713764618],
    "lognormal_mean": [1.1331484530668263, 20.085536923187668],
    "lognormal_var": [0.3646958540123867, 21623.03700131398],
    "studentt_lp": [-1.4346687547696895, -3.9460585558959034, -12.455212230465087],
    "studentt_ent": [3.666727416103855, 2.466624752423237, 0.7593961492272605],
    "studentt_mean": [nan, 1.0, -1.0],
    "studentt_var": [nan, inf, 0.26785714285714285],
    "kl_exp": [0.9013877113318902, 1.4025850929940455],
    "kl_laplace": [0.8103907164136475, 10.376209318720377],
    "kl_lognormal": [0.8763900664458876, 97.19741490700595],
    "onehot_lp": -0.5549569196419906,
    "onehot_ent": 1.0296530140645737,
    "onehot_var": [0.16000000000000003, 0.21, 0.25],
    "kl_onehot": 0.4210180821534528,
    "kl_laplace_normal": [0.6577369746461703, 146.92320625965067],
    "kl_exp_normal": [0.7423675718640029, 30.25264780133051],
    "kl_gamma_normal": [2.0797186697365713, 422.87055328891773],
    "kl_beta_normal": [2.242063549028565, 41.40689043352562],
    "kl_normal_laplace": [1.082314241633585, 2.576793740349318],
    "kl_exp_gamma": [2.590609929913988, 4.347044883859044],
    "kl_gamma_exp": [1.420684431205902, 5.6740279365668815],
    "kl_uniform_gamma": [1.3792177623647548, 1.157952915474546, inf],
    "kl_uniform_exp": [0.5, 1.8905620875658997, inf],
    "kl_uniform_beta": [0.7876820724517808, 1.7398349942151872, inf],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_match_pytorch(name: str) -> None:
    got = CASES[name]()
    expected = torch.tensor(PYTORCH_VALUES[name], dtype=torch.float64)
    assert got.shape == expected.shape
    assert torch.allclose(got.to(torch.float64), expected, rtol=1e-9, atol=1e-12,
                          equal_nan=True), (got, expected)


def test_log_prob_formulas_written_out() -> None:
    # Independent of the stored values: the textbook densities, with math only.
    x, mu, sigma = 0.3, 1.5, 0.5
    want = -((x - mu) ** 2) / (2 * sigma ** 2) - math.log(sigma * math.sqrt(2 * math.pi))
    assert Normal(T(mu), T(sigma)).log_prob(T(x)).item() == pytest.approx(want, rel=1e-12)
    a, rate, x = 3.0, 0.7, 5.0
    want = a * math.log(rate) + (a - 1) * math.log(x) - rate * x - math.lgamma(a)
    assert Gamma(T(a), T(rate)).log_prob(T(x)).item() == pytest.approx(want, rel=1e-12)
    a, b, x = 0.5, 2.0, 0.4
    want = ((a - 1) * math.log(x) + (b - 1) * math.log(1 - x) + math.lgamma(a + b)
            - math.lgamma(a) - math.lgamma(b))
    assert Beta(T(a), T(b)).log_prob(T(x)).item() == pytest.approx(want, rel=1e-12)


SAMPLERS = {
    "normal": (lambda: Normal(torch.zeros(3), torch.ones(3)), (3,), ()),
    "uniform": (lambda: Uniform(torch.zeros(3), torch.ones(3)), (3,), ()),
    "bernoulli": (lambda: Bernoulli(probs=torch.full((3,), 0.4)), (3,), ()),
    "categorical": (lambda: Categorical(logits=torch.zeros(3, 4)), (3,), ()),
    "gamma": (lambda: Gamma(torch.ones(3), torch.ones(3)), (3,), ()),
    "beta": (lambda: Beta(torch.ones(3), torch.ones(3)), (3,), ()),
    "dirichlet": (lambda: Dirichlet(torch.ones(3, 4)), (3,), (4,)),
    "mvn": (lambda: MultivariateNormal(torch.zeros(3, 2), torch.eye(2)), (3,), (2,)),
    "independent": (lambda: Independent(Normal(torch.zeros(3, 2), 1.0), 1), (3,), (2,)),
    "exponential": (lambda: Exponential(torch.ones(3)), (3,), ()),
    "one_hot": (lambda: OneHotCategorical(logits=torch.zeros(3, 4)), (3,), (4,)),
    "laplace": (lambda: Laplace(torch.zeros(3), 1.0), (3,), ()),
    "lognormal_class": (lambda: LogNormal(torch.zeros(3), 1.0), (3,), ()),
    "studentt": (lambda: StudentT(torch.full((3,), 4.0)), (3,), ()),
    "lognormal": (lambda: TransformedDistribution(Normal(torch.zeros(3), 1.0),
                                                  [ExpTransform()]), (3,), ()),
}


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_shapes_of_samples_and_log_prob(name: str) -> None:
    make, batch, event = SAMPLERS[name]
    dist = make()
    assert dist.batch_shape == torch.Size(batch)
    assert dist.event_shape == torch.Size(event)
    sample = dist.sample((5, 2))
    assert sample.shape == torch.Size((5, 2) + batch + event)
    assert dist.log_prob(sample).shape == torch.Size((5, 2) + batch)
    assert dist.sample().shape == torch.Size(batch + event)
    expanded = dist.expand((4,) + batch)
    assert expanded.batch_shape == torch.Size((4,) + batch)
    assert expanded.sample().shape == torch.Size((4,) + batch + event)


MOMENTS = {
    "normal": (lambda: Normal(T(1.5), T(0.5)), 1.5, 0.25),
    "uniform": (lambda: Uniform(T(-1.0), T(3.0)), 1.0, 16 / 12),
    "bernoulli": (lambda: Bernoulli(probs=T(0.3)), 0.3, 0.21),
    "gamma_small": (lambda: Gamma(T(0.4), T(2.0)), 0.2, 0.1),
    "gamma": (lambda: Gamma(T(3.0), T(0.5)), 6.0, 12.0),
    "beta": (lambda: Beta(T(2.0), T(3.0)), 0.4, 6 / (25 * 6)),
    "categorical": (lambda: Categorical(probs=T(0.2, 0.5, 0.3)), 1.1, 0.49),
    "exponential": (lambda: Exponential(T(2.0)), 0.5, 0.25),
    "laplace": (lambda: Laplace(T(1.0), T(0.5)), 1.0, 0.5),
    "lognormal": (lambda: LogNormal(T(0.0), T(0.5)), math.exp(0.125),
                  math.expm1(0.25) * math.exp(0.25)),
    "studentt": (lambda: StudentT(T(10.0), T(1.0), T(2.0)), 1.0, 4.0 * 10 / 8),
}


@pytest.mark.parametrize("name", sorted(MOMENTS))
def test_sample_moments(name: str) -> None:
    torch.manual_seed(1)
    make, mean, var = MOMENTS[name]
    dist = make()
    samples = dist.sample((40000,)).to(torch.float64)
    # Five standard errors of the mean; the variance loosely.
    assert abs(samples.mean().item() - mean) < 5 * math.sqrt(var / 40000)
    assert samples.var().item() == pytest.approx(var, rel=0.05)
    if name != "categorical":
        assert dist.mean.item() == pytest.approx(mean, rel=1e-12)
        assert dist.variance.item() == pytest.approx(var, rel=1e-12)


def test_multivariate_normal_sample_covariance() -> None:
    torch.manual_seed(2)
    dist = MultivariateNormal(T(0.5, -1.0), _mat(COV))
    samples = dist.sample((40000,))
    centred = samples - samples.mean(0)
    cov = centred.T @ centred / 40000
    assert torch.allclose(cov, _mat(COV), atol=0.06)
    assert torch.allclose(samples.mean(0), T(0.5, -1.0), atol=0.03)


def test_dirichlet_samples_lie_on_the_simplex() -> None:
    torch.manual_seed(3)
    samples = Dirichlet(T(0.3, 2.0, 5.0)).sample((2000,))
    assert torch.allclose(samples.sum(-1), torch.ones(2000, dtype=torch.float64))
    assert bool((samples > 0).all())
    assert torch.allclose(samples.mean(0), T(0.3, 2.0, 5.0) / 7.3, atol=0.02)


def test_rsample_gradients_reach_the_parameters() -> None:
    loc = torch.tensor([0.5], requires_grad=True)
    scale = torch.tensor([2.0], requires_grad=True)
    torch.manual_seed(4)
    x = Normal(loc, scale).rsample((1000,))
    x.sum().backward()
    # d(loc + eps * scale)/dloc = 1 per sample; d/dscale = eps.
    assert loc.grad.item() == pytest.approx(1000.0)
    torch.manual_seed(4)
    eps = torch.randn(1000, 1)
    assert scale.grad.item() == pytest.approx(eps.sum().item(), rel=1e-5)
    assert not Normal(loc, scale).sample((3,)).requires_grad


def test_gamma_implicit_gradient_matches_pytorch() -> None:
    # dx/dalpha at fixed (alpha, x) from PyTorch 2.13's torch._standard_gamma_grad (float64).
    from torch._aten.gamma_sampling import _dx_dalpha

    alpha = T(0.3, 1.0, 2.5, 10.0, 300.0, 0.3, 2.5, 10.0)
    x = T(0.05, 0.7, 3.1, 8.0, 320.0, 1.5, 0.4, 14.0)
    pytorch = T(0.49471098700419375, 0.9732210448283286, 1.1879151390183849,
                0.9075013251395295, 1.0331667691535518, 3.212833391896362,
                0.3697127545519532, 1.197461760237315)
    assert torch.allclose(_dx_dalpha(alpha, x), pytorch, rtol=2e-3)
    # Far in the right tail the series needs its most terms.
    alpha, x = T(0.5, 2.5, 20.0, 140.0), T(12.0, 25.0, 60.0, 230.0)
    pytorch = T(4.353868206406302, 2.7129691536902385, 1.6617473722312774, 1.2701887800769975)
    assert torch.allclose(_dx_dalpha(alpha, x), pytorch, rtol=2e-3)


def test_gamma_rsample_gradient_is_the_gradient_of_the_mean() -> None:
    # E[x] = alpha / rate, so the mean of the pathwise gradients is 1 / rate and -alpha/rate^2.
    torch.manual_seed(5)
    alpha = torch.tensor(2.5, dtype=torch.float64, requires_grad=True)
    rate = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
    Gamma(alpha, rate).rsample((20000,)).mean().backward()
    assert alpha.grad.item() == pytest.approx(0.5, rel=0.03)
    assert rate.grad.item() == pytest.approx(-2.5 / 4.0, rel=0.03)
    c1 = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
    Beta(c1, T(3.0)[0]).rsample((20000,)).mean().backward()
    assert c1.grad.item() == pytest.approx(3.0 / 25.0, rel=0.06)


def test_validation_messages() -> None:
    with pytest.raises(ValueError, match=r"Expected parameter scale \(Tensor of shape \(\)\) "
                       r"of distribution Normal\(loc: 0.0, scale: -1.0\) to satisfy the "
                       r"constraint GreaterThan\(lower_bound=0.0\), but found invalid values"):
        Normal(0.0, -1.0)
    with pytest.raises(ValueError, match=r"within the support \(Interval\(lower_bound=0.0, "
                       r"upper_bound=1.0\)\) of the distribution Uniform"):
        Uniform(0.0, 1.0).log_prob(torch.tensor(2.0))
    with pytest.raises(ValueError, match="The value argument to log_prob must be a Tensor"):
        Normal(0.0, 1.0).log_prob(1.0)
    with pytest.raises(ValueError, match="Value is not broadcastable"):
        Normal(torch.zeros(3), 1.0).log_prob(torch.zeros(2))
    with pytest.raises(ValueError, match="right-most size of value must match event_shape"):
        MultivariateNormal(torch.zeros(3), torch.eye(3)).log_prob(torch.zeros(2))
    with pytest.raises(ValueError, match="constraint LessThan"):
        Uniform(1.0, 0.0)
    with pytest.raises(ValueError, match="constraint Simplex"):
        Categorical(probs=torch.tensor([0.5, -0.1]))
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        Bernoulli(probs=0.3, logits=0.1)
    with pytest.raises(ValueError, match="Exactly one of covariance_matrix"):
        MultivariateNormal(torch.zeros(2))
    # validate_args=False lets invalid parameters through, as in PyTorch.
    assert Normal(0.0, -1.0, validate_args=False).scale.item() == -1.0


def test_set_default_validate_args() -> None:
    with pytest.raises(ValueError):
        Distribution.set_default_validate_args(3)  # type: ignore[arg-type]
    Distribution.set_default_validate_args(False)
    try:
        assert Normal(0.0, -1.0).scale.item() == -1.0
    finally:
        Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        Normal(0.0, -1.0)


def test_reprs_match_pytorch() -> None:
    assert repr(Normal(0.0, 1.0)) == "Normal(loc: 0.0, scale: 1.0)"
    assert repr(Normal(torch.zeros(2), 1.0)) == (
        "Normal(loc: torch.Size([2]), scale: torch.Size([2]))")
    assert repr(Categorical(logits=torch.zeros(3))) == "Categorical(logits: torch.Size([3]))"
    assert repr(Independent(Normal(torch.zeros(2), 1.0), 1)) == (
        "Independent(Normal(loc: torch.Size([2]), scale: torch.Size([2])), 1)")
    assert repr(Beta(2.0, 3.0)) == "Beta()"
    assert repr(LogNormal(0.0, 1.0)) == "LogNormal()"
    assert repr(ComposeTransform([ExpTransform()])) == "ComposeTransform(\n    ExpTransform()\n)"


def test_transforms_invert_and_cache() -> None:
    x = T(-2.0, 0.1, 3.0)
    for transform in (ExpTransform(), SigmoidTransform(), TanhTransform(),
                      AffineTransform(1.0, -2.0),
                      ComposeTransform([AffineTransform(0.5, 0.3), TanhTransform()])):
        y = transform(x)
        assert torch.allclose(transform.inv(y), x, atol=1e-9), transform
        assert transform.inv.inv is transform
    cached = ExpTransform().with_cache(1)
    y = cached(x)
    assert cached.inv(y) is x
    assert AffineTransform(1.0, -2.0).sign == -1
    assert ExpTransform() == ExpTransform()
    assert ExpTransform().codomain is constraints.positive


def test_kl_registry_and_errors() -> None:
    class MyNormal(Normal):
        pass

    p, q = MyNormal(T(0.0), T(1.0)), Normal(T(1.0), T(2.0))
    # A subclass inherits its parent's formula.
    assert torch.allclose(kl_divergence(p, q), kl_divergence(Normal(T(0.0), T(1.0)), q))
    with pytest.raises(NotImplementedError):
        kl_divergence(Normal(0.0, 1.0), Gamma(1.0, 1.0))

    @register_kl(MyNormal, Normal)
    def _constant(p: Distribution, q: Distribution) -> torch.Tensor:
        return torch.tensor(42.0)

    assert kl_divergence(p, q).item() == 42.0
    with pytest.raises(TypeError):  # not a class (any class is accepted, as in PyTorch)
        register_kl("Normal", Normal)


def test_kl_is_zero_against_itself_and_positive_otherwise() -> None:
    pairs = [(Gamma(T(2.0), T(3.0)), Gamma(T(1.0), T(1.0))),
             (Dirichlet(T(1.0, 2.0)), Dirichlet(T(3.0, 1.0))),
             (Categorical(logits=T(0.0, 1.0)), Categorical(logits=T(1.0, 0.0)))]
    for p, q in pairs:
        assert abs(kl_divergence(p, p).sum().item()) < 1e-12
        assert kl_divergence(p, q).sum().item() > 0


def test_enumerate_support_and_entropy_of_impossible_categories() -> None:
    assert Bernoulli(0.3).enumerate_support().tolist() == [0.0, 1.0]
    assert Categorical(logits=torch.zeros(2, 3)).enumerate_support().shape == (3, 2)
    # 0 * log 0 counts as 0: the entropy of (0.5, 0, 0.5) is log 2.
    ent = Categorical(probs=T(0.5, 0.0, 0.5)).entropy().item()
    assert ent == pytest.approx(math.log(2.0), rel=1e-12)


def test_standard_gamma_generator_and_chunked_gradient(monkeypatch: pytest.MonkeyPatch) -> None:
    from torch._aten import gamma_sampling

    first = torch._standard_gamma(torch.full((6,), 0.7), generator=torch.Generator().manual_seed(9))
    again = torch._standard_gamma(torch.full((6,), 0.7), generator=torch.Generator().manual_seed(9))
    assert torch.equal(first, again)
    assert bool((first > 0).all())
    alpha = T(0.3, 1.0, 2.5, 10.0, 0.3, 2.5)
    x = T(0.05, 0.7, 3.1, 8.0, 1.5, 0.4)
    whole = gamma_sampling._dx_dalpha(alpha, x)
    # A grid bound that forces one element per chunk must give the same gradients.
    monkeypatch.setattr(gamma_sampling, "_GRID_ELEMENTS", 1)
    assert torch.allclose(gamma_sampling._dx_dalpha(alpha, x), whole, rtol=1e-12)


# Gradients of sums of the outputs w.r.t. each parameter; the stored values were made the same
# way as PYTORCH_VALUES (PyTorch 2.13, float64, ``[p.grad.tolist() for p in params]``).
def _grads(make: Any, values: list[Any]) -> list[Any]:
    """The gradients of ``make(*params).sum()`` for float64 parameters of ``values``."""
    ps = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in values]
    out = make(*ps)
    out.sum().backward()
    return [p.grad.tolist() for p in ps]


GRAD_CASES = {
 "normal_lp": lambda: _grads(lambda l, s: Normal(l, s).log_prob(torch.tensor([0.3, -2.], dtype=torch.float64)), [[0., 1.5], [1., 0.5]]),  # noqa: E501 - one case per line
 "gamma_ent": lambda: _grads(lambda c, r: Gamma(c, r).entropy(), [[0.5, 3.], [2., 0.7]]),
 "gamma_lp": lambda: _grads(lambda c, r: Gamma(c, r).log_prob(torch.tensor([0.4, 5.], dtype=torch.float64)), [[0.5, 3.], [2., 0.7]]),  # noqa: E501 - one case per line
 "beta_ent": lambda: _grads(lambda a, b: Beta(a, b).entropy(), [[0.5, 3.], [2., 0.7]]),
 "dir_kl": lambda: _grads(lambda a, b: kl_divergence(Dirichlet(a), Dirichlet(b)), [[0.5, 3., 1.], [2., 0.7, 1.]]),  # noqa: E501 - one case per line
 "mvn_lp": lambda: _grads(lambda l, c: MultivariateNormal(l, c).log_prob(torch.tensor([0.3, 0.2], dtype=torch.float64)), [[0.5, -1.], [[2., 0.5], [0.5, 1.]]]),  # noqa: E501 - one case per line
 "mvn_kl_tril": lambda: _grads(lambda l, c: kl_divergence(MultivariateNormal(l, scale_tril=c), MultivariateNormal(torch.zeros(2, dtype=torch.float64), torch.eye(2, dtype=torch.float64) * 2)), [[0.5, -1.], [[2., 0.], [0.5, 1.]]]),  # noqa: E501 - one case per line
 "cat_ent": lambda: _grads(lambda l: Categorical(logits=l).entropy(), [[1., 2., 0.5]]),
 "bern_lp": lambda: _grads(lambda l: Bernoulli(logits=l).log_prob(torch.tensor([1., 0.], dtype=torch.float64)), [[-1., 2.]]),  # noqa: E501 - one case per line
 "tanh_td_lp": lambda: _grads(lambda l, s: TransformedDistribution(Normal(l, s), [TanhTransform()]).log_prob(torch.tensor([0.3, -0.9], dtype=torch.float64)), [[0., 1.5], [1., 0.5]]),  # noqa: E501 - one case per line
}

PYTORCH_GRADS = {
    "normal_lp": [[0.3, -14.0], [-0.91, 96.0]],
    "gamma_ent": [[3.467401101036839, 0.21013186613610846], [-0.5, -1.4285714285714286]],
    "gamma_lp": [[1.7403664747072134, 0.3299786333969008], [-0.15000000000000002, -0.7142857142857144]],  # noqa: E501 - one case per line
    "beta_ent": [[2.7125799791567493, -0.26280377575202696], [-0.39975518896827966, 1.377279105470457]],  # noqa: E501 - one case per line
    "dir_kl": [[-7.6011833855585715, 0.7093682714954214, -0.19898008244805387], [2.6080117481179075, -1.9210905017983841, 0.22171738699801757]],  # noqa: E501 - one case per line
    "mvn_lp": [[-0.457142857142857, 1.4285714285714286], [[-0.18122448979591832, -0.1836734693877551], [-0.1836734693877551, 0.4489795918367347]]],  # noqa: E501 - one case per line
    "mvn_kl_tril": [[0.24999999999999997, -0.49999999999999994], [[0.4999999999999998, 0.0], [0.24999999999999994, -0.5000000000000001]]],  # noqa: E501 - one case per line
    "cat_ent": [[0.12911762744765531, -0.2775536187870562, 0.14843599133940064]],
    "bern_lp": [[0.7310585786300049, -0.8807970779778823]],
    "tanh_td_lp": [[0.30951960420311175, -11.88887795833288], [-0.904197614613949, 68.6727095540667]],  # noqa: E501 - one case per line
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_gradients_match_pytorch(name: str) -> None:
    for got, expected in zip(GRAD_CASES[name](), PYTORCH_GRADS[name], strict=True):
        assert torch.allclose(torch.tensor(got, dtype=torch.float64),
                              torch.tensor(expected, dtype=torch.float64),
                              rtol=1e-8, atol=1e-12), (name, got, expected)


# PyTorch 2.13's ValueError messages for these, recorded with newlines shown as " | ".
ERROR_CASES = {
    'MultivariateNormal(torch.zeros(2), torch.tensor([[1., 2.], [2., 1.]]))':
        'Expected parameter covariance_matrix (Tensor of shape (2, 2)) of distribution MultivariateNormal(loc: torch.Size([2]), covariance_matrix: torch.Size([2, 2])) to satisfy the constraint PositiveDefinite(), but found invalid values: | tensor([[1., 2.], |         [2., 1.]])',  # noqa: E501 - one case per line
    'Dirichlet(torch.tensor([1., -1.]))':
        'Expected parameter concentration (Tensor of shape (2,)) of distribution Dirichlet(concentration: torch.Size([2])) to satisfy the constraint IndependentConstraint(GreaterThan(lower_bound=0.0), 1), but found invalid values: | tensor([ 1., -1.])',  # noqa: E501 - one case per line
    'Bernoulli(probs=torch.tensor([1.5]))':
        'Expected parameter probs (Tensor of shape (1,)) of distribution Bernoulli(probs: tensor([1.5000])) to satisfy the constraint Interval(lower_bound=0.0, upper_bound=1.0), but found invalid values: | tensor([1.5000])',  # noqa: E501 - one case per line
    'Categorical(logits=torch.zeros(3)).log_prob(torch.tensor(3))':
        'Expected value argument (Tensor of shape ()) to be within the support (IntegerInterval(lower_bound=0, upper_bound=2)) of the distribution Categorical(logits: torch.Size([3])), but found invalid values: | 3',  # noqa: E501 - one case per line
    'Bernoulli(probs=0.3).log_prob(torch.tensor(0.5))':
        'Expected value argument (Tensor of shape ()) to be within the support (Boolean()) of the distribution Bernoulli(probs: 0.30000001192092896), but found invalid values: | 0.5',  # noqa: E501 - one case per line
    'Independent(Normal(torch.zeros(2), 1.), 2)':
        'Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), actual 2 vs 1',
    'Gamma(1., 1.).log_prob(torch.tensor(-1.))':
        'Expected value argument (Tensor of shape ()) to be within the support (GreaterThanEq(lower_bound=0.0)) of the distribution Gamma(concentration: 1.0, rate: 1.0), but found invalid values: | -1.0',  # noqa: E501 - one case per line
    'Dirichlet(torch.ones(2)).log_prob(torch.tensor([0.3, 0.3]))':
        'Expected value argument (Tensor of shape (2,)) to be within the support (Simplex()) of the distribution Dirichlet(concentration: torch.Size([2])), but found invalid values: | tensor([0.3000, 0.3000])',  # noqa: E501 - one case per line
    'TransformedDistribution(Normal(0., 1.), [ExpTransform()]).log_prob(torch.tensor(-1.))':
        'Expected value argument (Tensor of shape ()) to be within the support (GreaterThan(lower_bound=0.0)) of the distribution TransformedDistribution(), but found invalid values: | -1.0',  # noqa: E501 - one case per line
    'TransformedDistribution(Normal(0., 1.), 3)':
        'transforms must be a Transform or list, but was 3',
}


@pytest.mark.parametrize("expression", sorted(ERROR_CASES))
def test_error_messages_match_pytorch(expression: str) -> None:
    names = {"torch": torch, "MultivariateNormal": MultivariateNormal, "Dirichlet": Dirichlet,
             "Bernoulli": Bernoulli, "Categorical": Categorical, "Independent": Independent,
             "Normal": Normal, "Gamma": Gamma, "TransformedDistribution": TransformedDistribution,
             "ExpTransform": ExpTransform}
    with pytest.raises(ValueError) as info:
        eval(expression, names)
    assert str(info.value).replace("\n", " | ") == ERROR_CASES[expression]



def test_categorical_with_masked_logits() -> None:
    # Action masking sets logits to -inf: those categories are never drawn and add 0 entropy.
    logits = torch.tensor([[0.5, -inf, 1.0], [2.0, 0.0, -inf]], dtype=torch.float64)
    dist = Categorical(logits=logits)
    for row, (a, b) in enumerate([(0.5, 1.0), (2.0, 0.0)]):
        pa = math.exp(a) / (math.exp(a) + math.exp(b))
        want = -(pa * math.log(pa) + (1 - pa) * math.log(1 - pa))
        assert dist.entropy()[row].item() == pytest.approx(want, rel=1e-12)
    torch.manual_seed(6)
    samples = dist.sample((1000,))
    assert bool((samples[:, 0] != 1).all()) and bool((samples[:, 1] != 2).all())
    assert bool(torch.isfinite(kl_divergence(dist, Categorical(logits=torch.zeros(2, 3)))).all())
