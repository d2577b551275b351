"""The hot path's allocate-and-run entry points (``torch.backends.hookspecs.FastPath``).

Thin: every method is the ``_C`` function itself, so a fast tier costs core one native call.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import ModuleType
from typing import Any


class FastPath:
    """``_C``'s ``fast_*`` functions under the names of the FastPath protocol."""

    def __init__(self, native: ModuleType, dtype_codes: Mapping[Any, int],
                 kernels: Mapping[str, Any]) -> None:
        self.kernels = kernels
        self.binary_ops = {name: code for code, name in enumerate(native.BINARY_OPS)}
        self.unary_ops = {name: code for code, name in enumerate(native.UNARY_OPS)}
        self.dtype_codes = dict(dtype_codes)
        self.binary = native.fast_binary
        self.binary_scalar = native.fast_binary_scalar
        self.broadcast_plan = native.BroadcastPlan
        self.binary_plan = native.fast_binary_plan
        self.unary = native.fast_unary
        self.sum_all = native.fast_sum_all
        self.reduce_ops = {name: code for code, name in enumerate(native.REDUCE_OPS)
                           if name in ("sum", "amax", "amin")}
        self.reduce_rows = native.fast_reduce_rows
