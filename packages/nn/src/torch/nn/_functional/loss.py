"""Loss functions of ``torch.nn.functional`` beyond the first few in ``functional.py``.

Each is a composite over differentiable core ops with PyTorch's arguments, checks and
``reduction`` rules (legacy ``size_average``/``reduce`` map to a ``reduction`` with a warning).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import Tensor
from torch.nn.functional import _legacy_reduction, _reduce, _reduction_enum

from .activation import logsigmoid

__all__ = [
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "cosine_embedding_loss",
    "ctc_loss", "gaussian_nll_loss", "hinge_embedding_loss", "huber_loss", "kl_div", "l1_loss",
    "margin_ranking_loss", "multi_margin_loss", "multilabel_margin_loss",
    "multilabel_soft_margin_loss", "poisson_nll_loss", "smooth_l1_loss", "soft_margin_loss",
    "triplet_margin_loss", "triplet_margin_with_distance_loss",
]


def _resolve(size_average: bool | None, reduce: bool | None, reduction: str) -> str:
    """The effective ``reduction``, checked (ValueError for an unknown one)."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    _reduction_enum(reduction)
    return reduction


_aten = torch.ops.aten  # the loss operators PyTorch's functions call (what a mode sees)


def _broadcast(input: Tensor, target: Tensor) -> tuple[Tensor, Tensor]:
    """The operands at their common shape (the operators take one shape), as PyTorch's
    functions expand them first."""
    if input.shape == target.shape:
        return input, target
    expanded = torch.broadcast_tensors(input, target)
    return expanded[0], expanded[1]


def _warn_size(input: Tensor, target: Tensor) -> None:
    if target.shape != input.shape:
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input "
                      f"size ({input.shape}). This will likely lead to incorrect results due "
                      "to broadcasting. Please ensure they have the same size.", UserWarning,
                      stacklevel=3)


def _weighted_mean(loss: Tensor, weight: Tensor | None, reduction: str) -> Tensor:
    """``reduction`` of ``loss * weight``; with a weight, "mean" is the weighted mean."""
    if weight is None:
        return _reduce(loss, reduction)
    loss = loss * weight
    if reduction == "mean":
        return loss.sum() / weight.expand(loss.shape).sum()
    return _reduce(loss, reduction)


# --------------------------------------------------------------------------- regression


def l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
            reduce: bool | None = None, reduction: str = "mean",
            weight: Tensor | None = None) -> Tensor:
    """Mean absolute error ``|input - target|``, optionally weighted element-wise."""
    _warn_size(input, target)
    reduction = _resolve(size_average, reduce, reduction)
    if weight is not None and weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    return _weighted_mean((input - target).abs(), weight, reduction)


def smooth_l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                   reduce: bool | None = None, reduction: str = "mean",
                   beta: float = 1.0) -> Tensor:
    """``0.5 d^2 / beta`` where ``|d| < beta``, ``|d| - 0.5 beta`` elsewhere, ``d = input -
    target``: PyTorch's ``aten::smooth_l1_loss`` (the L1 loss for ``beta == 0``)."""
    _warn_size(input, target)
    reduction = _resolve(size_average, reduce, reduction)
    input, target = _broadcast(input, target)
    if beta == 0:  # PyTorch's l1_loss, itself a composite
        return _reduce((input - target).abs(), reduction)
    return _aten.smooth_l1_loss.default(input, target, _reduction_enum(reduction), beta)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:
    """``0.5 d^2`` where ``|d| < delta``, ``delta (|d| - 0.5 delta)`` elsewhere:
    ``aten::huber_loss``; a ``weight`` (of the input's size) multiplies each element of the
    unreduced loss before the plain reduction."""
    _warn_size(input, target)
    enum = _reduction_enum(reduction)
    input, target = _broadcast(input, target)
    if weight is None:
        return _aten.huber_loss.default(input, target, enum, delta)
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    loss = _aten.huber_loss.default(input, target, 0, delta) * weight
    return _reduce(loss, reduction)


