"""The Python side of the native CPU kernels: what core calls for each primitive.

One module per kernel area; each has ``make_kernels(native, dtype_codes, reference)``
returning wrappers keyed by primitive (or fused aten op) name. Wrappers only touch
``data_ptr()``, ``shape``, ``stride()``, ``dtype`` and ``numel()`` of their arguments, so tests
can drive them with stand-in tensors over numpy arrays.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

from ._common import Kernel

# Kernel areas, in registration order (a later area may replace an earlier one's kernel).
AREAS = (
    "elementwise", "reduce", "scan", "index", "sort", "random", "optim", "linalg", "conv",
    "attention", "fused", "activation", "loss", "rnn", "ternary", "spectral", "masked",
)


def make_kernels(
    native: ModuleType,
    dtype_codes: Mapping[Any, int],
    reference: Callable[[str], Kernel],
) -> dict[str, Kernel]:
    """Every area's wrappers, ready for ``lib.impl(name, kernel)``.

    :param native: the ``_C`` extension.
    :param dtype_codes: dtype object -> ``_C`` dtype code (the index in ``_C.DTYPES``).
    :param reference: primitive name -> the reference kernel with the same signature, looked
        up when a case is left to it.
    """
    kernels: dict[str, Kernel] = {}
    for area in AREAS:
        module = importlib.import_module(f"{__name__}.{area}")
        kernels.update(module.make_kernels(native, dtype_codes, reference))
    return kernels
