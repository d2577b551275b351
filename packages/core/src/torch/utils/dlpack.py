"""``torch.utils.dlpack``: exchange tensors with other libraries through DLPack capsules,
sharing memory (CPU tensors)."""

from __future__ import annotations

import enum
from typing import Any

import torch

from .._core.tensor import Tensor

__all__ = ["DLDeviceType", "from_dlpack", "to_dlpack"]


class DLDeviceType(enum.IntEnum):
    """The device codes of the DLPack standard."""

    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17


# the same function as torch.from_dlpack (which __torch_function__ wraps)
from_dlpack = torch.from_dlpack


def to_dlpack(tensor: Tensor) -> Any:
    """A DLPack capsule over ``tensor``'s memory (consumable once, by ``from_dlpack``)."""
    return tensor.__dlpack__()
