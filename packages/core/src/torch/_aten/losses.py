"""The losses that are ``aten::`` operators of their own in PyTorch, each with its
``*_backward`` operator: ``mse_loss``, ``smooth_l1_loss``, ``huber_loss``,
``soft_margin_loss``, ``binary_cross_entropy`` (``binary_cross_entropy_with_logits`` has none),
and ``nll_loss2d_forward`` for (N, C, H, W) inputs.

``F.mse_loss`` reaches ``aten::mse_loss`` and its backward ``aten::mse_loss_backward`` (what a
dispatch mode, a flop counter or an exporter keys on), not ``sub``/``mul``/``sum``/``div``. The
kernels are composites over elementwise ops and reductions, so every backend serves them; the
derivatives are formulas (``torch.autograd._formulas.activations``). ``reduction`` is PyTorch's
enum: 0 none, 1 mean, 2 sum.
"""

from __future__ import annotations

from typing import Any

from .._core import dispatch as _dispatch
from .._core.tensor import Tensor
from . import activations as _act, elementwise as _ew
from .no_data import has_no_data

__all__: list[str] = []  # F.mse_loss is plait-nn's


def _check_reduction(reduction: Any) -> None:
    if reduction not in (0, 1, 2):
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _mse_loss(self: Tensor, target: Tensor, reduction: int = 1) -> Tensor:
    for position, (arg, t) in enumerate((("self", self), ("target", target)), 1):
        if not isinstance(t, Tensor):
            raise TypeError(f"mse_loss(): argument '{arg}' (position {position}) must be "
                            f"Tensor, not {type(t).__name__}")
    _check_reduction(reduction)
    diff = self - target
    loss = diff * diff
    if reduction == 0:
        return loss
    return loss.mean() if reduction == 1 else loss.sum()


def _mse_loss_backward(grad_output: Tensor, self: Tensor, target: Tensor,
                       reduction: int) -> Tensor:
    _check_reduction(reduction)
    diff = self - target
    # d/dx of (x - t)^2 is 2 (x - t); a mean divides by the number of elements
    scale = 2.0 / diff.numel() if reduction == 1 and diff.numel() else 2.0
    return diff * (grad_output * scale)


# -- the other pointwise losses --------------------------------------------------------------
# Each kernel is the unreduced loss (or its slope) in elementwise ops, then the reduction; the
# backward operators scale the incoming gradient by 1/n for a mean, as PyTorch's do.


def _check_tensors(op: str, **tensors: Any) -> None:
    for position, (arg, t) in enumerate(tensors.items(), 1):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}(): argument '{arg}' (position {position}) must be "
                            f"Tensor, not {type(t).__name__}")


def _reduce(loss: Tensor, reduction: int) -> Tensor:
    if reduction == 0:
        return loss
    return loss.mean() if reduction == 1 else loss.sum()


def _mean_scale(reduction: int, count: int) -> float:
    """The factor a mean puts on each element's gradient (1 for none and sum)."""
    return 1.0 / count if reduction == 1 and count else 1.0


def _smooth_l1_slope(diff: Tensor, beta: float) -> Tensor:
    """d/d(diff) of the smooth L1 loss: ``diff / beta`` inside ``|diff| < beta``, its sign
    outside (only the sign for ``beta == 0``, the L1 loss)."""
    if beta == 0:
        return diff.sgn()
    return _ew.where(diff.abs() < beta, diff / beta, diff.sgn())


