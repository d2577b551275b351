"""``torch.ao.nn.quantized`` (also ``torch.nn.quantized``): ``FloatFunctional``, the module a
float model's additions and concatenations go through so that a converted model could
observe them (see :mod:`torch.ao`)."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

import torch
from torch import Tensor
from torch.nn import Identity, Module

__all__ = ["FloatFunctional"]


class FloatFunctional(Module):
    """``add``, ``add_scalar``, ``mul``, ``mul_scalar``, ``cat``, ``add_relu``,
    ``matmul`` as methods of a module; in a float model each is the plain operation. Calling the
    module itself raises, as in PyTorch."""

    def __init__(self) -> None:
        super().__init__()
        self.activation_post_process = Identity()

    def forward(self, x: Tensor) -> Tensor:
        raise RuntimeError("FloatFunctional is not intended to use the 'forward'. Please use "
                           "the underlying operation")

    def add(self, x: Tensor, y: Tensor) -> Tensor:
        return self.activation_post_process(torch.add(x, y))

    def add_scalar(self, x: Tensor, y: float) -> Tensor:
        return torch.add(x, y)  # (a scalar addition is not observed, as in PyTorch)

    def mul(self, x: Tensor, y: Tensor) -> Tensor:
        return self.activation_post_process(torch.mul(x, y))

    def mul_scalar(self, x: Tensor, y: float) -> Tensor:
        return torch.mul(x, y)

    def cat(self, x: Sequence[Tensor], dim: int = 0) -> Tensor:
        return self.activation_post_process(torch.cat(x, dim=dim))

    def add_relu(self, x: Tensor, y: Tensor) -> Tensor:
        return self.activation_post_process(torch.relu(torch.add(x, y)))

    def matmul(self, x: Tensor, y: Tensor) -> Tensor:
        return self.activation_post_process(torch.matmul(x, y))


def __getattr__(name: str) -> Any:
    # the subpackages load on first access (torch.ao.nn.quantized.dynamic), as in PyTorch
    if name in ("dynamic", "modules"):
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
