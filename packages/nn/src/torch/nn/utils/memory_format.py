"""``torch.nn.utils.memory_format``: give the weights of convolutions a memory format."""

from __future__ import annotations

from typing import TypeVar

import torch
from torch.nn.modules.module import Module

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]

_ModuleT = TypeVar("_ModuleT", bound=Module)


def _convert(module: _ModuleT, memory_format: torch.memory_format,
             conv_types: tuple[type, ...]) -> _ModuleT:
    # Only the weight is converted: a convolution's output takes its memory format from its
    # input and weight, so converting the weights is enough to switch a network's layout.
    for sub in module.modules():
        if isinstance(sub, conv_types):
            converted = sub.weight.detach().clone().contiguous(memory_format=memory_format)
            sub.weight.data = converted
    return module


def convert_conv2d_weight_memory_format(module: _ModuleT,
                                        memory_format: torch.memory_format) -> _ModuleT:
    """Make the weight of every ``Conv2d``/``ConvTranspose2d`` in ``module`` (itself included)
    use ``memory_format`` (e.g. ``torch.channels_last``); returns ``module``."""
    return _convert(module, memory_format, (torch.nn.Conv2d, torch.nn.ConvTranspose2d))


def convert_conv3d_weight_memory_format(module: _ModuleT,
                                        memory_format: torch.memory_format) -> _ModuleT:
    """Make the weight of every ``Conv3d``/``ConvTranspose3d`` in ``module`` (itself included)
    use ``memory_format`` (e.g. ``torch.channels_last_3d``); returns ``module``."""
    return _convert(module, memory_format, (torch.nn.Conv3d, torch.nn.ConvTranspose3d))
