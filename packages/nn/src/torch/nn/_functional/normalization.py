"""Group, RMS, instance and local-response normalisation and ``normalize`` of
``nn.functional``, composite over differentiable core ops."""

from __future__ import annotations

import math

import torch
from torch import Tensor
from torch.nn import _ops

__all__ = ["group_norm", "instance_norm", "local_response_norm", "normalize", "rms_norm"]


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise (N, C, *) over each group of ``C / num_groups`` channels and all spatial
    positions, then apply the per-channel affine map."""
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.dim()}")
    n, c = input.shape[0], input.shape[1]
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(input.shape)} and "
                           f"num_groups={num_groups}")
    # one operator, as in PyTorch (half precision computes in float32 inside)
    return _NATIVE_GROUP_NORM(input, weight, bias, n, c, math.prod(input.shape[2:]),
                              num_groups, eps)[0]


# one implementation, core's (torch.rms_norm); F.rms_norm is the same function
rms_norm = torch.rms_norm


def instance_norm(input: Tensor, running_mean: Tensor | None = None,
                  running_var: Tensor | None = None, weight: Tensor | None = None,
                  bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise every (sample, channel) plane over its spatial dims. With
    ``use_input_stats`` the running statistics (if given) are updated with the batch mean of the
    per-instance statistics; otherwise the running ones are used."""
    if input.dim() < 3:
        raise ValueError(f"expected at least 3D input (got {input.dim()}D input)")
    n, c = input.shape[0], input.shape[1]
    if use_input_stats:
        count = input.numel() // (n * c) if n * c else 0
        if count <= 1 and input.numel():
            raise ValueError(f"Expected more than 1 spatial element when training, got input "
                             f"size {list(input.shape)}")
    elif running_mean is None or running_var is None:
        raise RuntimeError("Expected running_mean and running_var to be defined when "
                           "use_input_stats is false")
    if input.numel() == 0:
        return input.clone()
    # as PyTorch: a batch norm of the (1, N*C, *) view, each instance a channel, with the
    # per-channel tensors repeated per sample; the repeated running statistics, updated by
    # the batch norm, are averaged back over the samples
    def per_instance(t: Tensor | None) -> Tensor | None:
        return None if t is None else t.repeat(n)

    stats = [per_instance(running_mean), per_instance(running_var)]
    out = _NATIVE_BATCH_NORM(input.reshape(1, n * c, *input.shape[2:]), per_instance(weight),
                             per_instance(bias), *stats, use_input_stats, momentum, eps)[0]
    if use_input_stats:
        with torch.no_grad():
            for running, repeated in zip((running_mean, running_var), stats):
                if running is not None:
                    running.copy_(repeated.reshape(n, c).mean(0))
    return out.reshape(input.shape)


_NATIVE_BATCH_NORM = torch.ops.aten.native_batch_norm.default
_NATIVE_GROUP_NORM = torch.ops.aten.native_group_norm.default


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """``x / (k + alpha/size * sum of x**2 over the ``size`` neighbouring channels) ** beta``
    (the window is centred, zero-padded: ``size // 2`` before, ``(size - 1) // 2`` after)."""
    if input.dim() < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.dim()} "
                         "dimensions)")
    if input.numel() == 0:
        return input
    sq = (input * input).unsqueeze(1)  # (N, 1, C, *)
    sq = _ops.pad(sq.reshape(sq.shape[0], 1, sq.shape[2], -1),
                  [0, 0, size // 2, (size - 1) // 2])
    win = sq.unfold(2, size, 1).sum(-1)  # (N, 1, C, prod(spatial))
    div = win.reshape(input.shape)
    div = (div * (alpha / size) + k).pow(beta)
    return input / div


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out: Tensor | None = None) -> Tensor:
    """``input / max(||input||_p, eps)`` along ``dim``."""
    denom = input.norm(p, dim=dim, keepdim=True).clamp_min(eps).expand_as(input)
    result = input / denom
    if out is not None:
        with torch.no_grad():
            out.copy_(result)
        return out
    return result