def _smooth_l1_loss(self: Tensor, target: Tensor, reduction: int = 1,
                    beta: float = 1.0) -> Tensor:
    _check_tensors("smooth_l1_loss", self=self, target=target)
    _check_reduction(reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    diff = self - target
    size = diff.abs()
    loss = size if beta == 0 else _ew.where(size < beta, 0.5 * diff * diff / beta,
                                         size - 0.5 * beta)
    return _reduce(loss, reduction)


def _smooth_l1_loss_backward(grad_output: Tensor, self: Tensor, target: Tensor,
                             reduction: int, beta: float) -> Tensor:
    _check_reduction(reduction)
    diff = self - target
    return _smooth_l1_slope(diff, beta) * (grad_output * _mean_scale(reduction, diff.numel()))


def _huber_slope(diff: Tensor, delta: float) -> Tensor:
    """d/d(diff) of the Huber loss: ``diff`` inside ``|diff| < delta``, ``delta * sign``
    outside."""
    return _ew.where(diff.abs() < delta, diff, delta * diff.sgn())


def _huber_loss(self: Tensor, target: Tensor, reduction: int = 1, delta: float = 1.0) -> Tensor:
    _check_tensors("huber_loss", self=self, target=target)
    _check_reduction(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    diff = self - target
    size = diff.abs()
    loss = _ew.where(size < delta, 0.5 * diff * diff, delta * (size - 0.5 * delta))
    return _reduce(loss, reduction)


def _huber_loss_backward(grad_output: Tensor, self: Tensor, target: Tensor, reduction: int,
                         delta: float) -> Tensor:
    _check_reduction(reduction)
    diff = self - target
    return _huber_slope(diff, delta) * (grad_output * _mean_scale(reduction, diff.numel()))


def _soft_margin_loss(self: Tensor, target: Tensor, reduction: int = 1) -> Tensor:
    _check_tensors("soft_margin_loss", self=self, target=target)
    _check_reduction(reduction)
    # log(1 + exp(-y x)) as -log(sigmoid(y x)): finite where exp(-y x) would overflow
    return _reduce(-_act.ATEN["log_sigmoid_forward"](target * self)[0], reduction)


def _soft_margin_loss_backward(grad_output: Tensor, self: Tensor, target: Tensor,
                               reduction: int) -> Tensor:
    _check_reduction(reduction)
    slope = -target * _ew.sigmoid(-(target * self))
    return slope * (grad_output * _mean_scale(reduction, slope.numel()))


_LOG_FLOOR = -100.0  # PyTorch clamps each log of binary cross-entropy to >= -100
_BCE_EPS = 1e-12  # and the denominator x (1 - x) of its gradient to >= 1e-12


def _clamped_log(x: Tensor) -> Tensor:
    return _ew.log(x).clamp_min(_LOG_FLOOR)


def _binary_cross_entropy(self: Tensor, target: Tensor, weight: Tensor | None = None,
                          reduction: int = 1) -> Tensor:
    _check_tensors("binary_cross_entropy", self=self, target=target)
    _check_reduction(reduction)
    # the values steer an error: meta and fake tensors have none to check
    if not has_no_data(self) and bool(((self < 0) | (self > 1)).any()):
        raise RuntimeError("all elements of input should be between 0 and 1")
    loss = -(target * _clamped_log(self) + (1 - target) * _clamped_log(1 - self))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def _binary_cross_entropy_backward(grad_output: Tensor, self: Tensor, target: Tensor,
                                   weight: Tensor | None = None, reduction: int = 1) -> Tensor:
    _check_reduction(reduction)
    # PyTorch's gradient, not the clamped log's: a saturated x in {0, 1} gets a huge or a zero
    # gradient, never the zero slope of the clamp
    grad = (self - target) / ((1 - self) * self).clamp_min(_BCE_EPS)
    grad = grad * (grad_output * _mean_scale(reduction, grad.numel()))
    return grad if weight is None else grad * weight


def _bce_with_logits_terms(self: Tensor, target: Tensor,
                           pos_weight: Tensor | None) -> tuple[Tensor, Any]:
    """``(log_sigmoid(x), 1 + (pos_weight - 1) y)`` (the second 1 without a pos_weight)."""
    log_weight: Any = 1 if pos_weight is None else 1 + (pos_weight - 1) * target
    return _act.ATEN["log_sigmoid_forward"](self)[0], log_weight


def _binary_cross_entropy_with_logits(self: Tensor, target: Tensor,
                                      weight: Tensor | None = None,
                                      pos_weight: Tensor | None = None,
                                      reduction: int = 1) -> Tensor:
    _check_tensors("binary_cross_entropy_with_logits", self=self, target=target)
    _check_reduction(reduction)
    # (1 - y) x - lw log(sigmoid(x)): no exp of a large logit, so no overflow
    log_sigmoid, log_weight = _bce_with_logits_terms(self, target, pos_weight)
    loss = (1 - target) * self - log_weight * log_sigmoid
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)



# -- nll_loss2d: the negative log-likelihood of (N, C, H, W) log-probabilities -----------------
# Written in nll_loss_forward / nll_loss_backward over the (N * H * W, C) rows, so a backend
# that fuses those serves these too.


def _check_nll_loss2d(self: Tensor, target: Tensor, weight: Tensor | None) -> None:
    if target.ndim != 3:
        raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but got "
                           f"targets of dimension: {target.ndim}")
    if self.ndim != 4:
        raise RuntimeError(f"only batches of spatial inputs supported (4D tensors), but got "
                           f"input of dimension: {self.ndim}")
    if weight is not None and weight.numel() != self.shape[1]:
        raise RuntimeError("weight tensor should be defined either for all or no classes")
    n, _, h, w = self.shape
    if tuple(target.shape) != (n, h, w):
        raise RuntimeError(f"size mismatch (got input: {list(self.shape)} , target: "
                           f"{list(target.shape)}")


