"""Small questions and casts programs ask of tensors: ``torch.is_complex``, ``torch.detach``,
``Tensor.is_signed``, ``get_device``, ``is_same_size``, ``is_set_to``, ``dim_order``, ``H``/``mH``,
``type_as``, ``cfloat``/``cdouble``, ``resize_as_``, ``apply_``, ``is_pinned``,
``is_quantized``/``is_mkldnn`` and ``element in tensor``, with PyTorch's answers on a CPU build
without quantized or MKL-DNN tensors (those, and pinned memory, are always False)."""

from __future__ import annotations

from numbers import Number
from typing import Any

from .._core import dtype as _dtype
from .._core.tensor import Tensor

__all__ = ["detach", "is_complex", "is_same_size"]


def is_complex(input: Tensor) -> bool:
    """Whether ``input``'s dtype is complex."""
    return input.dtype.is_complex


def detach(input: Tensor) -> Tensor:
    """``input.detach()``: a tensor sharing its data, cut from the autograd graph."""
    return input.detach()


def is_signed(self: Tensor) -> bool:
    """Whether the dtype holds negative values (False for bool and uint8)."""
    return self.dtype.is_signed


def get_device(self: Tensor) -> int:
    """The device index of ``self``: -1 on the CPU, as in PyTorch."""
    if self.device.type == "cpu":
        return -1
    return self.device.index if self.device.index is not None else 0


def is_same_size(self: Tensor, other: Tensor) -> bool:
    """Whether ``self`` and ``other`` have the same shape (``torch.is_same_size`` too)."""
    if not isinstance(other, Tensor):
        raise TypeError(f"is_same_size(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(other).__name__}")
    return tuple(self.shape) == tuple(other.shape)


def type_as(self: Tensor, other: Tensor) -> Tensor:
    """``self`` with ``other``'s dtype and device (``self`` itself when it has both)."""
    return self.to(device=other.device, dtype=other.dtype)


def cfloat(self: Tensor, memory_format: Any = None) -> Tensor:
    """``self.to(torch.complex64)``."""
    return self.to(_dtype.complex64) if memory_format is None else self.to(
        _dtype.complex64, memory_format=memory_format)


def cdouble(self: Tensor, memory_format: Any = None) -> Tensor:
    """``self.to(torch.complex128)``."""
    return self.to(_dtype.complex128) if memory_format is None else self.to(
        _dtype.complex128, memory_format=memory_format)


def is_set_to(self: Tensor, other: Tensor) -> bool:
    """Whether ``self`` and ``other`` view the same storage with the same offset, sizes and
    strides."""
    return (self.untyped_storage().data_ptr() == other.untyped_storage().data_ptr()
            and self.storage_offset() == other.storage_offset()
            and tuple(self.shape) == tuple(other.shape) and self.stride() == other.stride())


def dim_order(self: Tensor) -> tuple[int, ...]:
    """The dimensions from outermost to innermost in memory (by decreasing stride, ties in
    dimension order): ``(0, 2, 3, 1)`` for a channels-last image batch."""
    strides = self.stride()
    return tuple(sorted(range(self.dim()), key=lambda d: (-strides[d], d)))


def is_pinned(self: Tensor, device: Any = None) -> bool:
    """Whether the tensor's storage is pinned host memory: the copies ``pin_memory`` makes
    (which needs an accelerator, as in PyTorch)."""
    return self._device.type == "cpu" and self.untyped_storage().is_pinned()


def record_stream(self: Tensor, stream: Any) -> None:
    """Mark a device tensor as used on ``stream`` (data loaders and prefetchers call it after
    a copy on a side stream). The device kit's streams are their device's one in-order queue,
    so a freed block is reused only behind the work queued before: nothing to record. A CPU
    tensor raises PyTorch's error (the operator has no CPU kernel)."""
    if self._device.type == "cpu":
        raise NotImplementedError("Could not run 'aten::record_stream' with arguments from the "
                                  "'CPU' backend.")


def resize_as_(self: Tensor, other: Tensor, *, memory_format: Any = None) -> Tensor:
    """``self.resize_(other.shape)``."""
    return self.resize_(other.shape)


def apply_(self: Tensor, callable: Any) -> Tensor:
    """Replace each element by ``callable(element)`` (a Python number function; CPU tensors
    only, as in PyTorch); returns ``self``."""
    if self.device.type != "cpu":
        raise TypeError("apply_ is only implemented on CPU tensors")
    flat = self.reshape(-1).tolist()
    return self.copy_(self.new_tensor([callable(v) for v in flat]).reshape(self.shape))


def adjoint_h(self: Tensor) -> Tensor:
    """``Tensor.H``: the conjugate transpose of a matrix (a 0-d tensor is its own)."""
    if self.dim() == 0:
        return self
    if self.dim() != 2:
        hint = " For batches of matrices, consider using tensor.mH" if self.dim() > 2 else ""
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got "
                           f"{self.dim()}-D tensor.{hint}")
    return self.transpose(0, 1).conj()


def adjoint_mh(self: Tensor) -> Tensor:
    """``Tensor.mH``: the conjugate transpose of the last two dimensions."""
    if self.dim() == 0:
        return self
    if self.dim() < 2:
        raise RuntimeError(f"tensor.mH is only supported on matrices or batches of matrices. "
                           f"Got {self.dim()}-D tensor.")
    return self.transpose(-2, -1).conj()


def contains(self: Tensor, element: Any) -> bool:
    """``element in self``: whether any element of ``self`` equals ``element`` (a tensor or a
    number), as PyTorch's ``Tensor.__contains__``."""
    if not isinstance(element, (Tensor, Number)):
        raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you passed "
                           f"in a {type(element)}.")
    return bool((self == element).any().item())


METHODS: dict[str, Any] = {
    "is_signed": is_signed,
    "get_device": get_device,
    "is_same_size": is_same_size,
    "type_as": type_as,
    "cfloat": cfloat,
    "cdouble": cdouble,
    "__contains__": contains,
    "is_set_to": is_set_to,
    "dim_order": dim_order,
    "resize_as_": resize_as_,
    "apply_": apply_,
    "is_pinned": is_pinned,
    "record_stream": record_stream,
    "H": property(adjoint_h, doc="The conjugate transpose of a matrix."),
    "mH": property(adjoint_mh, doc="The conjugate transpose of the last two dimensions."),
    # no quantized or MKL-DNN layouts here: the answers of PyTorch's plain strided tensors
    "is_quantized": property(lambda self: False, doc="False: no quantized tensors."),
    "is_mkldnn": property(lambda self: False, doc="False: no MKL-DNN tensors."),
    "is_nested": property(lambda self: False, doc="False: no nested (ragged) tensors."),
}
