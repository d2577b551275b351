"""Negative log-likelihood and cross-entropy, structured as PyTorch structures them:

- ``aten::nll_loss_forward(self, target, weight, reduction, ignore_index) -> (output,
  total_weight)`` for a (C,) or (N, C) ``self`` of log-probabilities and class indices, and its
  backward ``aten::nll_loss_backward``: composites over ``gather`` / ``scatter`` with explicit
  derivative formulas, so a backend may fuse either;
- ``aten::nll_loss`` (1-d or 2-d) and ``aten::nll_loss_nd`` (any (N, C, d1, ...) input: the
  class dim moves last and the rest flattens to rows), written in ``nll_loss_forward``;
- ``aten::_cross_entropy_forward(self, target, weight, reduction, ignore_index) -> (output,
  logsumexp)`` for (N, C) / (C,) floating logits and int64 class indices (N,) / (), and its
  backward ``aten::_cross_entropy_backward(grad_output, self, target, weight, reduction,
  ignore_index, logsumexp) -> grad_self`` (``(softmax - onehot) * weight`` scaled by the
  reduction, zero for ignored targets): composites over ``logsumexp`` and the nll ops with
  explicit derivative formulas, so a backend may fuse either into one pass per row;
- ``aten::cross_entropy_loss(self, target, weight=None, reduction=1, ignore_index=-100,
  label_smoothing=0.0)``: ``_cross_entropy_forward`` for the case above without label
  smoothing; otherwise ``log_softmax`` over the class dim then ``nll_loss_nd`` for class
  indices (plus the label-smoothing term), or the probability-target formula when ``target``
  has ``self``'s shape. It is written in other ops (CompositeImplicitAutograd), so autograd
  goes through the fused ops' formulas.

``reduction`` is PyTorch's enum: 0 none, 1 mean, anything else sum. "mean" divides by the
summed weights of the targets that are not ``ignore_index`` (NaN when there are none), as in
PyTorch.
"""

from __future__ import annotations

from typing import Any

from .._aten import elementwise as _ew, factories as _fac
from .._aten.reductions import logsumexp
from .._core import config as _config, dispatch as _dispatch, dtype as _dtype
from .._core.tensor import Tensor, has_data
from .softmax import log_softmax

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
    if weight is not None and weight.requires_grad and _config.is_grad_enabled():
        raise RuntimeError("The function 'nll_loss_forward' is not differentiable with respect "
                           "to argument 'weight'. This input cannot have requires_grad True.")


def _picked(self: Tensor, target: Tensor, weight: Tensor | None, ignore_index: int,
            classes: int, check: bool = True) -> tuple[Tensor, Tensor]:
    """(safe index (rows, 1), per-row weight (rows,): 0 for an ignored target), over a 2-d
    view of the input; raises PyTorch's error for a target out of range. ``check=False`` (for
    a caller whose next op checks the same target): no range check off the CPU, which would
    wait for the device; an out-of-range target then picks class 0."""
    t = target.reshape(-1).to(_dtype.int64)  # (rows,)
    if t._device.type == "cpu" and t.__class__ is Tensor and not _config.state.modes_active:
        # The checks need the values on the host anyway (the error names the first bad
        # target): do them there, in a few numpy calls instead of eight dispatched ops.
        safe, keep = _host_picked(t, ignore_index, classes)
    else:
        keep = t != ignore_index
        bad = keep & ((t < 0) | (t >= classes))
        if check and has_data(t) and bool(bad.any()):  # (meta and fake targets hold no values)
            raise IndexError(f"Target {int(t[bad][0])} is out of bounds.")
        safe = _ew.where(keep if check else keep & ~bad, t, 0).unsqueeze(1)  # (rows, 1)
    w = keep.to(self._dtype)
    if weight is not None:
        w = weight[safe.squeeze(1)] * w
    return safe, w


