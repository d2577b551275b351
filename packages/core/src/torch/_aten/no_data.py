"""Whether a tensor holds no values: a ``meta`` tensor, or a fake tensor (``FakeTensorMode``).

Composites that compute on a host copy (LAPACK through numpy) or that steer Python by values
(a sampler's rejection rounds) answer such tensors with empty results of the right layout, as
PyTorch's meta kernels do, instead of asking them for data they do not have.
"""

from __future__ import annotations

import sys
from typing import Any

from .._core.tensor import Tensor

__all__: list[str] = []


def has_no_data(t: Any) -> bool:
    """Whether ``t`` is a tensor without values (meta, or fake)."""
    if not isinstance(t, Tensor):
        return False
    if t.device.type == "meta":
        return True
    # fake tensors exist only once their module is loaded: no import (and no cost) before that
    fake = sys.modules.get("torch._subclasses.fake_tensor")
    return fake is not None and isinstance(t, fake.FakeTensor)


def column_major_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Strides of a batch of column-major matrices (LAPACK's layout) of ``shape``."""
    if len(shape) < 2:
        return (1,) * len(shape)
    m, n = shape[-2], shape[-1]
    strides = [1, max(m, 1)]  # (row, column) strides of one matrix
    step = max(m * n, 1)
    batch: list[int] = []
    for size in reversed(shape[:-2]):
        batch.insert(0, step)
        step *= max(size, 1)
    return (*batch, strides[0], strides[1])
