"""Parameters to one flat vector and back."""

from __future__ import annotations

from collections.abc import Iterable

import torch
from torch import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """Every parameter flattened and concatenated (all on one device)."""
    params = list(parameters)
    device = params[0].device if params else None
    for p in params:
        if p.device != device:
            raise TypeError("Found two parameters on different devices, this is currently not "
                            "supported.")
    return torch.cat([p.view(-1) for p in params])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy consecutive slices of ``vec`` into the parameters (their data is replaced)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {torch.typename(vec)}")
    pointer = 0
    with torch.no_grad():
        for param in parameters:
            n = param.numel()
            param.copy_(vec[pointer:pointer + n].view_as(param))
            pointer += n
