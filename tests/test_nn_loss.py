"""Loss layers and their ``nn.functional`` forms: values against numpy re-implementations of
the documented formulas for every reduction, gradients against finite differences (float64),
CTC against a brute-force sum over alignments, reprs (pasted from PyTorch 2.13) and errors."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from numgrad import check_grad, check_gradgrad

import torch
import torch.nn as nn
import torch.nn.functional as F

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4)) * 2
X2 = RNG.standard_normal((3, 4))
PROB = RNG.uniform(0.02, 0.98, (3, 4))
TGT = RNG.uniform(0, 1, (3, 4))
SIGN = np.where(RNG.standard_normal((3, 4)) > 0, 1.0, -1.0)
COUNTS = RNG.poisson(2, (3, 4)).astype(np.float64)
W = RNG.uniform(0.5, 1.5, (3, 4))
CLS = np.array([2, 0, 3])


def _t(a):
    return torch.tensor(a)


def _reduce(loss, reduction):
    return {"none": loss, "sum": loss.sum(), "mean": loss.mean()}[reduction]


def _logsig(x):
    return -np.logaddexp(0, -x)


def _pdist(a, b, p, eps):
    return (np.abs(a - b + eps) ** p).sum(-1) ** (1 / p)


def _multilabel_margin(x, t):
    out = []
    for xr, tr in zip(x, t):
        listed = list(itertools.takewhile(lambda v: v >= 0, tr))
        total = sum(max(0.0, 1 - (xr[j] - xr[i])) for j in listed
                    for i in range(len(xr)) if i not in listed)
        out.append(total / len(xr))
    return np.array(out)


def _multi_margin(x, t, p, margin, w):
    out = []
    for xr, y in zip(x, t):
        out.append(sum(w[y] * max(0.0, margin - xr[y] + xr[i]) ** p
                       for i in range(len(xr)) if i != y) / len(xr))
    return np.array(out)


def _cos(a, b):
    return (a * b).sum(-1) / np.sqrt(((a * a).sum(-1) + 1e-12) * ((b * b).sum(-1) + 1e-12))


# name -> (torch loss of (input, reduction), numpy unreduced loss of input)
LOSSES = {
    "l1": (lambda x, r: F.l1_loss(x, _t(X2), reduction=r), lambda x: np.abs(x - X2)),
    "smooth_l1": (lambda x, r: F.smooth_l1_loss(x, _t(X2), reduction=r, beta=0.5),
                  lambda x: np.where(np.abs(x - X2) < 0.5, 0.5 * (x - X2) ** 2 / 0.5,
                                     np.abs(x - X2) - 0.25)),
    "huber": (lambda x, r: F.huber_loss(x, _t(X2), reduction=r, delta=0.7),
              lambda x: np.where(np.abs(x - X2) < 0.7, 0.5 * (x - X2) ** 2,
                                 0.7 * (np.abs(x - X2) - 0.35))),
    "bce": (lambda x, r: F.binary_cross_entropy(torch.sigmoid(x), _t(TGT), _t(W[0]),
                                                reduction=r),
            lambda x: -W[0] * (TGT * _logsig(x) + (1 - TGT) * _logsig(-x))),
    "bce_logits": (lambda x, r: F.binary_cross_entropy_with_logits(
        x, _t(TGT), _t(W), reduction=r, pos_weight=_t(W[1])),
        lambda x: W * ((1 - TGT) * x - (1 + (W[1] - 1) * TGT) * _logsig(x))),
    "kl_div": (lambda x, r: F.kl_div(x, _t(TGT), reduction=r),
               lambda x: TGT * (np.log(TGT) - x)),
    "kl_div_log_target": (lambda x, r: F.kl_div(x, _t(X2), reduction=r, log_target=True),
                          lambda x: np.exp(X2) * (X2 - x)),
    "poisson": (lambda x, r: F.poisson_nll_loss(x, _t(COUNTS), reduction=r),
                lambda x: np.exp(x) - COUNTS * x),
    "poisson_full": (
        lambda x, r: F.poisson_nll_loss(x.abs(), _t(COUNTS), log_input=False, full=True,
                                        reduction=r, eps=1e-3),
        lambda x: np.abs(x) - COUNTS * np.log(np.abs(x) + 1e-3) + np.where(
            COUNTS > 1, COUNTS * np.log(np.maximum(COUNTS, 1)) - COUNTS
            + 0.5 * np.log(2 * np.pi * np.maximum(COUNTS, 1)), 0)),
    "gaussian": (lambda x, r: F.gaussian_nll_loss(x, _t(X2), _t(W[:, :1]), full=True,
                                                  reduction=r),
                 lambda x: 0.5 * (np.log(W[:, :1]) + (x - X2) ** 2 / W[:, :1])
                 + 0.5 * np.log(2 * np.pi)),
    "gaussian_homoscedastic": (
        lambda x, r: F.gaussian_nll_loss(x, _t(X2), _t(W[:, 0]), reduction=r),
        lambda x: 0.5 * (np.log(W[:, :1]) + (x - X2) ** 2 / W[:, :1])),
    "margin_ranking": (lambda x, r: F.margin_ranking_loss(x, _t(X2), _t(SIGN), 0.3,
                                                          reduction=r),
                       lambda x: np.maximum(0, -SIGN * (x - X2) + 0.3)),
    "hinge_embedding": (lambda x, r: F.hinge_embedding_loss(x, _t(SIGN), 2.0, reduction=r),
                        lambda x: np.where(SIGN == 1, x, np.maximum(0, 2.0 - x))),
    "soft_margin": (lambda x, r: F.soft_margin_loss(x, _t(SIGN), reduction=r),
                    lambda x: np.log1p(np.exp(-SIGN * x))),
    "cosine_embedding": (lambda x, r: F.cosine_embedding_loss(x, _t(X2), _t(SIGN[:, 0]), 0.1,
                                                              reduction=r),
                         lambda x: np.where(SIGN[:, 0] == 1, 1 - _cos(x, X2),
                                            np.maximum(0, _cos(x, X2) - 0.1))),
    "multilabel_margin": (
        lambda x, r: F.multilabel_margin_loss(x, _t(np.array([[1, 3, -1, 0], [2, -1, 1, 1],
                                                              [0, 1, 2, 3]])), reduction=r),
        lambda x: _multilabel_margin(x, [[1, 3, -1, 0], [2, -1, 1, 1], [0, 1, 2, 3]])),
    "multilabel_soft_margin": (
        lambda x, r: F.multilabel_soft_margin_loss(x, _t(TGT), _t(W[0]), reduction=r),
        lambda x: (-W[0] * (TGT * _logsig(x) + (1 - TGT) * _logsig(-x))).mean(-1)),
    "multi_margin": (lambda x, r: F.multi_margin_loss(x, _t(CLS), reduction=r),
                     lambda x: _multi_margin(x, CLS, 1, 1.0, np.ones(4))),
    "multi_margin_p2": (lambda x, r: F.multi_margin_loss(x, _t(CLS), 2, 0.7, _t(W[0]),
                                                         reduction=r),
                        lambda x: _multi_margin(x, CLS, 2, 0.7, W[0])),
    "triplet": (lambda x, r: F.triplet_margin_loss(x, _t(X2), _t(W), 2.0, 1.5, reduction=r),
                lambda x: np.maximum(0, 2.0 + _pdist(x, X2, 1.5, 1e-6)
                                     - _pdist(x, W, 1.5, 1e-6))),
    "triplet_swap": (
        lambda x, r: F.triplet_margin_loss(x, _t(X2), _t(W), 2.0, swap=True, reduction=r),
        lambda x: np.maximum(0, 2.0 + _pdist(x, X2, 2, 1e-6) - np.minimum(
            _pdist(x, W, 2, 1e-6), _pdist(X2, W, 2, 1e-6)))),
    "triplet_distance": (
        lambda x, r: F.triplet_margin_with_distance_loss(
            x, _t(X2), _t(W), distance_function=lambda a, b: ((a - b) ** 2).sum(-1),
            margin=3.0, reduction=r),
        lambda x: np.maximum(0, 3.0 + ((x - X2) ** 2).sum(-1) - ((x - W) ** 2).sum(-1))),
}


@pytest.mark.filterwarnings("ignore:reduction. 'mean' divides the total loss")
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_values_match_numpy(name, reduction):
    fn, ref = LOSSES[name]
    got = fn(_t(X), reduction)
    want = _reduce(ref(X), reduction)
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-12)


def test_float32_inputs_give_float32_losses():
    x, y, t, s = (_t(a).float() for a in (X, X2, TGT, SIGN))
    losses = [
        F.l1_loss(x, y), F.smooth_l1_loss(x, y), F.huber_loss(x, y),
        F.binary_cross_entropy(torch.sigmoid(x), t), F.binary_cross_entropy_with_logits(x, t),
        F.kl_div(x, t, reduction="sum"), F.poisson_nll_loss(x, t), F.gaussian_nll_loss(x, y, t),
        F.margin_ranking_loss(x, y, s), F.hinge_embedding_loss(x, s), F.soft_margin_loss(x, s),
        F.cosine_embedding_loss(x, y, s[:, 0]), F.multilabel_soft_margin_loss(x, t),
        F.multi_margin_loss(x, _t(CLS)), F.multilabel_margin_loss(x, _t(CLS).reshape(3, 1)
                                                                  .expand(3, 4)),
        F.triplet_margin_loss(x, y, t),
    ]
    for loss in losses:
        assert loss.dtype == torch.float32 and loss.shape == ()


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_gradients_match_finite_differences(name):
    fn, _ = LOSSES[name]
    check_grad(lambda x: fn(x, "none"), _t(X), atol=1e-6)


@pytest.mark.parametrize("name", ["bce_logits", "smooth_l1", "gaussian", "poisson",
                                  "multilabel_soft_margin", "cosine_embedding", "triplet"])
def test_second_derivatives_match_finite_differences(name):
    fn, _ = LOSSES[name]
    check_gradgrad(lambda x: fn(x, "sum"), _t(X), atol=1e-5, rtol=1e-4)


def test_gradients_with_respect_to_targets_and_variances():
    check_grad(lambda y: F.kl_div(_t(X), y, reduction="sum", log_target=True), _t(X2))
    check_grad(lambda y: F.binary_cross_entropy_with_logits(_t(X), y), _t(TGT))
    check_grad(lambda v: F.gaussian_nll_loss(_t(X), _t(X2), v), _t(W))
    check_grad(lambda a, b: F.cosine_embedding_loss(a, b, _t(SIGN[:, 0])), _t(X), _t(X2))
    check_grad(lambda a, p, n: F.triplet_margin_loss(a, p, n, margin=3.0), _t(X), _t(X2),
               _t(W))


def test_legacy_size_average_and_reduce():
    x, y = _t(X), _t(X2)
    cases = [((None, False), "none"), ((False, None), "sum"), ((True, True), "mean"),
             ((False, True), "sum")]
    for (size_average, reduce), reduction in cases:
        for fn in (F.l1_loss, F.smooth_l1_loss, F.soft_margin_loss):
            with pytest.warns(UserWarning, match="size_average and reduce"):
                got = fn(x, y, size_average=size_average, reduce=reduce)
            torch.testing.assert_close(got, fn(x, y, reduction=reduction))
        with pytest.warns(UserWarning, match="size_average and reduce"):
            m = nn.SmoothL1Loss(size_average=size_average, reduce=reduce)
        assert m.reduction == reduction


def test_bce_clamps_log_at_minus_100():
    p = torch.tensor([0.0, 1.0, 0.0, 1.0], requires_grad=True)
    y = torch.tensor([0.0, 1.0, 1.0, 0.0])
    loss = F.binary_cross_entropy(p, y, reduction="none")
    np.testing.assert_allclose(loss.detach().numpy(), [0.0, 0.0, 100.0, 100.0])
    (g,) = torch.autograd.grad(loss.sum(), p)
    assert bool(torch.isfinite(g).all())


def test_bce_with_logits_is_stable_for_large_logits():
    x = torch.tensor([-1000.0, 1000.0, 50.0], dtype=torch.float64, requires_grad=True)
    y = torch.tensor([1.0, 0.0, 1.0], dtype=torch.float64)
    loss = F.binary_cross_entropy_with_logits(x, y, reduction="none")
    np.testing.assert_allclose(loss.detach().numpy(), [1000.0, 1000.0, math.log1p(math.exp(-50))])
    (g,) = torch.autograd.grad(loss.sum(), x)
    np.testing.assert_allclose(g.numpy(), [-1.0, 1.0, -1 / (1 + math.exp(50))], atol=1e-30)


def test_kl_div_batchmean_and_mean_warning():
    x, y = _t(X), _t(TGT)
    total = F.kl_div(x, y, reduction="sum")
    torch.testing.assert_close(F.kl_div(x, y, reduction="batchmean"), total / 3)
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        torch.testing.assert_close(F.kl_div(x, y), total / 12)
    zero = F.kl_div(x, torch.zeros(3, 4, dtype=torch.float64), reduction="sum")
    assert float(zero) == 0.0  # 0 * log 0 is 0


def test_weighted_l1_and_huber_means():
    x, y, w = _t(np.array([1.0, 2.0, 3.0])), torch.zeros(3, dtype=torch.float64), \
        _t(np.array([1.0, 2.0, 0.5]))
    # values printed by PyTorch 2.13: l1 takes the weighted mean, huber the plain mean
    assert float(F.l1_loss(x, y, weight=w)) == pytest.approx(1.8571428571428572)
    assert float(F.huber_loss(x, y, weight=w)) == pytest.approx(1.5833333333333333)


def test_unbatched_class_losses_return_scalars():
    x = _t(X[0])
    assert F.multilabel_margin_loss(x, torch.tensor([1, 0, -1, 2]), reduction="none").shape == ()
    assert F.multi_margin_loss(x, torch.tensor(1), reduction="none").shape == ()
    assert F.cosine_embedding_loss(x, _t(X2[0]), torch.tensor(1), reduction="none").shape == ()
    torch.testing.assert_close(F.multi_margin_loss(x, torch.tensor(2)),
                               F.multi_margin_loss(x.unsqueeze(0), torch.tensor([2])))


def test_gaussian_nll_clamps_variance_value_only():
    x, y = torch.zeros(2, dtype=torch.float64), torch.ones(2, dtype=torch.float64)
    var = torch.tensor([0.0, 1.0], dtype=torch.float64, requires_grad=True)
    loss = F.gaussian_nll_loss(x, y, var, eps=1e-2, reduction="none")
    np.testing.assert_allclose(loss.detach().numpy(), [0.5 * (math.log(1e-2) + 100), 0.5])
    (g,) = torch.autograd.grad(loss.sum(), var)
    assert bool(torch.isfinite(g).all())
    torch.testing.assert_close(F.gaussian_nll_loss(x, y, 2.0),
                               F.gaussian_nll_loss(x, y, torch.full((2,), 2.0,
                                                                    dtype=torch.float64)))


def test_gaussian_nll_variance_shapes():
    x, y = _t(X), _t(X2)
    for shape in [(3, 4), (3,), (3, 1), (1, 4)]:
        var = torch.full(shape, 0.5, dtype=torch.float64)
        torch.testing.assert_close(F.gaussian_nll_loss(x, y, var, reduction="none"),
                                   F.gaussian_nll_loss(x, y, 0.5, reduction="none"))
    for shape in [(4,), (1,), (2, 3, 4)]:
        with pytest.raises(ValueError, match="var is of incorrect size"):
            F.gaussian_nll_loss(x, y, torch.ones(shape, dtype=torch.float64))


def test_modules_match_functions():
    x, y, s, w = _t(X), _t(X2), _t(SIGN), _t(W[0])
    t = _t(TGT)
    pairs = [
        (nn.L1Loss(reduction="sum")(x, y), F.l1_loss(x, y, reduction="sum")),
        (nn.SmoothL1Loss(beta=0.5)(x, y), F.smooth_l1_loss(x, y, beta=0.5)),
        (nn.HuberLoss(delta=2.0)(x, y), F.huber_loss(x, y, delta=2.0)),
        (nn.BCELoss(weight=w)(torch.sigmoid(x), t),
         F.binary_cross_entropy(torch.sigmoid(x), t, w)),
        (nn.BCEWithLogitsLoss(pos_weight=w)(x, t),
         F.binary_cross_entropy_with_logits(x, t, pos_weight=w)),
        (nn.KLDivLoss(reduction="batchmean", log_target=True)(x, y),
         F.kl_div(x, y, reduction="batchmean", log_target=True)),
        (nn.PoissonNLLLoss(full=True)(x, _t(COUNTS)), F.poisson_nll_loss(x, _t(COUNTS),
                                                                          full=True)),
        (nn.GaussianNLLLoss(eps=1e-3)(x, y, t), F.gaussian_nll_loss(x, y, t, eps=1e-3)),
        (nn.MarginRankingLoss(0.5)(x, y, s), F.margin_ranking_loss(x, y, s, 0.5)),
        (nn.HingeEmbeddingLoss(2.0)(x, s), F.hinge_embedding_loss(x, s, 2.0)),
        (nn.CosineEmbeddingLoss(0.5)(x, y, s[:, 0]), F.cosine_embedding_loss(x, y, s[:, 0],
                                                                             0.5)),
        (nn.MultiLabelSoftMarginLoss(w)(x, t), F.multilabel_soft_margin_loss(x, t, w)),
        (nn.MultiMarginLoss(2, 0.5, w)(x, _t(CLS)), F.multi_margin_loss(x, _t(CLS), 2, 0.5, w)),
        (nn.SoftMarginLoss()(x, s), F.soft_margin_loss(x, s)),
        (nn.TripletMarginLoss(p=1, swap=True)(x, y, t),
         F.triplet_margin_loss(x, y, t, p=1, swap=True)),
        (nn.TripletMarginWithDistanceLoss(margin=2.0)(x, y, t),
         F.triplet_margin_loss(x, y, t, margin=2.0)),
    ]
    for got, want in pairs:
        torch.testing.assert_close(got, want)
    m = nn.BCEWithLogitsLoss(weight=w, pos_weight=w)
    assert sorted(m.state_dict()) == ["pos_weight", "weight"]


# --------------------------------------------------------------------------- CTC


def _ctc_brute_force(lp, target, blank=0):
    """-log of the summed probability of every path over the T steps of ``lp`` (T, C) whose
    collapse (merge repeats, drop blanks) is ``target``."""
    steps, classes = lp.shape
    total = 0.0
    for path in itertools.product(range(classes), repeat=steps):
        collapsed = [c for i, c in enumerate(path) if c != blank and (i == 0 or path[i - 1] != c)]
        if collapsed == list(target):
            total += math.exp(sum(lp[t, c] for t, c in enumerate(path)))
    return -math.log(total) if total > 0 else math.inf


def _ctc_inputs(seed=0, steps=5, batch=3, classes=4):
    rng = np.random.default_rng(seed)
    logits = rng.standard_normal((steps, batch, classes))
    lp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    targets = np.array([[1, 2, 2], [3, 0, 0], [1, 1, 3]])
    return logits, lp, targets, [5, 4, 5], [3, 1, 2]


def test_ctc_matches_brute_force_for_every_reduction():
    _, lp, targets, in_lens, tg_lens = _ctc_inputs()
    want = np.array([_ctc_brute_force(lp[:in_lens[n], n], targets[n, :tg_lens[n]])
                     for n in range(3)])
    args = (_t(lp), _t(targets), torch.tensor(in_lens), torch.tensor(tg_lens))
    np.testing.assert_allclose(F.ctc_loss(*args, reduction="none").numpy(), want, rtol=1e-10)
    np.testing.assert_allclose(F.ctc_loss(*args, reduction="sum").numpy(), want.sum(),
                               rtol=1e-10)
    np.testing.assert_allclose(F.ctc_loss(*args).numpy(), (want / np.array(tg_lens)).mean(),
                               rtol=1e-10)
    np.testing.assert_allclose(nn.CTCLoss(reduction="sum")(*args).numpy(), want.sum(),
                               rtol=1e-10)


def test_ctc_blank_index_and_concatenated_targets():
    _, lp, targets, in_lens, tg_lens = _ctc_inputs(1)
    padded = F.ctc_loss(_t(lp), _t(targets), in_lens, tg_lens, blank=3, reduction="none")
    flat = np.concatenate([targets[n, :tg_lens[n]] for n in range(3)])
    concatenated = F.ctc_loss(_t(lp), _t(flat), tuple(in_lens), tuple(tg_lens), blank=3,
                              reduction="none")
    torch.testing.assert_close(padded, concatenated)
    want = _ctc_brute_force(lp[:4, 1], [3], blank=2)
    got = F.ctc_loss(_t(lp[:, 1]), _t(np.array([3])), [4], [1], blank=2, reduction="none")
    assert got.shape == () and float(got) == pytest.approx(want, rel=1e-10)


def test_ctc_gradient_through_log_softmax_matches_finite_differences():
    logits = np.random.default_rng(2).standard_normal((4, 2, 3))
    targets = np.array([[1, 2], [2, 2]])
    check_grad(lambda z: F.ctc_loss(z.log_softmax(2), _t(targets), [4, 3], [2, 1],
                                    reduction="mean"), _t(logits), atol=1e-6)


def test_ctc_gradient_convention_of_pytorch():
    # PyTorch's backward returns exp(log_probs) - posterior: zero sum over classes per step
    # that the sample uses, and exactly zero past its input length
    _, lp, targets, in_lens, tg_lens = _ctc_inputs(3)
    x = _t(lp).requires_grad_(True)
    (g,) = torch.autograd.grad(F.ctc_loss(x, _t(targets), in_lens, tg_lens, reduction="sum"), x)
    np.testing.assert_allclose(g.sum(-1).numpy(), 0.0, atol=1e-12)
    assert bool((g[4, 1] == 0).all())


def test_ctc_impossible_alignment_and_zero_infinity():
    _, lp, targets, _, _ = _ctc_inputs()
    args = (_t(lp), _t(targets), [2, 4, 5], [3, 1, 2])  # 2 steps cannot emit 3 labels
    loss = F.ctc_loss(*args, reduction="none")
    assert math.isinf(float(loss[0])) and math.isfinite(float(loss[1]))
    x = _t(lp).requires_grad_(True)
    zeroed = F.ctc_loss(x, *args[1:], reduction="none", zero_infinity=True)
    assert float(zeroed[0]) == 0.0
    torch.testing.assert_close(zeroed[1:], loss[1:])
    (g,) = torch.autograd.grad(zeroed.sum(), x)
    assert bool(torch.isfinite(g).all()) and bool((g[:, 0] == 0).all())
    # repeated labels need a blank between them: 3 steps for "1 1"
    one_one = F.ctc_loss(_t(lp[:, 0]), _t(np.array([1, 1])), [2], [2], reduction="none")
    assert math.isinf(float(one_one))


def test_ctc_empty_inputs_and_targets():
    lp = torch.linspace(-3, -0.5, 30, dtype=torch.float64).reshape(5, 2, 3).log_softmax(2)
    targets = torch.tensor([[1, 2], [1, 1]])
    # values printed by PyTorch 2.13
    np.testing.assert_allclose(F.ctc_loss(lp, targets, [0, 5], [0, 2], reduction="none"),
                               [0.0, 2.9849], atol=1e-4)
    loss = F.ctc_loss(lp, targets, [0, 5], [1, 0], reduction="none")
    assert math.isinf(float(loss[0])) and float(loss[1]) == pytest.approx(5.9365, abs=1e-4)
    # "mean" divides by max(target length, 1)
    assert float(F.ctc_loss(lp, targets, [5, 5], [0, 0])) == pytest.approx(5.9365, abs=1e-4)


def test_ctc_errors():
    _, lp, targets, _, _ = _ctc_inputs()
    with pytest.raises(RuntimeError, match="input_lengths to have value at most 5"):
        F.ctc_loss(_t(lp), _t(targets), [6, 4, 5], [3, 1, 2])
    with pytest.raises(RuntimeError, match="blank must be in label range"):
        F.ctc_loss(_t(lp), _t(targets), [5, 4, 5], [3, 1, 2], blank=4)
    with pytest.raises(ValueError, match="is not a valid value for reduction"):
        F.ctc_loss(_t(lp), _t(targets), [5, 4, 5], [3, 1, 2], reduction="avg")


# --------------------------------------------------------------------------- reprs, errors

REPRS = [
    "SmoothL1Loss(beta=0.5)", "HuberLoss(delta=2.0)", "BCELoss()", "BCEWithLogitsLoss()",
    "KLDivLoss(reduction='batchmean', log_target=True)", "PoissonNLLLoss(full=True)",
    "GaussianNLLLoss(full=True, eps=1e-3)", "MarginRankingLoss(0.5)", "HingeEmbeddingLoss(2.0)",
    "CosineEmbeddingLoss(0.5)", "MultiLabelMarginLoss()", "MultiLabelSoftMarginLoss()",
    "MultiMarginLoss(p=2, margin=0.5)", "SoftMarginLoss()", "TripletMarginLoss(swap=True)",
    "CTCLoss(blank=1, zero_infinity=True)", "L1Loss(reduction='none')",
]


@pytest.mark.parametrize("expr", REPRS)
def test_reprs_match_pytorch(expr):
    # PyTorch's loss modules show no options: the repr is the class name and "()"
    assert repr(eval("nn." + expr)) == expr.split("(")[0] + "()"


def test_triplet_with_distance_repr_shows_its_distance_module():
    if not hasattr(nn, "PairwiseDistance"):
        pytest.skip("nn.PairwiseDistance is not available yet")
    assert repr(nn.TripletMarginWithDistanceLoss()) == (
        "TripletMarginWithDistanceLoss(\n  (distance_function): PairwiseDistance()\n)")


ONES = torch.ones(2, 3)
ERRORS = [
    (lambda: F.binary_cross_entropy(torch.tensor([2.0]), torch.tensor([1.0])), RuntimeError,
     "all elements of input should be between 0 and 1"),
    (lambda: F.binary_cross_entropy(torch.full((2,), 0.5), torch.ones(3)), ValueError,
     "is deprecated. Please ensure they have the same size"),
    (lambda: F.binary_cross_entropy_with_logits(torch.ones(2), torch.ones(3)), ValueError,
     r"Target size \(torch.Size\(\[3\]\)\) must be the same as input size"),
    (lambda: F.multi_margin_loss(ONES, torch.tensor([0, 1]), p=3), ValueError,
     "only p == 1 and p == 2 supported"),
    (lambda: F.multi_margin_loss(ONES, torch.tensor([0, 1]), weight=torch.ones(1, 3)),
     ValueError, "weight must be one-dimensional"),
    (lambda: F.margin_ranking_loss(torch.ones(2), torch.ones(2, 1), torch.ones(2)),
     RuntimeError, "All input tensors should have same dimension"),
    (lambda: F.triplet_margin_loss(ONES, torch.ones(3), ONES), RuntimeError,
     "anchor 2D, positive 1D, and negative 2D inputs"),
    (lambda: F.triplet_margin_with_distance_loss(ONES, ONES, ONES, margin=0), ValueError,
     "margin must be greater than 0, got 0"),
    (lambda: F.gaussian_nll_loss(ONES, ONES, torch.ones(3, 3)), ValueError,
     "var is of incorrect size"),
    (lambda: F.gaussian_nll_loss(ONES, ONES, -ONES), ValueError,
     "var has negative entry/entries"),
    (lambda: F.gaussian_nll_loss(ONES, ONES, ONES, reduction="x"), ValueError, "x is not valid"),
    (lambda: F.poisson_nll_loss(ONES, ONES, reduction="x"), ValueError,
     "x is not a valid value for reduction"),
    (lambda: F.kl_div(ONES, ONES, reduction="x"), ValueError, "not a valid value"),
    (lambda: F.smooth_l1_loss(ONES, ONES, beta=-1), RuntimeError,
     "does not support negative values for beta"),
    (lambda: F.huber_loss(ONES, ONES, delta=0), RuntimeError, "non-positive values for delta"),
    (lambda: F.multilabel_margin_loss(ONES, torch.ones(2, 2, dtype=torch.int64)), RuntimeError,
     r"inconsistent target size: \[2, 2\] for input of size: \[2, 3\]"),
    (lambda: F.cosine_embedding_loss(ONES, ONES, torch.tensor(1.0)), RuntimeError,
     "0D target tensor expects 1D input tensors"),
    (lambda: F.l1_loss(ONES, ONES, weight=torch.ones(3)), ValueError,
     "Weights and input must have the same size"),
    (lambda: nn.MultiMarginLoss(weight=torch.ones(2, 2)), ValueError,
     "expected weight to be None or 1D tensor, got 2D"),
    (lambda: nn.TripletMarginLoss(margin=0), ValueError,
     "expected margin to be greater than 0, got 0"),
]


@pytest.mark.parametrize(("call", "error", "match"), ERRORS, ids=[e[2][:40] for e in ERRORS])
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_size_mismatch_warns():
    with pytest.warns(UserWarning, match="Using a target size"):
        F.l1_loss(torch.ones(2, 3), torch.ones(3))
    with pytest.warns(UserWarning, match="Using a target size"):
        F.smooth_l1_loss(torch.ones(2, 3), torch.ones(3))


@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_every_target_ignored_gives_zero_gradients(smoothing):
    # PyTorch: the mean over no targets is NaN, but the gradient is zero (not NaN).
    x = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    target = torch.tensor([1, 1, 1])
    F.nll_loss(x, target, ignore_index=1).backward()
    assert x.grad.tolist() == [[0.0] * 4] * 3
    x.grad = None
    loss = F.cross_entropy(x, target, ignore_index=1, label_smoothing=smoothing)
    assert math.isnan(loss.item())
    loss.backward()
    assert x.grad.tolist() == [[0.0] * 4] * 3
