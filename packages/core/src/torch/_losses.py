"""Negative log-likelihood and cross-entropy, structured as PyTorch structures them:

- ``aten::nll_loss_forward(self, target, weight, reduction, ignore_index) -> (output,
  total_weight)`` for a (C,) or (N, C) ``self`` of log-probabilities and class indices, and its
  backward ``aten::nll_loss_backward``: composites over ``gather`` / ``scatter`` with explicit
  derivative formulas, so a backend may fuse either;
- ``aten::nll_loss`` (1-d or 2-d) and ``aten::nll_loss_nd`` (any (N, C, d1, ...) input: the
  class dim moves last and the rest flattens to rows), written in ``nll_loss_forward``;
- ``aten::cross_entropy_loss(self, target, weight=None, reduction=1, ignore_index=-100,
  label_smoothing=0.0)``: ``log_softmax`` over the class dim then ``nll_loss_nd`` for class
  indices (plus the label-smoothing term), or the probability-target formula when ``target``
  has ``self``'s shape. It is written in other ops (CompositeImplicitAutograd), so autograd
  goes through the fused ``_log_softmax`` / ``_log_softmax_backward_data`` of a backend.

``reduction`` is PyTorch's enum: 0 none, 1 mean, anything else sum. "mean" divides by the
summed weights of the targets that are not ``ignore_index`` (NaN when there are none), as in
PyTorch.
"""

from __future__ import annotations

from typing import Any

from . import _dispatch, _dtype
from ._tensor import Tensor

__all__: list[str] = []

NONE, MEAN, SUM = 0, 1, 2


def _type_name(dt: _dtype.dtype) -> str:
    return {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
            "bool": "Bool", "float32": "Float", "float64": "Double", "float16": "Half",
            "bfloat16": "BFloat16"}.get(dt._name, dt._name)


