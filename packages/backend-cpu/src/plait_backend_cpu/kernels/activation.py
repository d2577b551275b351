"""Wrappers of the fused GELU kernels: they override core's composite aten ops ``gelu`` and
``gelu_backward`` under the CPU key (docs/ops.md, "Fused composites").

A wrapper makes one native call over contiguous operands of one floating dtype and one shape,
into a new contiguous output. Anything else (an unknown ``approximate``, whose error the
composite raises; a non-contiguous operand, whose result the composite lays out as PyTorch
does; mixed dtypes or shapes, which the composite promotes and broadcasts; integer dtypes)
runs the composite from core, which is also the reference the tests compare with.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

from ._common import Kernel, composite, floating_codes

# approximate -> the native kernels' `tanh` flag
_TANH = {"none": False, "tanh": True}


def make_kernels(
    native: ModuleType,
    dtype_codes: Mapping[Any, int],
    reference: Callable[[str], Kernel],
) -> dict[str, Kernel]:
    """The fused GELU kernels, keyed by aten op (``"aten::gelu"``, ``"aten::gelu_backward"``)."""
    from torch.backends import contract

    empty = contract.empty
    codes = floating_codes(native, dtype_codes)
    forward_native = native.gelu_forward
    backward_native = native.gelu_backward

    def plan_gelu(self: Any, approximate: str = "none") -> Kernel | None:
        """The kernel of one signature of a contiguous, non-empty input the native call
        takes: the checks and the output's layout worked out once."""
        code = codes.get(self.dtype)
        tanh = _TANH.get(approximate) if approximate.__class__ is str else None
        n = self.numel()
        if code is None or tanh is None or not n or not self.is_contiguous():
            return None
        new_output = contract.allocator([(tuple(self.shape), self.dtype, self.device)])

        def planned(self: Any, approximate: str = "none") -> Any:
            (out,), (dst,) = new_output()
            if not forward_native(code, tanh, n, dst, self.data_ptr()):
                return None  # the generic path
            return out

        return planned

    def plan_gelu_backward(grad_output: Any, self: Any,
                           approximate: str = "none") -> Kernel | None:
        """The kernel of one signature of contiguous, non-empty operands of one dtype and
        shape."""
        code = codes.get(self.dtype)
        tanh = _TANH.get(approximate) if approximate.__class__ is str else None
        n = self.numel()
        if (code is None or tanh is None or not n or grad_output.dtype != self.dtype
                or tuple(grad_output.shape) != tuple(self.shape)
                or not self.is_contiguous() or not grad_output.is_contiguous()):
            return None
        new_output = contract.allocator([(tuple(self.shape), self.dtype, self.device)])

        def planned(grad_output: Any, self: Any, approximate: str = "none") -> Any:
            (grad_in,), (dst,) = new_output()
            if not backward_native(code, tanh, n, dst, grad_output.data_ptr(),
                                   self.data_ptr()):
                return None  # the generic path
            return grad_in

        return planned

    @contract.plannable(plan_gelu, native=True)
    def gelu(self: Any, approximate: str = "none") -> Any:
        code = codes.get(self.dtype)
        tanh = _TANH.get(approximate) if approximate.__class__ is str else None
        if code is None or tanh is None or not self.is_contiguous():
            return composite("aten::gelu")(self, approximate=approximate)
        out = empty(self.shape, self.dtype, self.device)
        n = self.numel()
        if n and not forward_native(code, tanh, n, out.data_ptr(), self.data_ptr()):
            return composite("aten::gelu")(self, approximate=approximate)
        return out

    @contract.plannable(plan_gelu_backward, native=True)
    def gelu_backward(grad_output: Any, self: Any, approximate: str = "none") -> Any:
        code = codes.get(self.dtype)
        tanh = _TANH.get(approximate) if approximate.__class__ is str else None
        if (code is None or tanh is None or grad_output.dtype != self.dtype
                or tuple(grad_output.shape) != tuple(self.shape)
                or not self.is_contiguous() or not grad_output.is_contiguous()):
            return composite("aten::gelu_backward")(grad_output, self, approximate=approximate)
        grad_in = empty(self.shape, self.dtype, self.device)
        n = self.numel()
        if n and not backward_native(code, tanh, n, grad_in.data_ptr(), grad_output.data_ptr(),
                                     self.data_ptr()):
            return composite("aten::gelu_backward")(grad_output, self, approximate=approximate)
        return grad_in

    gelu.__name__ = gelu.__qualname__ = "gelu_cpu"
    gelu_backward.__name__ = gelu_backward.__qualname__ = "gelu_backward_cpu"
    return {"aten::gelu": gelu, "aten::gelu_backward": gelu_backward}
