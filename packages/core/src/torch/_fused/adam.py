"""The fused Adam and AdamW steps: ``torch._fused_adam_`` and ``torch._fused_adamw_``.

What ``torch.optim.Adam(fused=True)`` calls once per parameter group after it has incremented
the step counts: every parameter, its gradient and its moment buffers are updated in place,
with no autograd recording. The composite kernel here runs the math of the optimizer's
single-tensor path with elementwise ops, one tensor at a time; a backend overrides the ops with
one native call over the whole lists (plait-backend-cpu: one pass per element).

Per tensor, with ``t`` the value of its ``state_steps`` entry::

    g = grad / grad_scale                         (written back into grad, when grad_scale)
    g = -g                                        (maximize)
    g = g + weight_decay * param                  (Adam)   | param *= 1 - lr * weight_decay (AdamW)
    exp_avg = lerp(exp_avg, g, 1 - beta1)
    exp_avg_sq = beta2 * exp_avg_sq + (1 - beta2) * g * g
    max_exp_avg_sq = max(max_exp_avg_sq, exp_avg_sq)          (amsgrad; the denominator uses it)
    param -= lr / (1 - beta1^t) * exp_avg / (sqrt(exp_avg_sq) / sqrt(1 - beta2^t) + eps)

A ``found_inf`` of 1.0 skips the whole step (gradient scaling found an overflow). float16 and
bfloat16 tensors compute in float32 and round on store.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .._aten import elementwise as _ew
from .._aten.convert import scalar_type_name
from .._core import dispatch as _dispatch, dtype as _dtype
from .._core.grad_mode import no_grad
from .._core.tensor import Tensor

__all__ = ["_fused_adam_", "_fused_adamw_"]
METHODS: dict[str, Any] = {}

_HALF = (_dtype.float16, _dtype.bfloat16)


def check_lists(name: str, params: Sequence[Tensor], grads: Sequence[Tensor],
                exp_avgs: Sequence[Tensor], exp_avg_sqs: Sequence[Tensor],
                max_exp_avg_sqs: Sequence[Tensor], state_steps: Sequence[Tensor],
                amsgrad: bool, grad_scale: Tensor | None, found_inf: Tensor | None) -> None:
    """PyTorch's checks of a fused Adam call (list lengths, dtypes, shapes), shared with the
    backends' fused kernels."""
    check_rows(name, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps,
               amsgrad, grad_scale, found_inf, addresses=False)


Row = tuple[int, "tuple[int, ...] | None"]


def check_rows(name: str, params: Sequence[Tensor], grads: Sequence[Tensor],
               exp_avgs: Sequence[Tensor], exp_avg_sqs: Sequence[Tensor],
               max_exp_avg_sqs: Sequence[Tensor], state_steps: Sequence[Tensor],
               amsgrad: bool, grad_scale: Tensor | None, found_inf: Tensor | None, *,
               addresses: bool = True) -> list[Row]:
    """:func:`check_lists`' checks, and per parameter what a native kernel needs of its row
    (the parameter, its gradient and moment buffers): its element count and, when every
    tensor of the row is contiguous in host memory, their addresses (else None; always None
    when ``addresses`` is false, as for the composite, whose tensors may have no storage of
    their own).

    One pass over the lists with the tensors' own fields, no method call per tensor: a
    backend's fused step runs it once per parameter group and step, and an optimizer group
    has tens to hundreds of parameters."""
    n = len(params)
    lists = {"grads": grads, "exp_avgs": exp_avgs, "exp_avg_sqs": exp_avg_sqs,
             "state_steps": state_steps}
    if amsgrad:
        lists["max_exp_avg_sqs"] = max_exp_avg_sqs
    elif len(max_exp_avg_sqs):
        raise RuntimeError("Expected max_exp_avg_sqs.empty() to be true, but got false.")
    for list_name, tensors in lists.items():
        if len(tensors) != n:
            raise RuntimeError(f"Expected {list_name}.size() == n_tensors to be true, but got "
                               f"false.")
    for extra_name, extra in (("grad_scale", grad_scale), ("found_inf", found_inf)):
        if extra is not None and extra._dtype is not _dtype.float32:
            raise RuntimeError(f"expected scalar type Float but found "
                               f"{scalar_type_name(extra._dtype)} ({extra_name})")
    columns = ((params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs) if amsgrad
               else (params, grads, exp_avgs, exp_avg_sqs))
    rows: list[Row] = []
    for i, row in enumerate(zip(*columns)):
        p = row[0]
        dt, shape = p._dtype, p._shape
        if dt._category != _dtype.FLOAT:
            raise NotImplementedError(f'"{name}_kernel" not implemented for '
                                      f"'{scalar_type_name(dt)}'")
        itemsize = dt.itemsize
        row_addresses: list[int] | None = [] if addresses else None
        for t in row:
            if t._dtype is not dt:
                raise RuntimeError(f"expected scalar type {scalar_type_name(dt)} but "
                                   f"found {scalar_type_name(t._dtype)}")
            if t._shape is not shape and t._shape != shape:
                raise RuntimeError(f"{name}: tensor {i} of the lists has shape {tuple(t.shape)}"
                                   f" where its parameter has {tuple(p.shape)}")
            if row_addresses is not None:
                # (an interned layout is a contiguous one; is_contiguous() walks the strides)
                if t._device._type == "cpu" and (t._interned_layout is not None
                                                 or t.is_contiguous()):
                    row_addresses.append(t._storage._ptr + t._offset * itemsize)
                else:
                    row_addresses = None
        step = state_steps[i]
        if step._shape and step.numel() != 1:
            raise RuntimeError(f"a Tensor with {step.numel()} elements cannot be "
                               "converted to Scalar")
        rows.append((math.prod(shape), None if row_addresses is None else tuple(row_addresses)))
    return rows