def check_nll_loss(self: Tensor, target: Tensor, weight: Tensor | None) -> int:
    """PyTorch's checks of ``nll_loss_forward``'s arguments; returns the number of classes."""
    if self.ndim not in (1, 2):
        raise RuntimeError("input tensor should be 1D or 2D")
    if target.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if target._dtype not in (_dtype.int64, _dtype.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{_type_name(target._dtype)}")
    no_batch = self.ndim == 1 and target.ndim == 0
    if not (no_batch or self._shape[0] == target._shape[0]):
        raise ValueError(f"Expected input batch_size ({self._shape[0]}) to match target "
                         f"batch_size ({target._shape[0]}).")
    classes = self._shape[-1]
    if weight is not None:
        if weight.ndim != 1 or weight._shape[0] != classes:
            raise RuntimeError(f"weight tensor should be defined either for all {classes} "
                               f"classes or no classes but got weight tensor of shape: "
                               f"{list(weight._shape)}")
        if weight._dtype is not self._dtype:
            raise RuntimeError(f"expected scalar type {_type_name(self._dtype)} but found "
                               f"{_type_name(weight._dtype)}")
    return classes


def _check_weight_not_differentiable(weight: Tensor | None) -> None:
    """PyTorch's nll_loss has no derivative for ``weight`` and refuses one that requires grad
    (checked by the public composites, which run with the caller's grad mode)."""
    from . import _config

    if weight is not None and weight.requires_grad and _config.is_grad_enabled():
        raise RuntimeError("The function 'nll_loss_forward' is not differentiable with respect "
                           "to argument 'weight'. This input cannot have requires_grad True.")


def _picked(self: Tensor, target: Tensor, weight: Tensor | None, ignore_index: int,
            classes: int) -> tuple[Tensor, Tensor, Tensor]:
    """(safe index (rows, 1), per-row weight (rows,), rows' mask of kept targets), over a
    2-d view of the input; raises PyTorch's error for a target out of range."""
    import torch

    t = target.reshape(-1).to(torch.int64)  # (rows,)
    keep = t != ignore_index
    bad = keep & ((t < 0) | (t >= classes))
    if bool(bad.any()):
        raise IndexError(f"Target {int(t[bad][0])} is out of bounds.")
    safe = torch.where(keep, t, 0).unsqueeze(1)  # (rows, 1)
    w = keep.to(self._dtype)
    if weight is not None:
        w = weight[safe.squeeze(1)] * w
    return safe, w, keep


def _nll_loss_forward_kernel(self: Tensor, target: Tensor, weight: Tensor | None,
                             reduction: int, ignore_index: int) -> tuple[Tensor, Tensor]:
    import torch

    classes = check_nll_loss(self, target, weight)
    x = self.reshape(-1, classes)  # (rows, C)
    safe, w, _keep = _picked(self, target, weight, ignore_index, classes)
    loss = -x.gather(1, safe).squeeze(1) * w  # (rows,)
    if reduction == NONE:
        return loss.reshape(target._shape), torch.zeros((), dtype=self._dtype,
                                                        device=self.device)
    total = w.sum()
    if reduction == MEAN:
        return loss.sum() / total, total
    return loss.sum(), total


def _nll_loss_backward_kernel(grad_output: Tensor, self: Tensor, target: Tensor,
                              weight: Tensor | None, reduction: int, ignore_index: int,
                              total_weight: Tensor) -> Tensor:
    import torch

    classes = check_nll_loss(self, target, weight)
    safe, w, _keep = _picked(self, target, weight, ignore_index, classes)
    g = grad_output.reshape(-1) if reduction == NONE else grad_output
    if reduction == MEAN:
        g = g / total_weight
    src = (-w * g).to(self._dtype).unsqueeze(1)  # (rows, 1): the gradient of each picked entry
    rows = safe._shape[0]
    grad = torch.zeros((rows, classes), dtype=self._dtype, device=self.device)
    grad.scatter_(1, safe, src)  # in place: a fresh buffer no one else sees
    return grad.reshape(self._shape)


def _nll_loss_kernel(self: Tensor, target: Tensor, weight: Tensor | None = None,
                     reduction: int = MEAN, ignore_index: int = -100) -> Tensor:
    _check_weight_not_differentiable(weight)
    return ATEN["nll_loss_forward"](self, target, weight, reduction, ignore_index)[0]


def _nll_loss_nd_kernel(self: Tensor, target: Tensor, weight: Tensor | None = None,
                        reduction: int = MEAN, ignore_index: int = -100) -> Tensor:
    if self.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {self.ndim})")
    _check_weight_not_differentiable(weight)
    if self.ndim != 1 and target.ndim >= 1 and self._shape[0] != target._shape[0]:
        raise ValueError(f"Expected input batch_size ({self._shape[0]}) to match target "
                         f"batch_size ({target._shape[0]}).")
    if self.ndim <= 2:
        return ATEN["nll_loss_forward"](self, target, weight, reduction, ignore_index)[0]
    n, classes = self._shape[0], self._shape[1]
    expected = (n,) + tuple(self._shape[2:])
    if tuple(target._shape) != expected:
        raise RuntimeError(f"Expected target size {list(expected)}, got "
                           f"{list(target._shape)}")
    rows = self.movedim(1, -1).reshape(-1, classes)  # (N * d1 * ..., C)
    out = ATEN["nll_loss_forward"](rows, target.reshape(-1), weight, reduction,
                                   ignore_index)[0]
    return out.reshape(target._shape) if reduction == NONE else out


def _reduce(loss: Tensor, reduction: int) -> Tensor:
    if reduction == NONE:
        return loss
    return loss.mean() if reduction == MEAN else loss.sum()


def _class_view(weight: Tensor, ndim: int, class_dim: int) -> Tensor:
    # weight (C,) broadcast along the class dim of an (N, C, d1, ...) or (C,) input
    return weight.reshape((-1,) + (1,) * (ndim - class_dim - 1))