def _class_rows(self: Tensor) -> Tensor:
    """(N, C, H, W) as its (N * H * W, C) rows of class scores."""
    return self.movedim(1, -1).reshape(-1, self.shape[1])


def _nll_loss2d_forward(self: Tensor, target: Tensor, weight: Tensor | None, reduction: int,
                        ignore_index: int) -> tuple[Tensor, Tensor]:
    _check_nll_loss2d(self, target, weight)
    out, total_weight = _dispatch.get("aten::nll_loss_forward")(
        _class_rows(self), target.reshape(-1), weight, reduction, ignore_index)
    return (out.reshape(target.shape) if reduction == 0 else out), total_weight


def _nll_loss2d_backward(grad_output: Tensor, self: Tensor, target: Tensor,
                         weight: Tensor | None, reduction: int, ignore_index: int,
                         total_weight: Tensor) -> Tensor:
    _check_nll_loss2d(self, target, weight)
    n, c, h, w = self.shape
    grad_rows = _dispatch.get("aten::nll_loss_backward")(
        grad_output.reshape(-1) if reduction == 0 else grad_output, _class_rows(self),
        target.reshape(-1), weight, reduction, ignore_index, total_weight)
    return grad_rows.reshape(n, h, w, c).movedim(-1, 1).contiguous()


ATEN: dict[str, _dispatch.Operator] = _dispatch.define_aten({
    "mse_loss": ("mse_loss(Tensor self, Tensor target, int reduction=1) -> Tensor", _mse_loss),
    "mse_loss_backward": ("mse_loss_backward(Tensor grad_output, Tensor self, Tensor target, "
                          "int reduction) -> Tensor", _mse_loss_backward),
    "smooth_l1_loss": ("smooth_l1_loss(Tensor self, Tensor target, int reduction=1, "
                       "float beta=1.0) -> Tensor", _smooth_l1_loss),
    "smooth_l1_loss_backward": ("smooth_l1_loss_backward(Tensor grad_output, Tensor self, "
                                "Tensor target, int reduction, float beta) -> Tensor",
                                _smooth_l1_loss_backward),
    "huber_loss": ("huber_loss(Tensor self, Tensor target, int reduction=1, "
                   "float delta=1.0) -> Tensor", _huber_loss),
    "huber_loss_backward": ("huber_loss_backward(Tensor grad_output, Tensor self, "
                            "Tensor target, int reduction, float delta) -> Tensor",
                            _huber_loss_backward),
    "soft_margin_loss": ("soft_margin_loss(Tensor self, Tensor target, int reduction=1) "
                         "-> Tensor", _soft_margin_loss),
    "soft_margin_loss_backward": ("soft_margin_loss_backward(Tensor grad_output, "
                                  "Tensor self, Tensor target, int reduction) -> Tensor",
                                  _soft_margin_loss_backward),
    "binary_cross_entropy": ("binary_cross_entropy(Tensor self, Tensor target, "
                             "Tensor? weight=None, int reduction=1) -> Tensor",
                             _binary_cross_entropy),
    "binary_cross_entropy_backward": ("binary_cross_entropy_backward(Tensor grad_output, "
                                      "Tensor self, Tensor target, Tensor? weight=None, "
                                      "int reduction=1) -> Tensor",
                                      _binary_cross_entropy_backward),
    "binary_cross_entropy_with_logits": ("binary_cross_entropy_with_logits(Tensor self, "
                                         "Tensor target, Tensor? weight=None, "
                                         "Tensor? pos_weight=None, int reduction=1) -> Tensor",
                                         _binary_cross_entropy_with_logits),
    "nll_loss2d_forward": ("nll_loss2d_forward(Tensor self, Tensor target, Tensor? weight, "
                           "int reduction, SymInt ignore_index) -> (Tensor output, "
                           "Tensor total_weight)", _nll_loss2d_forward),
    "nll_loss2d_backward": ("nll_loss2d_backward(Tensor grad_output, Tensor self, "
                            "Tensor target, Tensor? weight, int reduction, "
                            "SymInt ignore_index, Tensor total_weight) -> Tensor",
                            _nll_loss2d_backward),
})