def skip_step(found_inf: Tensor | None) -> bool:
    """Whether gradient scaling flagged an overflow (``found_inf == 1``): the step is skipped."""
    return found_inf is not None and float(found_inf.item()) == 1.0


def learning_rate(lr: float | Tensor) -> float:
    return float(lr.item()) if isinstance(lr, Tensor) else float(lr)


def _step(param: Tensor, grad: Tensor, exp_avg: Tensor, exp_avg_sq: Tensor,
          max_exp_avg_sq: Tensor | None, step: float, *, lr: float, beta1: float, beta2: float,
          weight_decay: float, eps: float, maximize: bool, grad_scale: Tensor | None,
          decoupled: bool) -> None:
    """One tensor's update, in place, in the tensor's dtype (float32 for the half types)."""
    if grad_scale is not None:
        grad.copy_(grad / grad_scale)  # the unscaled gradient is written back, as in PyTorch
    half = param._dtype in _HALF
    p, g, m, v = ((t.float() for t in (param, grad, exp_avg, exp_avg_sq)) if half
                  else (param, grad, exp_avg, exp_avg_sq))
    vmax = max_exp_avg_sq.float() if half and max_exp_avg_sq is not None else max_exp_avg_sq
    if maximize:
        g = -g
    if weight_decay != 0.0:
        if decoupled:
            p.mul_(1.0 - lr * weight_decay)
        else:
            g = g + p * weight_decay
    m.lerp_(g, 1.0 - beta1)
    v.mul_(beta2).addcmul_(g, g, value=1.0 - beta2)
    bias_correction1 = 1.0 - beta1 ** step
    bias_correction2_sqrt = math.sqrt(1.0 - beta2 ** step)
    if vmax is not None:
        _ew.maximum(vmax, v, out=vmax)
        denom = (vmax.sqrt() / bias_correction2_sqrt).add_(eps)
    else:
        denom = (v.sqrt() / bias_correction2_sqrt).add_(eps)
    p.addcdiv_(m, denom, value=-lr / bias_correction1)
    if half:
        for dst, src in ((param, p), (exp_avg, m), (exp_avg_sq, v), (max_exp_avg_sq, vmax)):
            if dst is not None:
                dst.copy_(src)


def _make_kernel(name: str, decoupled: bool) -> Any:
    def kernel(self: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor],
               exp_avg_sqs: list[Tensor], max_exp_avg_sqs: list[Tensor],
               state_steps: list[Tensor], *, lr: float | Tensor, beta1: float, beta2: float,
               weight_decay: float, eps: float, amsgrad: bool, maximize: bool,
               grad_scale: Tensor | None = None, found_inf: Tensor | None = None) -> None:
        check_lists(name, self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps,
                    amsgrad, grad_scale, found_inf)
        if skip_step(found_inf):
            return None
        rate = learning_rate(lr)
        with no_grad():
            for i, param in enumerate(self):
                _step(param, grads[i], exp_avgs[i], exp_avg_sqs[i],
                      max_exp_avg_sqs[i] if amsgrad else None, float(state_steps[i].item()),
                      lr=rate, beta1=beta1, beta2=beta2, weight_decay=weight_decay, eps=eps,
                      maximize=maximize, grad_scale=grad_scale, decoupled=decoupled)
        return None

    kernel.__name__ = f"{name}_composite"
    return kernel


