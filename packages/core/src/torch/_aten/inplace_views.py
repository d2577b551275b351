"""The in-place view methods ``t_``, ``transpose_``, ``swapdims_``, ``swapaxes_``,
``squeeze_``, ``unsqueeze_`` and ``as_strided_``: the tensor itself takes the shape, strides
and offset of the view, over the same storage (no byte moves).

As in PyTorch they are in-place ops: refused on a leaf that requires grad (with grad mode on)
and on an inference tensor outside inference mode, and they bump the version counter the tensor
shares with its base. Autograd sees them as the out-of-place view: the tensor adopts the view's
``grad_fn``, whose backward maps the gradient back to the old geometry.
"""

from __future__ import annotations

from typing import Any

from .._core import config as _config
from .._core.tensor import Tensor

__all__ = ["as_strided_"]


def _adopt(self: Tensor, view: Tensor) -> Tensor:
    """``self`` takes ``view``'s geometry and autograd history, in place."""
    if self._requires_grad and self.grad_fn is None and _config.is_grad_enabled():
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    if self.__dict__.get("_inference") and not _config.is_inference_mode_enabled():
        raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not "
                           "allowed.You can make a clone to get a normal tensor before doing "
                           "inplace update.See https://github.com/pytorch/rfcs/pull/17 for "
                           "more details.")
    self._shape, self._stride, self._offset = view._shape, view._stride, view._offset
    self._interned_layout = None  # the layout changed: no stale fast-path key
    self._geometry = None
    if view.grad_fn is not None:
        self.grad_fn = view.grad_fn
    self._bump_version()
    return self


def t_(self: Tensor) -> Tensor:
    """In-place :meth:`Tensor.t`: a matrix transposed in place (0-d and 1-d stay)."""
    if self.dim() > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is "
                           f"{self.dim()}D")
    return _adopt(self, self.t())


def transpose_(self: Tensor, dim0: int, dim1: int) -> Tensor:
    """In-place :meth:`Tensor.transpose`."""
    return _adopt(self, self.transpose(dim0, dim1))


def swapdims_(self: Tensor, dim0: int, dim1: int) -> Tensor:
    """In-place :meth:`Tensor.swapdims` (:meth:`transpose_`)."""
    return _adopt(self, self.transpose(dim0, dim1))


def swapaxes_(self: Tensor, axis0: int, axis1: int) -> Tensor:
    """In-place :meth:`Tensor.swapaxes` (:meth:`transpose_`)."""
    return _adopt(self, self.transpose(axis0, axis1))


def squeeze_(self: Tensor, dim: Any = None) -> Tensor:
    """In-place :meth:`Tensor.squeeze`: the size-1 dims (of ``dim``, an int or a tuple, when
    given) removed."""
    return _adopt(self, self.squeeze() if dim is None else self.squeeze(dim))


def unsqueeze_(self: Tensor, dim: int) -> Tensor:
    """In-place :meth:`Tensor.unsqueeze`."""
    return _adopt(self, self.unsqueeze(dim))


def as_strided_(self: Tensor, size: Any, stride: Any, storage_offset: int | None = None
                ) -> Tensor:
    """In-place :meth:`Tensor.as_strided`: ``self`` reads its storage with the given sizes,
    strides and offset (its own offset when none is given)."""
    return _adopt(self, self.as_strided(size, stride, storage_offset))


METHODS: dict[str, Any] = {
    "t_": t_,
    "transpose_": transpose_,
    "swapdims_": swapdims_,
    "swapaxes_": swapaxes_,
    "squeeze_": squeeze_,
    "unsqueeze_": unsqueeze_,
    "as_strided_": as_strided_,
}
