"""``aten::nll_loss_forward`` and ``aten::nll_loss_backward`` on xpu with the target's range
checked on the device: the error is raised at the next synchronisation, as PyTorch's device
asserts are, instead of a host read in the middle of every call.

Core's composites check that every target is ``ignore_index`` or a class index before they
compute, and need the answer on the host: on a device that is a wait for the queue in each
forward and each backward of a training step. Here the check's flag stays on the device (one
``any`` per call) and :func:`raise_pending` reads the flags at the next blocking download or
``torch.xpu.synchronize``, where the queue is drained anyway: if a target was out of range it
raises PyTorch's ``IndexError("Target N is out of bounds.")`` there (N the first bad target of
the first call that had one). Until then an out-of-range target picks class 0 with weight 0,
so nothing reads outside the row. Calls whose arguments PyTorch refuses for their shapes or
dtypes go to core's composite, which raises its error at once, as do targets that are not
int64 on the device.
"""

from __future__ import annotations

import threading
from typing import Any

NONE, MEAN = 0, 1  # PyTorch's reduction enum (anything else: sum)
_MAX_PENDING = 16  # unread flags kept before a call reads them itself (a loop with no sync)

_lock = threading.Lock()
# (flag: a 0-d bool device tensor, the flattened target, its out-of-range mask) per call
# since the last synchronisation, oldest first
_pending: list[tuple[Any, Any, Any]] = []


def raise_pending() -> None:
    """Raise the ``IndexError`` of the first call since the last synchronisation whose target
    was out of range; forget the flags either way (called before a blocking read)."""
    if not _pending:
        return
    with _lock:
        checks = _pending[:]
        _pending.clear()
    import torch

    flags = [flag for flag, _, _ in checks]
    if len({flag.device for flag in flags}) == 1 and not bool(torch.stack(flags).any()):
        return  # one read for every call since the last synchronisation
    for flag, target, bad in checks:
        if bool(flag):
            raise IndexError(f"Target {int(target[bad][0])} is out of bounds.")


def _defer(target: Any, bad: Any) -> None:
    """Keep the range check of ``target`` (its mask ``bad``) for the next synchronisation."""
    with _lock:
        _pending.append((bad.any(), target, bad))
        full = len(_pending) > _MAX_PENDING
    if full:
        raise_pending()


def _structurally_valid(self: Any, target: Any, weight: Any) -> bool:
    """Whether core's checks of the arguments' shapes and dtypes pass (then only the range
    check is left); otherwise the composite raises PyTorch's error."""
    import torch

    if self.ndim not in (1, 2) or target.ndim > 1 or target.dtype is not torch.int64:
        return False
    if not (self.ndim == 1 and target.ndim == 0) and self.shape[0] != target.shape[0]:
        return False
    if weight is not None and (weight.ndim != 1 or weight.shape[0] != self.shape[-1]
                               or weight.dtype is not self.dtype):
        return False
    return self.shape[-1] > 0


def _picked(self: Any, target: Any, weight: Any, ignore_index: int) -> tuple[Any, Any]:
    """(safe class index (rows, 1), per-row weight (rows,)) with the range check deferred."""
    import torch

    classes = self.shape[-1]
    t = target.reshape(-1)
    keep = t != ignore_index
    bad = keep & ((t < 0) | (t >= classes))
    _defer(t, bad)
    keep = keep & ~bad
    safe = torch.where(keep, t, 0).unsqueeze(1)
    w = keep.to(self.dtype)
    if weight is not None:
        w = _gather(weight, 0, safe.squeeze(1)) * w
    return safe, w


def _gather(x: Any, dim: int, index: Any) -> Any:
    """``x.gather(dim, index)`` by the primitive: the public op checks the indices again on
    the host (a read), and these are in range by construction."""
    from torch.backends import contract

    out = contract.empty(index.shape, x.dtype, x.device)
    if out.numel():
        contract.primitive("gather")(out, x, dim, index)
    return out


def nll_loss_forward(self: Any, target: Any, weight: Any, reduction: int,
                     ignore_index: int) -> tuple[Any, Any]:
    """``aten::nll_loss_forward`` (output, total_weight) with the deferred range check."""
    from torch.backends import contract

    if not _structurally_valid(self, target, weight):
        return contract.composite("aten::nll_loss_forward")(self, target, weight, reduction,
                                                             ignore_index)
    import torch

    safe, w = _picked(self, target, weight, ignore_index)
    loss = -_gather(self.reshape(-1, self.shape[-1]), 1, safe).squeeze(1) * w
    if reduction == NONE:
        return loss.reshape(target.shape), torch.zeros((), dtype=self.dtype, device=self.device)
    total = w.sum()
    return (loss.sum() / total if reduction == MEAN else loss.sum()), total


def nll_loss_backward(grad_output: Any, self: Any, target: Any, weight: Any, reduction: int,
                      ignore_index: int, total_weight: Any) -> Any:
    """``aten::nll_loss_backward`` with the deferred range check: minus the picked rows'
    weights times the incoming gradient, scattered into zeros."""
    from torch.backends import contract

    if not _structurally_valid(self, target, weight):
        return contract.composite("aten::nll_loss_backward")(
            grad_output, self, target, weight, reduction, ignore_index, total_weight)
    import torch

    safe, w = _picked(self, target, weight, ignore_index)
    g = grad_output.reshape(-1) if reduction == NONE else grad_output
    if reduction == MEAN:
        g = g / total_weight
    src = -w * g
    if reduction == MEAN:  # every target ignored: total_weight is 0, yet the gradient is 0
        src = torch.where(w != 0, src, 0)
    rows, classes = safe.shape[0], self.shape[-1]
    grad = torch.zeros((rows, classes), dtype=self.dtype, device=self.device)
    if rows:  # into a fresh buffer no one else sees, by the primitive (indices in range)
        contract.primitive("scatter_")(grad, 1, safe, src.to(self.dtype).unsqueeze(1), "none",
                                       True)
    return grad.reshape(self.shape)


KERNELS = {
    "aten::nll_loss_forward": nll_loss_forward,
    "aten::nll_loss_backward": nll_loss_backward,
}