def _host_picked(t: Tensor, ignore_index: int, classes: int) -> tuple[Tensor, Tensor]:
    """``_picked``'s (safe index, keep mask) of a CPU int64 target ``t``, computed with
    numpy (fresh arrays, so the tensors may share their memory)."""
    import numpy as np

    from .._aten.creation import from_numpy

    a = t.numpy()
    keep = a != ignore_index
    bad = keep & ((a < 0) | (a >= classes))
    if bad.any():
        raise IndexError(f"Target {int(a[bad][0])} is out of bounds.")
    safe = np.where(keep, a, 0).reshape(-1, 1)
    return from_numpy(safe), from_numpy(keep)


def _gather_rows(x: Tensor, safe: Tensor) -> Tensor:
    """``x.gather(1, safe)`` for indices ``_picked`` already checked: the primitive directly
    (the public op would check them again, with two reductions and two host reads)."""
    from .._core.alloc import PRIMS, new_tensor

    if not x._shape[1]:  # no classes: every index is out of range, the op raises
        return x.gather(1, safe)
    out = new_tensor(safe._shape, x._dtype, x._device)
    if out.numel():
        PRIMS.gather(out, x, 1, safe)
    return out


def _nll_loss_forward_kernel(self: Tensor, target: Tensor, weight: Tensor | None,
                             reduction: int, ignore_index: int) -> tuple[Tensor, Tensor]:
    classes = check_nll_loss(self, target, weight)
    x = self.reshape(-1, classes)  # (rows, C)
    safe, w = _picked(self, target, weight, ignore_index, classes)
    loss = -_gather_rows(x, safe).squeeze(1) * w  # (rows,)
    if reduction == NONE:
        return loss.reshape(target._shape), _fac.zeros((), dtype=self._dtype,
                                                        device=self.device)
    total = w.sum()
    if reduction == MEAN:
        return loss.sum() / total, total
    return loss.sum(), total


def _nll_loss_backward_kernel(grad_output: Tensor, self: Tensor, target: Tensor,
                              weight: Tensor | None, reduction: int, ignore_index: int,
                              total_weight: Tensor) -> Tensor:
    classes = check_nll_loss(self, target, weight)
    safe, w = _picked(self, target, weight, ignore_index, classes)
    g = grad_output.reshape(-1) if reduction == NONE else grad_output
    if reduction == MEAN:
        g = g / total_weight
    src = -w * g
    if reduction == MEAN:  # every target ignored: total_weight is 0, yet the gradient is 0
        src = _ew.where(w != 0, src, 0)
    src = src.to(self._dtype).unsqueeze(1)  # (rows, 1): the gradient of each picked entry
    rows = safe._shape[0]
    grad = _fac.zeros((rows, classes), dtype=self._dtype, device=self.device)
    if rows and classes:  # in place: a fresh buffer no one else sees; indices checked
        from .._core.alloc import PRIMS

        PRIMS.scatter_(grad, 1, safe, src, "none", True)
    else:
        grad.scatter_(1, safe, src)  # (the op's checks and errors)
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
    # PyTorch's aten::nll_loss2d_forward (what a mode sees): (N, C, H, W) as it is, any other
    # rank as (N, C, 1, d1 * d2 * ...)
    from .._aten.losses import ATEN as _LOSSES

    if self.ndim != 4:
        rest = 1
        for size in self._shape[2:]:
            rest *= size
        self = self.contiguous().reshape(n, classes, 1, rest)
        target = target.contiguous().reshape(n, 1, rest)
    out = _LOSSES["nll_loss2d_forward"](self, target, weight, reduction, ignore_index)[0]
    return out.reshape(expected) if reduction == NONE else out


# -- cross-entropy over logits: the fusable pair ------------------------------------------------


def _cross_entropy_forward_kernel(self: Tensor, target: Tensor, weight: Tensor | None,
                                  reduction: int, ignore_index: int) -> tuple[Tensor, Tensor]:
    """The reference of ``_cross_entropy_forward``: ``nll_loss_forward`` of ``self`` minus its
    row logsumexp; returns (loss, logsumexp (rows,) or () for a (C,) input)."""
    check_nll_loss(self, target, weight)
    lse = logsumexp(self, -1)
    loss = ATEN["nll_loss_forward"](self - lse.unsqueeze(-1), target, weight, reduction,
                                    ignore_index)[0]
    return loss, lse


