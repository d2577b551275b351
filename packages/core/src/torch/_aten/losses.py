"""The pointwise losses that are ``aten::`` operators of their own in PyTorch, each with its
``*_backward`` operator: ``mse_loss``.

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


ATEN: dict[str, _dispatch.Operator] = _dispatch.define_aten({
    "mse_loss": ("mse_loss(Tensor self, Tensor target, int reduction=1) -> Tensor", _mse_loss),
    "mse_loss_backward": ("mse_loss_backward(Tensor grad_output, Tensor self, Tensor target, "
                          "int reduction) -> Tensor", _mse_loss_backward),
})
