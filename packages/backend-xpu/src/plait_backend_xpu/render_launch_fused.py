"""Fused aten kernels of the GPU backends: ``_softmax``, ``_log_softmax`` and their backward
ops ``_softmax_backward_data`` / ``_log_softmax_backward_data`` (kernels of
:mod:`.render_fused`), one source for plait-backend-xpu and plait-backend-cuda, each passing its
:class:`~.render_launch.LaunchBackend`. They override core's composites under the backend's
key; a case they do not take (``half_to_float``, mixed or complex dtypes, float64 without
double precision) runs the composite, which is also what the tests compare with.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from torch.backends import contract

from . import render_fused
from .render_launch import LaunchBackend

FLOATS = frozenset({"float16", "bfloat16", "float32", "float64"})


def _layout(shape: Sequence[int], dim: Any) -> tuple[int, int, int] | None:
    """(outer, n, inner) of a row op along ``dim``; None when ``dim`` is out of range (the
    composite raises PyTorch's error)."""
    ndim = len(shape)
    bound = max(ndim, 1)
    if not isinstance(dim, int) or not -bound <= dim < bound:
        return None
    if ndim == 0:
        return 1, 1, 1
    d = dim % ndim
    outer = inner = 1
    for s in shape[:d]:
        outer *= s
    for s in shape[d + 1:]:
        inner *= s
    return outer, shape[d], inner


def _takes(b: LaunchBackend, t: Any) -> bool:
    name = b.dtype_name(t)
    return name in FLOATS and (name != "float64" or b.has_fp64(t))


def _softmax_like(b: LaunchBackend, name: str, log: bool) -> Callable[..., Any]:
    qualname = f"aten::{name}"

    def kernel(self: Any, dim: int, half_to_float: bool = False) -> Any:
        layout = _layout(tuple(self.shape), dim)
        if half_to_float or layout is None or not _takes(b, self):
            return contract.composite(qualname)(self, dim, half_to_float)
        outer, n, inner = layout
        x = self.contiguous()
        out = contract.empty(tuple(self.shape), self.dtype, self.device)
        b.calls[name] += 1
        if not outer * n * inner:
            return out
        dtype = b.dtype_name(self)
        i = self.device.index or 0
        k = b.cached_kernel(("softmax", i, dtype, log), i,
                            lambda: render_fused.render_softmax(b.dialect, dtype, log))
        buffers, offsets = b.buffer_args([out, x])
        if any(offsets):  # kernels index from the buffer's start
            return contract.composite(qualname)(self, dim, half_to_float)
        b.launch_1d(k, outer * inner, i, [*buffers, outer * inner, n, inner])
        return out

    kernel.__name__ = kernel.__qualname__ = f"{name}_{b.name}"
    return kernel


def _softmax_backward_like(b: LaunchBackend, name: str, log: bool) -> Callable[..., Any]:
    qualname = f"aten::{name}"

    def kernel(grad_output: Any, output: Any, dim: int, input_dtype: Any) -> Any:
        layout = _layout(tuple(output.shape), dim)
        if (layout is None or not _takes(b, output) or grad_output.dtype != output.dtype
                or input_dtype != output.dtype
                or tuple(grad_output.shape) != tuple(output.shape)):
            return contract.composite(qualname)(grad_output, output, dim, input_dtype)
        outer, n, inner = layout
        g, y = grad_output.contiguous(), output.contiguous()
        grad_in = contract.empty(tuple(output.shape), output.dtype, output.device)
        b.calls[name] += 1
        if not outer * n * inner:
            return grad_in
        dtype = b.dtype_name(output)
        i = output.device.index or 0
        k = b.cached_kernel(("softmax_backward", i, dtype, log), i,
                            lambda: render_fused.render_softmax_backward(b.dialect, dtype, log))
        buffers, offsets = b.buffer_args([grad_in, g, y])
        if any(offsets):
            return contract.composite(qualname)(grad_output, output, dim, input_dtype)
        b.launch_1d(k, outer * inner, i, [*buffers, outer * inner, n, inner])
        return grad_in

    kernel.__name__ = kernel.__qualname__ = f"{name}_{b.name}"
    return kernel


def fused_kernels(b: LaunchBackend) -> dict[str, Callable[..., Any]]:
    """aten operator -> fused kernel of backend ``b``."""
    return {
        "aten::_softmax": _softmax_like(b, "_softmax", False),
        "aten::_log_softmax": _softmax_like(b, "_log_softmax", True),
        "aten::_softmax_backward_data": _softmax_backward_like(b, "_softmax_backward_data", False),
        "aten::_log_softmax_backward_data": _softmax_backward_like(
            b, "_log_softmax_backward_data", True),
    }


# Libraries holding the fused registrations, kept alive with the process.
_LIBRARIES: dict[str, Any] = {}


def register(b: LaunchBackend, dispatch_key: str) -> None:
    """Register backend ``b``'s :func:`fused_kernels` over core's composites under
    ``dispatch_key``."""
    register_kernels(fused_kernels(b), dispatch_key)


def register_kernels(kernels: dict[str, Callable[..., Any]], dispatch_key: str) -> None:
    """Register ``kernels`` (by ``ns::name``) over core's composites under ``dispatch_key``."""
    from torch.library import Library

    for qualname, kernel in kernels.items():
        ns, _, name = qualname.partition("::")
        contract.composite(qualname)  # defines the op (and checks it has a composite)
        lib = _LIBRARIES.get(ns)
        if lib is None:
            lib = _LIBRARIES[ns] = Library(ns, "IMPL", dispatch_key)
        lib.impl(name, kernel)