# --------------------------------------------------------------------------- probabilistic


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Tensor:
    """``-w (y log x + (1 - y) log(1 - x))`` for probabilities ``x``; each log is clamped to
    ``>= -100`` so that ``x`` in {0, 1} gives a finite loss."""
    reduction = _resolve(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({target.shape}) that is different to the "
                         f"input size ({input.shape}) is deprecated. Please ensure they have "
                         "the same size.")
    if weight is not None:  # the operator takes a weight of the target's size
        weight = weight.expand(torch.broadcast_shapes(weight.shape, target.shape))
    # the operator checks that the input lies in [0, 1], as PyTorch's kernel does
    return _aten.binary_cross_entropy.default(input, target, weight, _reduction_enum(reduction))


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,
                                     weight: Tensor | None = None,
                                     size_average: bool | None = None,
                                     reduce: bool | None = None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """Binary cross-entropy of ``sigmoid(input)``, computed from the logits without overflow:
    ``(1 - y) x - (1 + (pos_weight - 1) y) log(sigmoid(x))``."""
    reduction = _resolve(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({input.shape})")
    return _aten.binary_cross_entropy_with_logits.default(input, target, weight, pos_weight,
                                                          _reduction_enum(reduction))


def kl_div(input: Tensor, target: Tensor, size_average: bool | None = None,
           reduce: bool | None = None, reduction: str = "mean",
           log_target: bool = False) -> Tensor:
    """Kullback-Leibler divergence ``target * (log(target) - input)`` of log-probabilities
    ``input``; "batchmean" divides the sum by the batch size (the true KL divergence)."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    elif reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and "
                      "the support size.'batchmean' divides only by the batch size, and aligns "
                      "with the KL div math definition.'mean' will be changed to behave the "
                      "same as 'batchmean' in the next major release.", UserWarning,
                      stacklevel=2)
    if reduction not in ("none", "mean", "sum", "batchmean"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    # (operands in PyTorch's order, so a dispatch mode sees the same sequence of calls)
    if log_target:
        gap = target - input
        loss = torch.exp(target) * gap
    else:
        cross = target * input
        loss = torch.xlogy(target, target) - cross
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.ndim else loss.sum()
    return _reduce(loss, reduction)


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average: bool | None = None, eps: float = 1e-8,
                     reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of ``target ~ Poisson(rate)``: ``exp(x) - y x`` for a log-rate
    ``x`` (``log_input``), else ``x - y log(x + eps)``; ``full`` adds Stirling's approximation
    of ``log(y!)`` where ``y > 1``."""
    reduction = _resolve(size_average, reduce, reduction)
    if log_input:
        loss = torch.exp(input) - target * input
    else:
        loss = input - target * torch.log(input + eps)
    if full:
        safe = torch.where(target > 1, target, 1)
        stirling = safe * torch.log(safe) - safe + 0.5 * torch.log(2 * math.pi * safe)
        loss = loss + torch.where(target > 1, stirling, 0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input: Tensor, target: Tensor, var: Tensor | float, full: bool = False,
                      eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of ``target ~ N(input, var)``:
    ``0.5 (log(max(var, eps)) + (input - target)^2 / max(var, eps))`` (+ ``0.5 log(2 pi)``
    with ``full``). ``var`` may have the input's shape, lack its last dim, differ from it in
    one dim where it has size 1, or be a float."""
    if not isinstance(var, Tensor):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = torch.full_like(input, float(var))
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if var.shape != input.shape:
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)  # one variance per sample, shared by the last dim
        elif input.ndim == var.ndim and sum(
                v for i, v in zip(input.shape, var.shape) if i != v) == 1:
            pass  # a single mismatched dim, of size 1 in var: it broadcasts
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    # clamp the value but not the gradient, as PyTorch does (an in-place clamp under no_grad)
    var = var + (var.detach().clamp(min=eps) - var.detach())
    diff = input - target
    loss = 0.5 * (torch.log(var) + diff * diff / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


# --------------------------------------------------------------------------- margins


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                        size_average: bool | None = None, reduce: bool | None = None,
                        reduction: str = "mean") -> Tensor:
    """``max(0, -y (x1 - x2) + margin)`` for ``y`` in {1, -1}."""
    reduction = _resolve(size_average, reduce, reduction)
    if not input1.ndim == input2.ndim == target.ndim:
        raise RuntimeError("margin_ranking_loss : All input tensors should have same dimension "
                           f"but got sizes: input1: {input1.shape}, input2: {input2.shape}, "
                           f"target: {target.shape} ")
    diff = input1 - input2  # (before the negation, in PyTorch's order of calls)
    loss = (-target * diff + margin).clamp_min(0)
    return _reduce(loss, reduction)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Tensor:
    """``x`` where ``y == 1``, ``max(0, margin - x)`` where ``y == -1``."""
    reduction = _resolve(size_average, reduce, reduction)
    below_margin = (margin - input).clamp_min(0)
    loss = (torch.where(target != 1, below_margin, 0)
            + torch.where(target != -1, input, 0))
    return _reduce(loss, reduction)


def soft_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                     reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """``log(1 + exp(-y x))``, the logistic loss for ``y`` in {1, -1}."""
    reduction = _resolve(size_average, reduce, reduction)
    return _aten.soft_margin_loss.default(input, target, _reduction_enum(reduction))


_COSINE_EPS = 1e-12  # PyTorch's guard against zero norms in cosine_embedding_loss


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                          size_average: bool | None = None, reduce: bool | None = None,
                          reduction: str = "mean") -> Tensor:
    """``1 - cos(x1, x2)`` where ``y == 1``, ``max(0, cos(x1, x2) - margin)`` where
    ``y == -1``; rows of (N, D) inputs, or a (D,) pair with a 0-d target."""
    reduction = _resolve(size_average, reduce, reduction)
    if target.ndim not in (0, 1):
        raise RuntimeError(f"{target.ndim}D target tensor expected, multi-target not "
                           "supported")
    if target.ndim == 1 and not (input1.ndim == 2 and input2.ndim == 2):
        raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with "
                           f"sizes {list(input1.shape)} and {list(input2.shape)}.")
    if target.ndim == 0 and not (input1.ndim == 1 and input2.ndim == 1):
        raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with "
                           f"sizes {list(input1.shape)} and {list(input2.shape)}.")
    dot = (input1 * input2).sum(-1)
    norms = ((input1 * input1).sum(-1) + _COSINE_EPS) * ((input2 * input2).sum(-1)
                                                         + _COSINE_EPS)
    cos = dot / torch.sqrt(norms)
    loss = (torch.where(target == 1, 1 - cos, 0)
            + torch.where(target == -1, (cos - margin).clamp_min(0), 0))
    return _reduce(loss, reduction)


def _as_batch(input: Tensor, target: Tensor, name: str) -> tuple[Tensor, Tensor]:
    """(N, C) input and (N, ...) target from the (C,) / (N, C) forms of the class losses."""
    if input.ndim not in (0, 1, 2):
        raise RuntimeError(f"{name}: expected input of 1 or 2 dimensions, got {input.ndim}")
    if input.ndim <= 1:
        return input.reshape(1, -1), target.reshape(1, -1)
    return input, target


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                           reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """``sum_{j in targets, i not in targets} max(0, 1 - (x[j] - x[i])) / C`` per sample; the
    target row lists class indices and ends at the first -1."""
    reduction = _resolve(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of "
                           f"size: {list(input.shape)}")
    x, t = _as_batch(input, target, "multilabel_margin_loss")  # (N, C), (N, C)
    classes = x.shape[1]
    listed = (t < 0).to(torch.int64).cumsum(1) == 0  # (N, K): before the first -1
    if bool(((t >= classes) & listed).any()):
        raise RuntimeError("multilabel_margin_loss: target index out of range")
    safe = torch.where(listed, t, 0)
    one_hot = safe.unsqueeze(-1) == torch.arange(classes, device=x.device).reshape(1, 1, -1)
    is_target = (one_hot & listed.unsqueeze(-1)).any(1)  # (N, C)
    picked = torch.gather(x, 1, safe)  # (N, K): x at each listed target
    hinge = 1 - picked.unsqueeze(-1) + x.unsqueeze(1)  # (N, K, C)
    # strictly positive terms only: PyTorch's kernel sends no gradient through a zero hinge
    use = listed.unsqueeze(-1) & ~is_target.unsqueeze(1) & (hinge > 0)
    loss = torch.where(use, hinge, 0).sum((1, 2)) / classes  # (N,)
    if input.ndim <= 1:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                size_average: bool | None = None, reduce: bool | None = None,
                                reduction: str = "mean") -> Tensor:
    """Per-class logistic loss ``-(y log sigmoid(x) + (1 - y) log sigmoid(-x))``, averaged
    over the classes (the last dim)."""
    reduction = _resolve(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    classes = input.shape[-1] if input.ndim else 1
    loss = loss.sum(-1) / classes if input.ndim else loss
    return _reduce(loss, reduction)


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0,
                      weight: Tensor | None = None, size_average: bool | None = None,
                      reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """Multi-class hinge loss ``sum_{i != y} w[y] max(0, margin - x[y] + x[i])^p / C`` per
    sample (``p`` is 1 or 2)."""
    reduction = _resolve(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    x, t = _as_batch(input, target, "multi_margin_loss")  # (N, C), (N, 1) or (N,)
    t = t.reshape(-1)
    if t.shape[0] != x.shape[0]:
        raise RuntimeError(f"inconsistent target size, expected {x.shape[0]} but got "
                           f"{list(target.shape)}")
    classes = x.shape[1]
    if bool(((t < 0) | (t >= classes)).any()):
        raise RuntimeError("target out of range")
    picked = torch.gather(x, 1, t.unsqueeze(1))  # (N, 1)
    hinge = margin - picked + x  # (N, C)
    others = (t.unsqueeze(1) != torch.arange(classes, device=x.device).reshape(1, -1)) & (hinge > 0)
    if p == 2:
        hinge = hinge * hinge
    if weight is not None:
        hinge = hinge * weight[t].unsqueeze(1)
    loss = torch.where(others, hinge, 0).sum(1) / classes  # (N,)
    if input.ndim <= 1:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


# --------------------------------------------------------------------------- triplets


def _pairwise_distance(x1: Tensor, x2: Tensor, p: float, eps: float) -> Tensor:
    """``||x1 - x2 + eps||_p`` over the last dim (``F.pairwise_distance``)."""
    return torch.linalg.vector_norm(x1 - x2 + eps, p, dim=-1)


def _check_triplet_dims(anchor: Tensor, positive: Tensor, negative: Tensor) -> None:
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError("The anchor, positive, and negative tensors are expected to have "
                           "the same number of dimensions, but got: anchor "
                           f"{anchor.ndim}D, positive {positive.ndim}D, and negative "
                           f"{negative.ndim}D inputs")


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor,
                        margin: float = 1.0, p: float = 2, eps: float = 1e-6,
                        swap: bool = False, size_average: bool | None = None,
                        reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """``max(0, margin + d(a, p) - d(a, n))`` with the ``p``-norm distance; ``swap`` uses
    ``min(d(a, n), d(p, n))`` as the negative distance."""
    reduction = _resolve(size_average, reduce, reduction)
    _check_triplet_dims(anchor, positive, negative)
    return _triplet(anchor, positive, negative,
                    lambda a, b: _pairwise_distance(a, b, p, eps), margin, swap, reduction)


def triplet_margin_with_distance_loss(
        anchor: Tensor, positive: Tensor, negative: Tensor, *,
        distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
        margin: float = 1.0, swap: bool = False, reduction: str = "mean") -> Tensor:
    """``max(0, margin + d(a, p) - d(a, n))`` for any distance function (the Euclidean
    pairwise distance by default)."""
    _reduction_enum(reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    distance = distance_function or (lambda a, b: _pairwise_distance(a, b, 2.0, 1e-6))
    return _triplet(anchor, positive, negative, distance, margin, swap, reduction)


def _triplet(anchor: Tensor, positive: Tensor, negative: Tensor,
             distance: Callable[[Tensor, Tensor], Tensor], margin: float, swap: bool,
             reduction: str) -> Tensor:
    d_pos = distance(anchor, positive)
    d_neg = distance(anchor, negative)
    if swap:
        d_neg = torch.minimum(d_neg, distance(positive, negative))
    return _reduce((margin + d_pos - d_neg).clamp_min(0), reduction)


# --------------------------------------------------------------------------- CTC


def _lengths(values: Tensor | Sequence[int]) -> list[int]:
    if isinstance(values, Tensor):
        return [int(v) for v in values.reshape(-1).tolist()]
    if isinstance(values, int):
        return [values]
    return [int(v) for v in values]


class _NanGradWhereInfinite(torch.autograd.Function):
    """Identity on the per-sample losses; adds NaN to the gradient of ``log_probs`` where
    ``mask`` (T, N, 1) marks the steps of samples whose loss is infinite."""

    @staticmethod
    def forward(ctx: Any, loss: Tensor, lp: Tensor, mask: Tensor) -> Tensor:
        ctx.save_for_backward(mask)
        ctx.lp_shape = tuple(lp.shape)
        return loss.clone()

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor, Tensor, None]:
        (mask,) = ctx.saved_tensors
        nan = torch.where(mask, math.nan, 0.0).to(grad.dtype).expand(ctx.lp_shape)
        return grad, nan, None


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Tensor | Sequence[int],
             target_lengths: Tensor | Sequence[int], blank: int = 0, reduction: str = "mean",
             zero_infinity: bool = False) -> Tensor:
    """Connectionist temporal classification loss: ``-log`` of the total probability of all
    alignments of each target to its input, by the forward algorithm in log space.

    ``log_probs`` is (T, N, C) or (T, C); ``targets`` (N, S) padded or the targets of the batch
    concatenated. "mean" divides each loss by its target length, then averages the batch.
    Impossible alignments give ``inf`` (0 with ``zero_infinity``). As in PyTorch, the gradient
    is that for ``log_probs`` that are a ``log_softmax``'s output: ``exp(log_probs)`` minus the
    alignment posteriors (per time step it sums to zero over the classes).
    """
    _reduction_enum(reduction)
    batched = log_probs.ndim == 3
    if log_probs.ndim not in (2, 3):
        raise RuntimeError(f"ctc_loss: expected log_probs of 2 or 3 dimensions, got "
                           f"{log_probs.ndim}")
    lp = log_probs if batched else log_probs.unsqueeze(1)  # (T, N, C)
    steps, batch, classes = lp.shape
    in_lens = _lengths(input_lengths)
    tg_lens = _lengths(target_lengths)
    if len(in_lens) != batch or len(tg_lens) != batch:
        raise RuntimeError(f"input_lengths and target_lengths must have size {batch}, got "
                           f"{len(in_lens)} and {len(tg_lens)}")
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range")
    for n in range(batch):
        if in_lens[n] > steps or in_lens[n] < 0:
            raise RuntimeError(f"Expected input_lengths to have value at most {steps}, but "
                               f"got value {in_lens[n]}")
    # -- targets as (N, S) rows, padded with blanks
    flat = targets.reshape(-1).tolist() if (targets.ndim == 1 and batched) else None
    rows: list[list[int]] = []
    offset = 0
    for n in range(batch):
        if flat is not None:
            row = flat[offset:offset + tg_lens[n]]
            offset += tg_lens[n]
        else:
            row = (targets if batched else targets.reshape(1, -1))[n].tolist()[:tg_lens[n]]
        if len(row) != tg_lens[n]:
            raise RuntimeError(f"Expected tensor to have size at least {tg_lens[n]} at "
                               f"dimension 1, but got size {len(row)}")
        rows.append([int(v) for v in row])
    longest = max(tg_lens, default=0)
    width = 2 * longest + 1  # blank, l1, blank, l2, ..., blank
    ext = [[blank] * width for _ in range(batch)]
    skip = [[False] * width for _ in range(batch)]
    for n, row in enumerate(rows):
        for k, label in enumerate(row):
            ext[n][2 * k + 1] = label
            # a label may follow the label before the previous blank unless they are equal
            skip[n][2 * k + 1] = k > 0 and row[k - 1] != label
    ext_t = torch.tensor(ext, dtype=torch.int64, device=lp.device)  # (N, L)
    skip_t = torch.tensor(skip, dtype=torch.bool, device=lp.device)  # (N, L)
    emit = torch.gather(lp, 2, ext_t.unsqueeze(0).expand(steps, batch, width))  # (T, N, L)

    # A large finite "minus infinity" keeps logsumexp's gradient finite on unreachable states
    # (with -inf it would be 0 * NaN); totals below half of it are reported as -inf.
    neg = -1e30 if lp.dtype != torch.float16 else -6e4
    emit = torch.where(emit < neg, neg, emit)  # log(0) = -inf emissions become that floor
    none_col = torch.full((batch, 1), neg, dtype=lp.dtype, device=lp.device)
    alpha = torch.cat([emit[0, :, :2], none_col.expand(batch, max(width - 2, 0))], 1)
    alive = torch.tensor(in_lens, device=lp.device)  # (N,)
    for t in range(1, steps):
        stay = alpha
        step = torch.cat([none_col, alpha[:, :-1]], 1)
        jump = torch.cat([none_col, none_col, alpha[:, :-2]], 1)[:, :width]
        jump = torch.where(skip_t, jump, neg)
        new = torch.logsumexp(torch.stack([stay, step, jump]), 0) + emit[t]
        alpha = torch.where((t < alive).unsqueeze(1), new, alpha)  # (N, L)
    last = torch.tensor([[2 * s] for s in tg_lens], device=lp.device)  # (N, 1)
    before = torch.tensor([[max(2 * s - 1, 0)] for s in tg_lens], device=lp.device)
    has_label = torch.tensor([s > 0 for s in tg_lens], device=lp.device)
    end = torch.stack([torch.gather(alpha, 1, last).squeeze(1),
                       torch.where(has_label, torch.gather(alpha, 1, before).squeeze(1), neg)])
    total = torch.logsumexp(end, 0)  # (N,)
    # no input steps: only the empty target is possible (with probability 1)
    total = torch.where(alive == 0, torch.where(~has_label, 0.0, neg), total)
    finite = total >= neg / 2
    # PyTorch's backward treats log_probs as log_softmax outputs: add exp(log_probs) to the
    # gradient (not to the value) for the steps each sample uses
    used = (torch.arange(steps, device=lp.device).unsqueeze(1) < alive).unsqueeze(2)  # (T,N,1)
    mass = torch.where(used, torch.exp(lp), 0).sum((0, 2))  # (N,)
    loss = torch.where(finite, -total + (mass - mass.detach()), math.inf)
    if zero_infinity:
        loss = torch.where(finite, loss, 0)
    elif lp.requires_grad and torch.is_grad_enabled() and not bool(finite.all()):
        # PyTorch's gradient of an infinite loss is NaN over the steps that sample uses
        loss = _NanGradWhereInfinite.apply(loss, lp, (~finite).unsqueeze(0).unsqueeze(2) & used)
    if reduction == "mean":
        divisor = torch.tensor([max(s, 1) for s in tg_lens], dtype=lp.dtype, device=lp.device)
        return (loss / divisor).mean()
    if reduction == "sum":
        return loss.sum()
    return loss if batched else loss.squeeze(0)
