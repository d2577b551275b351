"""Wrappers of the fused normalisation kernels: they override core's composite aten ops
``_softmax``, ``_log_softmax``, their backward ops ``_softmax_backward_data`` /
``_log_softmax_backward_data``, ``native_layer_norm`` and ``native_layer_norm_backward``
under the CPU key (docs/architecture.md).

A wrapper receives the aten op's arguments, checks them, allocates its outputs and makes one
native call over contiguous operands (a non-contiguous input is copied first; outputs are
contiguous, as PyTorch's). Anything the native code does not take (a dtype without a code,
``half_to_float``, mixed dtypes, layouts it cannot express) runs the op's composite kernel
from core, which is also the reference the tests compare with.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import Any

from ._common import Kernel, addresses, composite, floating_codes


def _product(sizes: Sequence[int]) -> int:
    n = 1
    for s in sizes:
        n *= s
    return n


def make_kernels(
    native: ModuleType,
    dtype_codes: Mapping[Any, int],
    reference: Callable[[str], Kernel],
) -> dict[str, Kernel]:
    """The fused kernels, keyed by aten op (``"aten::_softmax"``...)."""
    from torch.backends import contract

    # contract.empty: one allocation, where torch.empty parses arguments and dispatches
    # aten::empty (a dispatch mode still sees it: contract.empty allocates through the mode)
    empty = contract.empty
    codes = floating_codes(native, dtype_codes)

    def split(shape: Sequence[int], dim: int) -> tuple[int, int, int] | None:
        """(outer, dim size, inner) for a softmax along ``dim``; None if ``dim`` is out of
        range (the composite raises PyTorch's error)."""
        ndim = len(shape)
        bound = max(ndim, 1)  # a 0-d tensor takes dim 0 and -1
        if not isinstance(dim, int) or not -bound <= dim < bound:
            return None
        if ndim == 0:
            return 1, 1, 1
        d = dim % ndim
        return _product(shape[:d]), shape[d], _product(shape[d + 1:])

    def softmax_like(name: str, log: bool) -> Kernel:
        qualname = f"aten::{name}"
        forward = native.softmax_forward

        def plan(self: Any, dim: int, half_to_float: bool = False) -> Kernel | None:
            """The kernel of one signature of a contiguous input: its (outer, dim, inner)
            split worked out once."""
            code = codes.get(self.dtype)
            shape = tuple(self.shape)
            layout = split(shape, dim)
            if (code is None or half_to_float or layout is None or not self.is_contiguous()
                    or not layout[0] * layout[1] * layout[2]):
                return None
            outer, size, inner = layout
            new_output = contract.allocator([(shape, self.dtype, self.device)])
            item = self.dtype.itemsize  # (`size` is the softmax dim's)

            def planned(self: Any, dim: int, half_to_float: bool = False) -> Any:
                src = self._storage._ptr + self._offset * item  # (data_ptr(), written out)
                (out,), (dst,) = new_output()
                if not src or not forward(code, log, outer, size, inner, dst, src):
                    return None  # the generic path
                return out

            return planned

        @contract.plannable(plan, native=True)
        def kernel(self: Any, dim: int, half_to_float: bool = False) -> Any:
            dtype = self.dtype
            code = codes.get(dtype)
            shape = tuple(self.shape)
            layout = split(shape, dim)
            if code is None or half_to_float or layout is None:
                return composite(qualname)(self, dim, half_to_float)
            x = self.contiguous()
            out = empty(shape, dtype, self.device)
            if not layout[0] * layout[1] * layout[2]:
                return out
            ptrs = addresses(out, x)
            if ptrs is None or not native.softmax_forward(code, log, *layout, *ptrs):
                return composite(qualname)(self, dim, half_to_float)
            return out

        kernel.__name__ = kernel.__qualname__ = f"{name}_cpu"
        return kernel

    def softmax_backward_like(name: str, log: bool) -> Kernel:
        qualname = f"aten::{name}"
        backward = native.softmax_backward

        def plan(grad_output: Any, output: Any, dim: int, input_dtype: Any) -> Kernel | None:
            """The kernel of one signature of contiguous operands of one dtype."""
            code = codes.get(output.dtype)
            shape = tuple(output.shape)
            layout = split(shape, dim)
            if (code is None or layout is None or grad_output.dtype != output.dtype
                    or input_dtype != output.dtype or tuple(grad_output.shape) != shape
                    or not grad_output.is_contiguous() or not output.is_contiguous()
                    or not layout[0] * layout[1] * layout[2]):
                return None
            outer, size, inner = layout
            new_output = contract.allocator([(shape, output.dtype, output.device)])
            item = output.dtype.itemsize

            def planned(grad_output: Any, output: Any, dim: int, input_dtype: Any) -> Any:
                (grad_in,), (dst,) = new_output()
                # (the operands' data_ptr(), written out: one dtype, checked by the plan)
                if not backward(code, log, outer, size, inner, dst,
                                grad_output._storage._ptr + grad_output._offset * item,
                                output._storage._ptr + output._offset * item):
                    return None  # the generic path
                return grad_in

            return planned

        @contract.plannable(plan, native=True)
        def kernel(grad_output: Any, output: Any, dim: int, input_dtype: Any) -> Any:
            code = codes.get(output.dtype)
            layout = split(tuple(output.shape), dim)
            if (code is None or layout is None or grad_output.dtype != output.dtype
                    or input_dtype != output.dtype
                    or tuple(grad_output.shape) != tuple(output.shape)):
                return composite(qualname)(grad_output, output, dim, input_dtype)
            g, y = grad_output.contiguous(), output.contiguous()
            grad_in = empty(output.shape, output.dtype, output.device)
            if not grad_in.numel():
                return grad_in
            ptrs = addresses(grad_in, g, y)
            if ptrs is None or not native.softmax_backward(code, log, *layout, *ptrs):
                return composite(qualname)(grad_output, output, dim, input_dtype)
            return grad_in

        kernel.__name__ = kernel.__qualname__ = f"{name}_cpu"
        return kernel

    layer_norm_forward = native.layer_norm_forward

    def plan_layer_norm(input: Any, normalized_shape: Sequence[int], weight: Any, bias: Any,
                        eps: float) -> Kernel | None:
        """The kernel of one signature of contiguous operands of one dtype: the checks, the
        (rows, cols) view and the statistics' shape worked out once."""
        try:
            axis, rows, cols = contract.check_layer_norm(input, normalized_shape, weight, bias)
        except (RuntimeError, NotImplementedError, TypeError):
            return None  # the kernel raises it on every call
        code = codes.get(input.dtype)
        operands = [t for t in (input, weight, bias) if t is not None]
        if (code is None or not rows or any(t.dtype != input.dtype or not t.is_contiguous()
                                            for t in operands)):
            return None
        shape = tuple(input.shape)
        stat_shape = shape[:axis] + (1,) * (len(shape) - axis)
        dtype, device, epsilon = input.dtype, input.device, float(eps)
        new_outputs = contract.allocator([(shape, dtype, device), (stat_shape, dtype, device),
                                          (stat_shape, dtype, device)])

        size = dtype.itemsize  # (every operand's: checked above)

        def planned(input: Any, normalized_shape: Sequence[int], weight: Any, bias: Any,
                    eps: float) -> Any:
            # the operands' data_ptr(), written out
            src = input._storage._ptr + input._offset * size
            outs, (out, mean, rstd) = new_outputs()
            if not src or not layer_norm_forward(
                    code, rows, cols, epsilon, out, mean, rstd, src,
                    weight._storage._ptr + weight._offset * size if weight is not None else 0,
                    bias._storage._ptr + bias._offset * size if bias is not None else 0):
                return None  # the generic path
            return outs

        return planned

    @contract.plannable(plan_layer_norm, native=True)
    def native_layer_norm(input: Any, normalized_shape: Sequence[int], weight: Any,
                          bias: Any, eps: float) -> Any:
        axis, rows, cols = contract.check_layer_norm(input, normalized_shape, weight, bias)
        code = codes.get(input.dtype)
        if code is None or any(t is not None and t.dtype != input.dtype for t in (weight, bias)):
            return composite("aten::native_layer_norm")(input, normalized_shape, weight, bias,
                                                        eps)
        shape = tuple(input.shape)
        stat_shape = shape[:axis] + (1,) * (len(shape) - axis)
        x = input.contiguous()
        w = weight.contiguous() if weight is not None else None
        b = bias.contiguous() if bias is not None else None
        out = empty(shape, input.dtype, input.device)
        mean = empty(stat_shape, input.dtype, input.device)
        rstd = empty(stat_shape, input.dtype, input.device)
        if rows == 0:
            return out, mean, rstd
        ptrs = addresses(out, mean, rstd, x, w, b)
        if ptrs is None or not native.layer_norm_forward(code, rows, cols, float(eps), *ptrs):
            return composite("aten::native_layer_norm")(input, normalized_shape, weight, bias,
                                                        eps)
        return out, mean, rstd

    layer_norm_backward = native.layer_norm_backward

    def plan_layer_norm_backward(grad_out: Any, input: Any, normalized_shape: Sequence[int],
                                 mean: Any, rstd: Any, weight: Any, bias: Any,
                                 output_mask: Sequence[bool]) -> Kernel | None:
        """The kernel of one signature of contiguous operands of one dtype: the checks, the
        (rows, cols) view and which gradients are wanted worked out once."""
        try:
            _axis, rows, cols = contract.check_layer_norm(input, normalized_shape, weight, bias)
        except (RuntimeError, NotImplementedError, TypeError):
            return None
        code = codes.get(input.dtype)
        operands = [t for t in (grad_out, input, mean, rstd, weight, bias) if t is not None]
        if (code is None or not rows or tuple(grad_out.shape) != tuple(input.shape)
                or mean.numel() != rows or rstd.numel() != rows
                or any(t.dtype != input.dtype or not t.is_contiguous() for t in operands)):
            return None
        mask = list(output_mask) + [False] * (3 - len(output_mask))
        want_dx, want_dw = mask[0], mask[1] and weight is not None
        want_db = mask[2] and bias is not None
        if not (want_dx or want_dw or want_db):
            return None
        dtype, device = input.dtype, input.device
        # the wanted gradients' layouts, in (dx, dw, db) order; an unwanted one is None, at
        # address 0
        wanted = [(want_dx, tuple(input.shape)),
                  (want_dw, tuple(weight.shape) if weight is not None else None),
                  (want_db, tuple(bias.shape) if bias is not None else None)]
        new_outputs = contract.allocator([(shape, dtype, device)
                                          for want, shape in wanted if want])
        # per gradient: its place among the allocated outputs, or None
        picks = []
        for want, _shape in wanted:
            picks.append(sum(p is not None for p in picks) if want else None)
        every = None not in picks
        size = dtype.itemsize  # (every operand's: checked above)

        def planned(grad_out: Any, input: Any, normalized_shape: Sequence[int], mean: Any,
                    rstd: Any, weight: Any, bias: Any, output_mask: Sequence[bool]) -> Any:
            grads, ptrs = new_outputs()
            if not every:
                made, addresses = grads, ptrs
                grads = tuple(made[k] if k is not None else None for k in picks)
                ptrs = tuple(addresses[k] if k is not None else 0 for k in picks)
            if not layer_norm_backward(
                    code, rows, cols, *ptrs,  # (the operands' data_ptr(), written out)
                    grad_out._storage._ptr + grad_out._offset * size,
                    input._storage._ptr + input._offset * size,
                    mean._storage._ptr + mean._offset * size,
                    rstd._storage._ptr + rstd._offset * size,
                    weight._storage._ptr + weight._offset * size if weight is not None else 0):
                return None  # the generic path
            return grads

        return planned

    @contract.plannable(plan_layer_norm_backward, native=True)
    def native_layer_norm_backward(grad_out: Any, input: Any, normalized_shape: Sequence[int],
                                   mean: Any, rstd: Any, weight: Any, bias: Any,
                                   output_mask: Sequence[bool]) -> Any:
        args = (grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask)
        _axis, rows, cols = contract.check_layer_norm(input, normalized_shape, weight, bias)
        code = codes.get(input.dtype)
        same = all(t.dtype == input.dtype for t in (grad_out, mean, rstd, weight, bias)
                   if t is not None)
        if (code is None or not same or tuple(grad_out.shape) != tuple(input.shape)
                or mean.numel() != rows or rstd.numel() != rows):
            return composite("aten::native_layer_norm_backward")(*args)
        mask = list(output_mask) + [False] * (3 - len(output_mask))
        dev, dt = input.device, input.dtype
        dx = empty(input.shape, dt, dev) if mask[0] else None
        dw = (empty(weight.shape, dt, dev)
              if mask[1] and weight is not None else None)
        db = (empty(bias.shape, dt, dev)
              if mask[2] and bias is not None else None)
        if dx is None and dw is None and db is None:
            return None, None, None
        # the contiguous operands stay referenced until the native call has returned
        operands = (grad_out.contiguous(), input.contiguous(), mean.contiguous(),
                    rstd.contiguous(), weight.contiguous() if weight is not None else None)
        ptrs = addresses(dx, dw, db, *operands)
        if ptrs is None or not native.layer_norm_backward(code, rows, cols, *ptrs):
            return composite("aten::native_layer_norm_backward")(*args)
        return dx, dw, db

    native_layer_norm.__name__ = native_layer_norm.__qualname__ = "native_layer_norm_cpu"
    native_layer_norm_backward.__name__ = "native_layer_norm_backward_cpu"
    native_layer_norm_backward.__qualname__ = "native_layer_norm_backward_cpu"
    return {
        "aten::_softmax": softmax_like("_softmax", False),
        "aten::_log_softmax": softmax_like("_log_softmax", True),
        "aten::_softmax_backward_data": softmax_backward_like("_softmax_backward_data", False),
        "aten::_log_softmax_backward_data": softmax_backward_like("_log_softmax_backward_data",
                                                                  True),
        "aten::native_layer_norm": native_layer_norm,
        "aten::native_layer_norm_backward": native_layer_norm_backward,
    }
