"""Channel-wise and alpha dropouts and ``gumbel_softmax`` of ``nn.functional``."""

from __future__ import annotations

import warnings

import torch
from torch import Tensor
from torch._core.config import external_stacklevel

__all__ = [
    "alpha_dropout", "dropout1d", "dropout2d", "dropout3d", "feature_alpha_dropout",
    "gumbel_softmax",
]

# SELU's constants: alpha dropout sets dropped units to SELU's negative saturation value
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _mask_shape(input: Tensor, feature: bool) -> list[int]:
    """Elementwise masks have the input's shape; feature masks one value per channel (dims
    past the channel dim are 1; unbatched inputs are (C, *))."""
    if not feature:
        return list(input.shape)
    return list(input.shape[:2]) + [1] * (input.dim() - 2)


def _feature_dropout(input: Tensor, p: float, training: bool, inplace: bool,
                     batched: bool) -> Tensor:
    _check_p(p)
    if not training or p == 0.0:
        return input
    x = input if batched else input.unsqueeze(0)
    keep = torch.empty(_mask_shape(x, True), dtype=input.dtype, device=input.device)
    if p == 1.0:
        keep.zero_()
    else:
        keep.bernoulli_(1.0 - p).div_(1.0 - p)
    if not batched:
        keep = keep.squeeze(0)
    return input.mul_(keep) if inplace else input * keep


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, L) or (C, L) with probability ``p``, scaling the rest."""
    if input.dim() not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a "
                           f"{input.dim()}D input. Note that dropout1d exists to provide "
                           "channel-wise dropout on inputs with 1 spatial dimension, a channel "
                           "dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    return _feature_dropout(input, p, training, inplace, input.dim() == 3)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, H, W) or (C, H, W) with probability ``p``."""
    if input.dim() == 3:
        # as PyTorch does: a 3-D input is taken as batched (N, C, L), with a warning
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that "
                      "channel-wise 1D dropout behavior is desired - input is interpreted as "
                      "shape (N, C, L), where C is the channel dim. This behavior will change "
                      "in a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout "
                      "behavior, please switch to using dropout1d instead.",
                      stacklevel=external_stacklevel())
    elif input.dim() != 4:
        warnings.warn(f"dropout2d: Received a {input.dim()}-D input to dropout2d, which is "
                      "deprecated and will result in an error in a future release. To retain "
                      "the behavior and silence this warning, please use dropout instead. Note "
                      "that dropout2d exists to provide channel-wise dropout on inputs with 2 "
                      "spatial dimensions, a channel dimension, and an optional batch dimension "
                      "(i.e. 3D or 4D inputs).", stacklevel=external_stacklevel())
    return _feature_dropout(input, p, training, inplace, True)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) with probability ``p``."""
    if input.dim() not in (4, 5):
        warnings.warn(f"dropout3d: Received a {input.dim()}-D input to dropout3d, which is "
                      "deprecated and will result in an error in a future release. To retain "
                      "the behavior and silence this warning, please use dropout instead. Note "
                      "that dropout3d exists to provide channel-wise dropout on inputs with 3 "
                      "spatial dimensions, a channel dimension, and an optional batch dimension "
                      "(i.e. 4D or 5D inputs).", stacklevel=external_stacklevel())
    return _feature_dropout(input, p, training, inplace, input.dim() == 5)


def _alpha(input: Tensor, p: float, training: bool, inplace: bool, feature: bool) -> Tensor:
    _check_p(p)
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input.mul_(0) if inplace else input * 0
    # dropped units take alpha' = -scale*alpha; a and b restore zero mean and unit variance
    alpha_p = -_SELU_ALPHA * _SELU_SCALE
    q = 1.0 - p
    a = (q + alpha_p * alpha_p * q * p) ** -0.5
    b = -a * alpha_p * p
    keep = torch.empty(_mask_shape(input, feature), dtype=input.dtype,
                       device=input.device).bernoulli_(q)
    out = (input * keep + (1 - keep) * alpha_p) * a + b
    if inplace:
        with torch.no_grad():
            input.copy_(out)
        return input
    return out


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                  inplace: bool = False) -> Tensor:
    """Dropout that keeps SELU's self-normalising mean and variance."""
    return _alpha(input, p, training, inplace, False)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Tensor:
    """Alpha dropout of whole channels."""
    return _alpha(input, p, training, inplace, True)


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """Softmax of ``(logits + Gumbel noise) / tau``; ``hard`` returns the one-hot argmax whose
    gradient is the soft sample's (straight-through)."""
    gumbels = -torch.empty_like(logits).exponential_().log()
    soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return soft
    index = soft.argmax(dim, keepdim=True)
    one = torch.zeros_like(logits).scatter_(dim, index, 1.0)
    return one - soft.detach() + soft
