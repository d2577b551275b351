"""Normalisation layers: ``LayerNorm``, ``BatchNorm1d/2d/3d``, ``GroupNorm``, ``RMSNorm``,
``InstanceNorm1d/2d/3d``, their lazy forms and ``LocalResponseNorm``."""

from __future__ import annotations

import warnings
from typing import Any

import torch
from torch import Tensor
from torch.nn import functional as F, init
from torch.nn.parameter import Parameter, UninitializedBuffer, UninitializedParameter

from .lazy import LazyModuleMixin
from .module import Module

__all__ = [
    "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "GroupNorm", "InstanceNorm1d",
    "InstanceNorm2d", "InstanceNorm3d", "LayerNorm", "LazyBatchNorm1d", "LazyBatchNorm2d",
    "LazyBatchNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d",
    "CrossMapLRN2d", "LocalResponseNorm", "RMSNorm",
]


def _affine(module: Module, enabled: bool, bias: bool, shape: tuple[int, ...], device: Any,
            dtype: Any) -> None:
    """Register ``weight`` and ``bias`` of ``shape`` (uninitialised: ``reset_parameters``
    fills them), or None for each one the options leave out."""
    make = (lambda: Parameter(torch.empty(shape, device=device, dtype=dtype)))  # noqa: E731
    module.register_parameter("weight", make() if enabled else None)
    module.register_parameter("bias", make() if enabled and bias else None)


class LayerNorm(Module):
    """Normalise over the last ``len(normalized_shape)`` dims, with an affine map."""

    def __init__(self, normalized_shape: Any, eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _affine(self, elementwise_affine, bias, self.normalized_shape, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class _BatchNorm(Module):
    _version = 2
    _dims: tuple[int, ...] = ()

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device: Any = None,
                 dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        _affine(self, affine, bias, (num_features,), device, dtype)
        if track_running_stats:
            self.register_buffer("running_mean", torch.zeros(num_features, device=device,
                                                             dtype=dtype))
            self.register_buffer("running_var", torch.ones(num_features, device=device,
                                                           dtype=dtype))
            self.register_buffer("num_batches_tracked",
                                 torch.tensor(0, dtype=torch.long, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() not in self._dims:
            want = " or ".join(f"{d}D" for d in self._dims)
            raise ValueError(f"expected {want} input (got {input.dim()}D input)")

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        momentum = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # cumulative moving average
                momentum = 1.0 / float(self.num_batches_tracked.item())
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        track = not self.training or self.track_running_stats
        # through F's entry: graph capture records the call whole (its operator writes the
        # running statistics)
        return F.batch_norm(input, self.running_mean if track else None,
                            self.running_var if track else None, self.weight, self.bias,
                            use_batch, momentum, self.eps)

    def _load_from_state_dict(self, state_dict: Any, prefix: str, local_metadata: Any,
                              strict: bool, missing_keys: list[str],
                              unexpected_keys: list[str], error_msgs: list[str]) -> None:
        version = local_metadata.get("version", None)
        if (version is None or version < 2) and self.track_running_stats:
            # checkpoints from before num_batches_tracked existed
            key = prefix + "num_batches_tracked"
            if key not in state_dict:
                state_dict[key] = (self.num_batches_tracked if self.num_batches_tracked
                                   is not None else torch.tensor(0, dtype=torch.long))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                      missing_keys, unexpected_keys, error_msgs)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch norm over (N, C) or (N, C, L)."""

    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch norm over (N, C, H, W)."""

    _dims = (4,)


class BatchNorm3d(_BatchNorm):
    """Batch norm over (N, C, D, H, W)."""

    _dims = (5,)


class GroupNorm(Module):
    """Normalise (N, C, *) over groups of ``C / num_groups`` channels, with a per-channel
    affine map."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _affine(self, affine, bias, (num_channels,), device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, "
                f"affine={self.affine}, bias={self.bias is not None}")


class RMSNorm(Module):
    """``x / sqrt(mean(x**2) + eps) * weight`` over the trailing ``normalized_shape`` dims."""

    def __init__(self, normalized_shape: Any, eps: float | None = None,
                 elementwise_affine: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(torch.empty(self.normalized_shape, device=device,
                                                dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x: Tensor) -> Tensor:
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class _InstanceNorm(_BatchNorm):
    """Per-sample, per-channel normalisation over the spatial dims; running statistics and
    the affine map are off by default."""

    _batched_dim = 0

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device: Any = None,
                 dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() not in (self._batched_dim - 1, self._batched_dim):
            raise ValueError(f"expected {self._batched_dim - 1}D or {self._batched_dim}D input "
                             f"(got {input.dim()}D input)")

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        feature_dim = input.dim() - (self._batched_dim - 1)
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match "
                                 f"num_features ({self.num_features}), but got: "
                                 f"{input.shape[feature_dim]}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You "
                          "can silence this warning by not passing in num_features, which is "
                          "not used because affine=False", stacklevel=2)
        batched = input.dim() == self._batched_dim
        x = input if batched else input.unsqueeze(0)
        out = F.instance_norm(x, self.running_mean, self.running_var, self.weight,
                              self.bias, self.training or not self.track_running_stats,
                              self.momentum if self.momentum is not None else 0.0,
                              self.eps)
        return out if batched else out.squeeze(0)


class InstanceNorm1d(_InstanceNorm):
    """Instance norm over (N, C, L) or (C, L)."""

    _batched_dim = 3


class InstanceNorm2d(_InstanceNorm):
    """Instance norm over (N, C, H, W) or (C, H, W)."""

    _batched_dim = 4


class InstanceNorm3d(_InstanceNorm):
    """Instance norm over (N, C, D, H, W) or (C, D, H, W)."""

    _batched_dim = 5


class _LazyNorm(LazyModuleMixin):
    """A batch or instance norm whose ``num_features`` is the first input's channel count.
    As in PyTorch, the lazy instance norms default to ``affine=True`` and
    ``track_running_stats=True``."""

    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        # the norm with no features, then placeholders where it has tensors of num_features
        super().__init__(0, eps, momentum, False, False, bias=bias)  # type: ignore[call-arg]
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = torch.tensor(0, dtype=torch.long, device=device)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()  # type: ignore[misc]

    def initialize_parameters(self, input: Tensor) -> None:
        if self.has_uninitialized_params():
            self._check_input_dim(input)  # type: ignore[attr-defined]
            # channels: dim 1 of a batched input, dim 0 of an unbatched instance-norm input
            unbatched = input.dim() == getattr(self, "_batched_dim", 0) - 1
            self.num_features = input.shape[0 if unbatched else 1]
            with torch.no_grad():
                for name in ("weight", "bias", "running_mean", "running_var"):
                    tensor = getattr(self, name, None)
                    if tensor is not None:
                        tensor.materialize((self.num_features,))
                self.reset_parameters()


class LazyBatchNorm1d(_LazyNorm, BatchNorm1d):
    """A ``BatchNorm1d`` whose ``num_features`` is taken from the first input."""

    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyNorm, BatchNorm2d):
    """A ``BatchNorm2d`` whose ``num_features`` is taken from the first input."""

    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyNorm, BatchNorm3d):
    """A ``BatchNorm3d`` whose ``num_features`` is taken from the first input."""

    cls_to_become = BatchNorm3d


class LazyInstanceNorm1d(_LazyNorm, InstanceNorm1d):
    """An ``InstanceNorm1d`` whose ``num_features`` is taken from the first input."""

    cls_to_become = InstanceNorm1d


class LazyInstanceNorm2d(_LazyNorm, InstanceNorm2d):
    """An ``InstanceNorm2d`` whose ``num_features`` is taken from the first input."""

    cls_to_become = InstanceNorm2d


class LazyInstanceNorm3d(_LazyNorm, InstanceNorm3d):
    """An ``InstanceNorm3d`` whose ``num_features`` is taken from the first input."""

    cls_to_become = InstanceNorm3d


class LocalResponseNorm(Module):
    """Divide each element by a power of the summed squares of its ``size`` neighbouring
    channels."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75,
                 k: float = 1.0) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input: Tensor) -> Tensor:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)


