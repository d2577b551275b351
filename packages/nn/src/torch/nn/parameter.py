"""``nn.Parameter`` and the placeholders of lazy modules, as in PyTorch.

A parameter is a ``Tensor`` subclass that a :class:`~torch.nn.Module` registers when it is
assigned as an attribute. It shares memory (and the version counter) with the tensor it wraps,
is a leaf, and requires grad by default. Like PyTorch's, it opts out of ``__torch_function__``
(``torch._C._disabled_torch_function_impl``), so ops on parameters return plain tensors.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

__all__ = ["Buffer", "Parameter", "UninitializedBuffer", "UninitializedParameter"]


def _share(cls: type, data: Tensor) -> Tensor:
    """A leaf of class ``cls`` over ``data``'s memory and version counter."""
    return Tensor._make_subclass(cls, data)


class _ParameterMeta(type(Tensor)):  # type: ignore[misc]  (Tensor's metaclass)
    """``isinstance(t, Parameter)`` also holds for a tensor of a custom subclass made a
    parameter (``Parameter(MySubclass(...))`` keeps its own class and is marked instead)."""

    def __instancecheck__(cls, instance: Any) -> bool:
        if cls is Parameter and isinstance(instance, Tensor) and \
                getattr(instance, "_is_param", False):
            return True
        return super().__instancecheck__(instance)


class Parameter(Tensor, metaclass=_ParameterMeta):
    """A tensor that is a module parameter: ``Parameter(data=None, requires_grad=True)``.

    A plain tensor (or parameter) becomes a ``Parameter`` sharing its memory. A tensor of
    another subclass (a wrapper subclass such as a quantized weight) stays of its class, as in
    PyTorch: the parameter is its ``detach()`` with ``requires_grad`` set and marked
    ``_is_param``, which ``isinstance(t, Parameter)`` recognises."""

    __torch_function__ = torch._C._disabled_torch_function_impl

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Parameter:
        if data is None:
            data = torch.empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): argument 'data' must be Tensor, not "
                            f"{type(data).__name__}")
        if type(data) is not Tensor and type(data) is not Parameter and \
                not isinstance(data, UninitializedTensorMixin) and not data.is_sparse:
            return _custom_parameter(data, requires_grad)
        out = _share(cls, data)
        out.requires_grad = bool(requires_grad)
        return out

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        pass  # everything happened in __new__ (Tensor.__init__ takes no arguments)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + Tensor.__repr__(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> Parameter:
        if id(self) in memo:
            return memo[id(self)]
        out = type(self)(self.detach().clone(memory_format=torch.preserve_format),
                         self.requires_grad)
        memo[id(self)] = out
        return out

    def __reduce_ex__(self, protocol: int) -> Any:
        return (_rebuild_parameter, (self.detach(), self.requires_grad))


def _custom_parameter(data: Tensor, requires_grad: bool) -> Any:
    """``Parameter(data)`` for a tensor of a custom subclass: it keeps its class (its own
    ``__torch_dispatch__``/``__torch_function__`` go on working), detached and marked."""
    out = data.detach().requires_grad_(requires_grad)
    if type(out) is not type(data):
        raise RuntimeError(
            f"Creating a Parameter from an instance of type {type(data).__name__} requires "
            f"that detach() returns an instance of the same type, but return type "
            f"{type(out).__name__} was found instead. To use the type as a Parameter, please "
            "correct the detach() semantics defined by its __torch_dispatch__() "
            "implementation.")
    out._is_param = True
    return out


def _rebuild_parameter(data: Tensor, requires_grad: bool) -> Parameter:
    return Parameter(data, requires_grad)


class Buffer(Tensor):
    """Marks a tensor assigned to a module attribute as a buffer: ``Buffer(data,
    persistent=True)``; the module registers the plain tensor, not this wrapper."""

    __torch_function__ = torch._C._disabled_torch_function_impl

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True) -> Buffer:
        if data is None:
            data = torch.empty(0)
        out = _share(cls, data)
        out.requires_grad = data.requires_grad
        out.__dict__["persistent"] = persistent
        return out

    def __init__(self, data: Tensor | None = None, *, persistent: bool = True) -> None:
        pass


class UninitializedTensorMixin:
    """Shared by the placeholders of lazy modules: no data until ``materialize``."""

    __torch_function__ = torch._C._disabled_torch_function_impl

    _allowed = frozenset(("__class__", "__dict__", "materialize", "requires_grad", "grad",
                          "grad_fn", "is_leaf", "data", "_interned_layout", "__repr__", "device",
                          "dtype", "_device", "_dtype", "__reduce_ex__", "_grad", "shape",
                          "_shape"))

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        """Allocate the data with ``shape`` and become a ``Parameter`` (or plain buffer)."""
        device = self._device if device is None else device
        dtype = self._dtype if dtype is None else dtype
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        data = torch.empty(shape, device=device, dtype=dtype)
        self._storage = data._storage
        self._shape = data._shape
        self._stride = data._stride
        self._offset = 0
        self._interned_layout = None
        self.__class__ = self.cls_to_become  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    def __reduce_ex__(self, protocol: int) -> Any:
        raise RuntimeError(f"'{type(self).__name__}' cannot be pickled before it is "
                           "materialized (run a forward pass of its module first)")


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """The parameter of a lazy module (``LazyLinear``) before its first forward."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device: Any = None,
                dtype: Any = None) -> UninitializedParameter:
        data = torch.empty(0, device=device, dtype=dtype)
        out = _share(cls, data)
        out.requires_grad = requires_grad
        return out

    def __init__(self, requires_grad: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        pass


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """The buffer of a lazy module before its first forward."""

    cls_to_become = Tensor

    def __new__(cls, requires_grad: bool = False, device: Any = None,
                dtype: Any = None) -> UninitializedBuffer:
        data = torch.empty(0, device=device, dtype=dtype)
        out = _share(cls, data)
        out.requires_grad = requires_grad
        return out

    def __init__(self, requires_grad: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        pass


def is_lazy(param: Any) -> bool:
    """Whether ``param`` is an uninitialized placeholder."""
    return isinstance(param, UninitializedTensorMixin)
