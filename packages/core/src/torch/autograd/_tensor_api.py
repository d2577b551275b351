"""The autograd methods of ``Tensor``: ``backward``, hooks, ``retain_grad``, ``detach_``,
``.data``, ``output_nr``, ``is_inference``; bound onto the class when autograd loads."""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Callable
from typing import Any

from .._core.tensor import Tensor
from ._backward import backward as _backward
from .graph import RemovableHandle, _HookDict


def backward(self: Tensor, gradient: Any = None, retain_graph: bool | None = None,
             create_graph: bool = False, inputs: Any = None) -> None:
    """Accumulate the gradient of this tensor into the leaves' ``.grad``."""
    _backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def register_hook(self: Tensor, hook: Callable[[Tensor], Any]) -> RemovableHandle:
    """``hook(grad)`` runs when this tensor's gradient is computed; it may return a new one."""
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self.grad_fn is not None:
        return self.grad_fn._register_tensor_hook(self.__dict__.get("_output_nr", 0), hook)
    from ._nodes import edge_of

    node = edge_of(self)[0]  # (the leaf's accumulator holds its hooks)
    hooks = node._leaf_hooks
    if hooks is None:
        hooks = node._leaf_hooks = _HookDict()
        node._keep = self  # the hooks run even if the leaf is dropped
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    return handle


def register_post_accumulate_grad_hook(self: Tensor, hook: Callable[[Tensor], None]
                                       ) -> RemovableHandle:
    """``hook(tensor)`` runs after a gradient was accumulated into this leaf's ``.grad``."""
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                           "tensors")
    from ._nodes import edge_of

    node, _ = edge_of(self)
    node._keep = self  # the hooks run even if the leaf is dropped
    if node._post_hooks is None:
        node._post_hooks = _HookDict()
    handle = RemovableHandle(node._post_hooks)
    node._post_hooks[handle.id] = hook
    return handle


def retain_grad(self: Tensor) -> None:
    """Keep the gradient of this non-leaf tensor in ``.grad`` after backward."""
    if not self.requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if self.grad_fn is None:
        return  # leaves keep theirs anyway
    node = self.grad_fn
    if node._retain is None:
        node._retain = {}
    node._retain[self.__dict__.get("_output_nr", 0)] = weakref.ref(self)
    self.__dict__["_retains_grad"] = True


def retains_grad(self: Tensor) -> bool:
    return bool(self.__dict__.get("_retains_grad", False)) and self.grad_fn is not None


def detach_(self: Tensor) -> Tensor:
    """Detach in place: this tensor becomes a leaf that does not require grad."""
    if self._base is not None and self._base.requires_grad:
        raise RuntimeError("Can't detach views in-place. Use detach() instead.")
    self.grad_fn = None
    self._requires_grad = False
    return self


def _get_data(self: Tensor) -> Tensor:
    out = Tensor._make(self._storage, self._shape, self._stride, self._offset, self._dtype,
                       self._device)
    return out


def _set_data(self: Tensor, value: Tensor) -> None:
    if not isinstance(value, Tensor):
        raise TypeError(f"data must be a Tensor, not {type(value).__name__}")
    self._storage, self._shape, self._stride, self._offset = (
        value._storage, value._shape, value._stride, value._offset)
    self._dtype, self._device = value._dtype, value._device
    self._interned_layout = None  # the layout changed


def _get_grad(self: Tensor) -> Tensor | None:
    if self.grad_fn is not None and not self.__dict__.get("_retains_grad") and self._grad is None:
        warnings.warn(
            "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its "
            ".grad attribute won't be populated during autograd.backward(). If you indeed want "
            "the .grad field to be populated for a non-leaf Tensor, use .retain_grad() on the "
            "non-leaf Tensor.", UserWarning, stacklevel=2)
    return self._grad


def output_nr(self: Tensor) -> int:
    return self.__dict__.get("_output_nr", 0)


def backward_hooks(self: Tensor) -> dict[int, Any] | None:
    """``Tensor._backward_hooks``: the hooks :func:`register_hook` gave this tensor (id ->
    hook, in registration order), or None, as PyTorch's attribute reads."""
    if self.grad_fn is not None:
        prehooks = self.grad_fn._tensor_prehooks
        hooks = prehooks.get(self.__dict__.get("_output_nr", 0)) if prehooks else None
    else:
        acc = getattr(self, "_grad_accumulator", None)
        hooks = acc._leaf_hooks if acc is not None else None
    return dict(hooks) if hooks else None


def is_inference(self: Tensor) -> bool:
    return bool(self.__dict__.get("_inference", False))


METHODS = {
    "backward": backward,
    "register_hook": register_hook,
    "register_post_accumulate_grad_hook": register_post_accumulate_grad_hook,
    "retain_grad": retain_grad,
    "detach_": detach_,
    "is_inference": is_inference,
}


def install() -> None:
    for name, fn in METHODS.items():
        setattr(Tensor, name, fn)
    Tensor.retains_grad = property(retains_grad)
    Tensor.data = property(_get_data, _set_data)
    Tensor.output_nr = property(output_nr)
    Tensor._backward_hooks = property(backward_hooks)
    Tensor.grad = property(_get_grad, Tensor.grad.fset)