_SIGNATURE = ("(Tensor(a!)[] self, Tensor(b!)[] grads, Tensor(c!)[] exp_avgs, "
              "Tensor(d!)[] exp_avg_sqs, Tensor(e!)[] max_exp_avg_sqs, Tensor[] state_steps, *, "
              "{lr} lr, float beta1, float beta2, float weight_decay, float eps, bool amsgrad, "
              "bool maximize, Tensor? grad_scale=None, Tensor? found_inf=None) -> ()")

adam_composite = _make_kernel("fused_adam", decoupled=False)
adamw_composite = _make_kernel("fused_adamw", decoupled=True)

ATEN = _dispatch.define_aten({
    "_fused_adam_": ("_fused_adam_" + _SIGNATURE.format(lr="float"), adam_composite),
    "_fused_adam_.tensor_lr": ("_fused_adam_.tensor_lr" + _SIGNATURE.format(lr="Tensor"),
                               adam_composite),
    "_fused_adamw_": ("_fused_adamw_" + _SIGNATURE.format(lr="float"), adamw_composite),
    "_fused_adamw_.tensor_lr": ("_fused_adamw_.tensor_lr" + _SIGNATURE.format(lr="Tensor"),
                                adamw_composite),
})


def _call(base: str, params: Sequence[Tensor], grads: Sequence[Tensor],
          exp_avgs: Sequence[Tensor], exp_avg_sqs: Sequence[Tensor],
          max_exp_avg_sqs: Sequence[Tensor], state_steps: Sequence[Tensor],
          kwargs: dict[str, Any]) -> None:
    op = ATEN[f"{base}.tensor_lr" if isinstance(kwargs["lr"], Tensor) else base]
    # An optimizer step is not part of any graph: parameters that require grad are written
    # in place without recording.
    with no_grad():
        op(list(params), list(grads), list(exp_avgs), list(exp_avg_sqs), list(max_exp_avg_sqs),
           list(state_steps), **kwargs)


def _fused_adam_(params: Sequence[Tensor], grads: Sequence[Tensor],
                 exp_avgs: Sequence[Tensor], exp_avg_sqs: Sequence[Tensor],
                 max_exp_avg_sqs: Sequence[Tensor], state_steps: Sequence[Tensor], *,
                 lr: float | Tensor, beta1: float, beta2: float, weight_decay: float,
                 eps: float, amsgrad: bool, maximize: bool, grad_scale: Tensor | None = None,
                 found_inf: Tensor | None = None) -> None:
    """One Adam step over lists of tensors, in place (the module docstring has the math);
    ``state_steps`` hold the step count, already incremented by the caller."""
    _call("_fused_adam_", params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps,
          dict(lr=lr, beta1=beta1, beta2=beta2, weight_decay=weight_decay, eps=eps,
               amsgrad=amsgrad, maximize=maximize, grad_scale=grad_scale, found_inf=found_inf))


def _fused_adamw_(params: Sequence[Tensor], grads: Sequence[Tensor],
                  exp_avgs: Sequence[Tensor], exp_avg_sqs: Sequence[Tensor],
                  max_exp_avg_sqs: Sequence[Tensor], state_steps: Sequence[Tensor], *,
                  lr: float | Tensor, beta1: float, beta2: float, weight_decay: float,
                  eps: float, amsgrad: bool, maximize: bool, grad_scale: Tensor | None = None,
                  found_inf: Tensor | None = None) -> None:
    """One AdamW step (decoupled weight decay: ``param *= 1 - lr * weight_decay``) over lists
    of tensors, in place; otherwise as :func:`_fused_adam_`."""
    _call("_fused_adamw_", params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps,
          dict(lr=lr, beta1=beta1, beta2=beta2, weight_decay=weight_decay, eps=eps,
               amsgrad=amsgrad, maximize=maximize, grad_scale=grad_scale, found_inf=found_inf))