def _cross_entropy_backward_kernel(grad: Tensor, self: Tensor, target: Tensor,
                                   weight: Tensor | None, reduction: int, ignore_index: int,
                                   logsumexp: Tensor) -> Tensor:
    """The reference of ``_cross_entropy_backward``: log_softmax's backward of
    ``nll_loss_backward``, with the probabilities recomputed from the saved logsumexp."""
    classes = check_nll_loss(self, target, weight)
    # (unchecked: nll_loss_backward checks the target next, one wait for the device fewer)
    total = _picked(self, target, weight, ignore_index, classes, check=False)[1].sum()
    g = ATEN["nll_loss_backward"](grad, self, target, weight, reduction, ignore_index, total)
    p = (self - logsumexp.unsqueeze(-1)).exp()
    return g - p * g.sum(-1, keepdim=True)


# the floating dtypes (the fused cross-entropy's logits)
_FLOATING = frozenset(dt for dt in _dtype.DTYPES.values() if dt.is_floating_point)


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
    keep = target != ignore_index  # (N, d1, ...)
    w = logp if weight is None else logp * _class_view(weight, logp.ndim, class_dim)
    smooth = _ew.where(keep, -w.sum(class_dim), 0)
    if reduction == NONE:
        return smooth
    if reduction == MEAN:
        if weight is None:
            return smooth.sum() / keep.sum()
        kept = _ew.where(keep, target, 0).reshape(-1)
        return smooth.sum() / (weight[kept] * keep.reshape(-1)).sum()
    return smooth.sum()


def _cross_entropy_loss_kernel(self: Tensor, target: Tensor, weight: Tensor | None = None,
                               reduction: int = MEAN, ignore_index: int = -100,
                               label_smoothing: float = 0.0) -> Tensor:
    # the fused operator is Plait's own: a dispatch mode sees PyTorch's log_softmax + nll_loss
    # ((N, C) / (C,) floating logits, int64 class indices (N,) / (); tested first, written
    # out: this runs on every call, and such a call passes every check below)
    ndim = len(self._shape)
    if (label_smoothing <= 0 and self._dtype in _FLOATING and target._dtype is _dtype.int64
            and 0 < ndim < 3 and len(target._shape) == ndim - 1
            and not (_config.state.keys_active
                     and _dispatch.python_key_active((self, target, weight), {}))):
        if weight is not None:
            _check_weight_not_differentiable(weight)
        return _CROSS_ENTROPY_FORWARD(self, target, weight, reduction, ignore_index)[0]
    if label_smoothing > 1.0:  # PyTorch lets negative values through
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{label_smoothing}")
    class_dim = 0 if ndim == 1 else 1
    if ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {ndim})")
    if self._shape == target._shape:  # (tuples both: a Size compares as one)
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
    # cross-entropy of (N, C) / (C,) logits against class indices, which a backend may fuse:
    # (loss, row logsumexp), and the logits' gradient from that logsumexp
    "_cross_entropy_forward": ("_cross_entropy_forward(Tensor self, Tensor target, "
                               "Tensor? weight, int reduction, SymInt ignore_index) -> "
                               "(Tensor output, Tensor logsumexp)",
                               _cross_entropy_forward_kernel),
    "_cross_entropy_backward": ("_cross_entropy_backward(Tensor grad_output, Tensor self, "
                                "Tensor target, Tensor? weight, int reduction, "
                                "SymInt ignore_index, Tensor logsumexp) -> Tensor",
                                _cross_entropy_backward_kernel),
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
_CROSS_ENTROPY_FORWARD = ATEN["_cross_entropy_forward"]

# Decomposed for a dispatch mode with or without grad, as PyTorch's CompositeImplicitAutograd
# ops are (the mode sees _log_softmax and nll_loss_forward, never these names)
for _name in ("nll_loss", "nll_loss_nd", "cross_entropy_loss"):
    ATEN[_name].python_key_composite = ATEN[_name].kernels[_dispatch.COMPOSITE_IMPLICIT]


# The logsumexp output of _cross_entropy_forward (saved for the backward) is not
# differentiable: its derivative rule says so (autograd/_formulas/norm.py).

METHODS: dict[str, Any] = {}