class CrossMapLRN2d(Module):
    """Local response normalisation across channels of a 4-D input, as Lua Torch's
    ``SpatialCrossMapLRN`` computed it (PyTorch keeps that running-sum form).

    ``out = x * (k + alpha / size * W)^-beta`` where, with ``r = (size - 1) // 2 + 1`` and
    ``sq = x^2``, ``W[c]`` is the sum of ``sq`` over channels ``0 .. c + r - 1`` minus the sum
    over ``1 .. c - r``: a window of ``2r - 1`` channels around ``c`` that, once it has slid
    past the first channel, still counts channel 0 (the running sum never subtracts it).
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75,
                 k: float = 1) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D "
                             "instead.")
        channels = input.shape[1]
        reach = (self.size - 1) // 2 + 1
        totals = (input * input).cumsum(1)  # totals[:, c] = sum of sq over channels 0..c
        last = torch.tensor([min(c + reach - 1, channels - 1) for c in range(channels)])
        dropped = torch.tensor([max(c - reach, 0) for c in range(channels)])
        slid = torch.tensor([float(c - reach >= 1) for c in range(channels)],
                            dtype=input.dtype).reshape(1, channels, 1, 1)
        window = (totals.index_select(1, last)
                  - (totals.index_select(1, dropped) - totals[:, :1]) * slid)
        return input * (window * (self.alpha / self.size) + self.k).pow(-self.beta)

    def extra_repr(self) -> str:
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)
