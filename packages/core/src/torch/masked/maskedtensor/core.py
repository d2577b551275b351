"""``MaskedTensor``: values with a boolean mask of the same shape that says which are present.

A wrapper subclass (``Tensor._make_wrapper_subclass``): the shell carries the shape, dtype and
device, and every aten operator reaches ``__torch_dispatch__``, which applies the operator to
the values and decides the result's mask by the rules of :mod:`._rules` (elementwise ops keep
the mask, reductions read only the present elements, views move values and mask together). An
operator without a rule raises TypeError, as PyTorch's MaskedTensor does.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor
from torch._core.tensor import _disabled_torch_function_impl

__all__ = ["MaskedTensor", "as_masked_tensor", "is_masked_tensor", "masked_tensor"]


# The value dtypes PyTorch's MaskedTensor takes (no complex).
_SUPPORTED = frozenset((torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.bool,
                        torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8))


def _check(data: Any, mask: Any) -> None:
    if not isinstance(data, Tensor):
        raise TypeError(f"data must be a Tensor, got {type(data).__name__}")
    if not isinstance(mask, Tensor):
        raise TypeError(f"mask must be a Tensor, got {type(mask).__name__}")
    if mask.dtype is not torch.bool:
        raise TypeError("mask must have dtype bool.")
    if data.dtype not in _SUPPORTED:
        raise TypeError(f"{data.dtype} is not supported in MaskedTensor.")
    if data.layout is not mask.layout:
        raise TypeError("data and mask must have the same layout.")
    if data.dim() != mask.dim():
        raise ValueError("data.dim() must equal mask.dim()")
    if data.shape != mask.shape:
        raise ValueError("data.size() must equal mask.size()")
    if data.device != mask.device:
        raise ValueError("data and mask must be on the same device")


class MaskedTensor(Tensor):
    """A tensor whose elements are present where ``mask`` is True (``torch.masked``)."""

    __torch_function__ = _disabled_torch_function_impl
    _planned_as_tensor = False

    def __new__(cls, data: Tensor, mask: Tensor, requires_grad: bool = False) -> MaskedTensor:
        _check(data, mask)
        if data.is_sparse:  # (kept dense: the rules compute on strided values)
            data, mask = data.to_dense(), mask.to_dense()
        shell = Tensor._make_wrapper_subclass(cls, data.shape, strides=data.stride(),
                                              dtype=data.dtype, device=data.device,
                                              requires_grad=requires_grad)
        shell._masked_data = data
        shell._masked_mask = mask
        if requires_grad:
            # the gradient of a masked leaf is masked as the leaf is, as in PyTorch
            shell.register_hook(lambda grad: MaskedTensor(_values(grad), mask))
        return shell

    def __init__(self, data: Tensor, mask: Tensor, requires_grad: bool = False) -> None:
        pass  # (everything is set by __new__)

    def get_data(self) -> Tensor:
        """The values, present or not (a masked-out value is whatever the data held)."""
        return _GetData.apply(self)

    def get_mask(self) -> Tensor:
        """The bool mask: True where a value is present."""
        return self._masked_mask

    def to_tensor(self, value: Any) -> Tensor:
        """A plain tensor: the present values, and ``value`` in the masked-out places."""
        data = self.get_data()
        return torch.where(self._masked_mask, data,
                           torch.tensor(value, dtype=data.dtype, device=data.device))

    def is_sparse_coo(self) -> bool:
        return False

    def is_sparse_csr(self) -> bool:
        return False

    @classmethod
    def __torch_dispatch__(cls, func: Any, types: Any, args: tuple[Any, ...] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        from . import _rules

        return _rules.run(func, args, kwargs or {})

    def __repr__(self, *, tensor_contents: Any = None) -> str:
        from ._str import masked_repr

        return masked_repr(self._masked_data, self._masked_mask)

    __str__ = __repr__

    def __reduce_ex__(self, protocol: int) -> Any:
        return (MaskedTensor, (self._masked_data, self._masked_mask, self.requires_grad))


def _values(t: Tensor) -> Tensor:
    return t._masked_data if isinstance(t, MaskedTensor) else t


class _GetData(torch.autograd.Function):
    """``get_data()``: the values, with a gradient that flows back to the MaskedTensor."""

    @staticmethod
    def forward(ctx: Any, masked: MaskedTensor) -> Tensor:
        return masked._masked_data.detach()

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> Any:
        return grad


class _AsMasked(torch.autograd.Function):
    """``as_masked_tensor``: a MaskedTensor whose gradient flows back to ``data``."""

    @staticmethod
    def forward(ctx: Any, data: Tensor, mask: Tensor) -> MaskedTensor:
        ctx.mask = mask
        return MaskedTensor(data.detach(), mask)

    @staticmethod
    def backward(ctx: Any, grad: Any) -> Any:
        # data's gradient is a MaskedTensor with the mask, as PyTorch gives it
        return MaskedTensor(_values(grad), ctx.mask), None


def masked_tensor(data: Tensor, mask: Tensor, requires_grad: bool = False) -> MaskedTensor:
    """A new MaskedTensor (a leaf) of ``data``'s values and ``mask``."""
    _check(data, mask)
    return MaskedTensor(data.detach().clone(), mask.clone(), requires_grad)


def as_masked_tensor(data: Tensor, mask: Tensor) -> MaskedTensor:
    """A MaskedTensor of ``data`` that stays in ``data``'s autograd graph."""
    _check(data, mask)
    return _AsMasked.apply(data, mask)


def is_masked_tensor(obj: Any) -> bool:
    """Whether ``obj`` is a MaskedTensor."""
    return isinstance(obj, MaskedTensor)