def _prob_target_loss(logp: Tensor, target: Tensor, weight: Tensor | None, reduction: int,
                      ignore_index: int, label_smoothing: float, class_dim: int) -> Tensor:
    if not target._dtype.is_floating_point:
        raise RuntimeError(f"Expected floating point type for target with class "
                           f"probabilities, got {_type_name(target._dtype)}")
    if ignore_index >= 0:
        raise RuntimeError("ignore_index is not supported for floating point target")
    classes = logp._shape[class_dim]
    if label_smoothing > 0:
        target = target * (1 - label_smoothing) + label_smoothing / classes
    terms = logp * target  # (N, C, d1, ...)
    if weight is not None:
        terms = terms * _class_view(weight, logp.ndim, class_dim)
    if reduction == NONE:
        return -terms.sum(class_dim)
    if reduction == MEAN:
        if logp.numel() == 0:
            return -terms.sum() / 0.0  # NaN, as PyTorch's mean over no rows
        return -terms.sum() / (logp.numel() // classes)
    return -terms.sum()


def _smoothing_loss(logp: Tensor, target: Tensor, weight: Tensor | None, reduction: int,
                    ignore_index: int, class_dim: int) -> Tensor:
    """The label-smoothing term: the loss against a uniform target, reduced like nll_loss."""
    import torch

    keep = target != ignore_index  # (N, d1, ...)
    w = logp if weight is None else logp * _class_view(weight, logp.ndim, class_dim)
    smooth = torch.where(keep, -w.sum(class_dim), 0)
    if reduction == NONE:
        return smooth
    if reduction == MEAN:
        if weight is None:
            return smooth.sum() / keep.sum()
        kept = torch.where(keep, target, 0).reshape(-1)
        return smooth.sum() / (weight[kept] * keep.reshape(-1)).sum()
    return smooth.sum()


def _cross_entropy_loss_kernel(self: Tensor, target: Tensor, weight: Tensor | None = None,
                               reduction: int = MEAN, ignore_index: int = -100,
                               label_smoothing: float = 0.0) -> Tensor:
    from ._softmax import log_softmax

    if label_smoothing > 1.0:  # PyTorch lets negative values through
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{label_smoothing}")
    class_dim = 0 if self.ndim == 1 else 1
    if self.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {self.ndim})")
    if tuple(self._shape) == tuple(target._shape):
        classes = self._shape[class_dim]
        if weight is not None and (weight.ndim != 1 or weight._shape[0] != classes):
            raise RuntimeError(f"cross_entropy: weight tensor should be defined either for all "
                               f"{classes} classes or no classes but got weight tensor of "
                               f"shape: {list(weight._shape)}")
        logp = log_softmax(self, class_dim)
        return _prob_target_loss(logp, target, weight, reduction, ignore_index,
                                 label_smoothing, class_dim)
    logp = log_softmax(self, class_dim)
    nll = ATEN["nll_loss_nd"](logp, target, weight, reduction, ignore_index)
    if label_smoothing <= 0:
        return nll
    classes = self._shape[class_dim]
    smooth = _smoothing_loss(logp, target, weight, reduction, ignore_index, class_dim)
    return nll * (1 - label_smoothing) + smooth * (label_smoothing / classes)


ATEN = _dispatch.define_aten({
    "nll_loss_forward": ("nll_loss_forward(Tensor self, Tensor target, Tensor? weight, "
                         "int reduction, SymInt ignore_index) -> (Tensor output, "
                         "Tensor total_weight)", _nll_loss_forward_kernel),
    "nll_loss_backward": ("nll_loss_backward(Tensor grad_output, Tensor self, Tensor target, "
                          "Tensor? weight, int reduction, SymInt ignore_index, "
                          "Tensor total_weight) -> Tensor", _nll_loss_backward_kernel),
    # written in nll_loss_forward and log_softmax: autograd goes through their formulas
    "nll_loss": ("nll_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, "
                 "SymInt ignore_index=-100) -> Tensor", _nll_loss_kernel,
                 _dispatch.COMPOSITE_IMPLICIT),
    "nll_loss_nd": ("nll_loss_nd(Tensor self, Tensor target, Tensor? weight=None, "
                    "int reduction=1, SymInt ignore_index=-100) -> Tensor", _nll_loss_nd_kernel,
                    _dispatch.COMPOSITE_IMPLICIT),
    "cross_entropy_loss": ("cross_entropy_loss(Tensor self, Tensor target, Tensor? weight=None,"
                           " int reduction=1, SymInt ignore_index=-100, "
                           "float label_smoothing=0.0) -> Tensor", _cross_entropy_loss_kernel,
                           _dispatch.COMPOSITE_IMPLICIT),
})

METHODS: dict[str, Any] = {}
