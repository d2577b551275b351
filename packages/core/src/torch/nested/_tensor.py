"""``NestedTensor``: a batch of tensors of one rank whose sizes may differ (PyTorch's nested
tensors of the strided layout).

A wrapper subclass (``Tensor._make_wrapper_subclass``) over the list of its components: the
shell carries dtype and device (and a padded shape for autograd's bookkeeping); every aten
operator reaches ``__torch_dispatch__``, which runs it on each component (:mod:`._rules`). Dim 0
is the batch: a ``dim`` argument is shifted by one for the components, and an irregular dim has
no size (``size(d)`` raises, as in PyTorch).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import Tensor

__all__ = ["NestedTensor"]


def _padded_shape(components: Sequence[Tensor]) -> tuple[int, ...]:
    if not components:
        return (0,)
    rank = components[0].dim()
    return (len(components), *(max(c.shape[d] for c in components) for d in range(rank)))


class NestedTensor(Tensor):
    """Tensors of one rank and dtype, on one device, whose sizes may differ."""

    _planned_as_tensor = False

    @classmethod
    def __torch_function__(cls, func: Any, types: Any, args: tuple[Any, ...] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        # Products are run per component before they decompose: their composites fold the
        # batch dims of the (padded) shell into a matrix, which a nested tensor does not have.
        # Everything else reaches __torch_dispatch__ as aten operators.
        from . import _rules

        kwargs = kwargs or {}
        per_component = _rules.FUNCTIONS.get(getattr(func, "__name__", ""))
        with torch._C.DisableTorchFunctionSubclass():
            if per_component is not None:
                return _rules.each_component(per_component, args, kwargs)
            return func(*args, **kwargs)

    def __new__(cls, components: Sequence[Tensor], requires_grad: bool = False) -> NestedTensor:
        components = list(components)
        first = components[0] if components else None
        dtype = first.dtype if first is not None else torch.get_default_dtype()
        device = first.device if first is not None else torch.device("cpu")
        shell = Tensor._make_wrapper_subclass(cls, _padded_shape(components), dtype=dtype,
                                              device=device, requires_grad=requires_grad)
        shell._components = components
        return shell

    def __init__(self, components: Sequence[Tensor], requires_grad: bool = False) -> None:
        pass  # (everything is set by __new__)

    @property
    def is_nested(self) -> bool:
        return True

    @property
    def shape(self) -> Any:
        raise RuntimeError("Internal error: NestedTensorImpl doesn't support sizes. Please "
                           "file an issue.")

    def dim(self) -> int:
        return self._components[0].dim() + 1 if self._components else 1

    ndimension = dim

    @property
    def ndim(self) -> int:
        return self.dim()

    def size(self, dim: int | None = None) -> Any:
        if dim is None:
            raise RuntimeError("Internal error: NestedTensorImpl doesn't support sizes. "
                               "Please file an issue.")
        rank = self.dim()
        if not -rank <= dim < rank:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-rank}, "
                             f"{rank - 1}], but got {dim})")
        dim %= rank
        if dim == 0:
            return len(self._components)
        sizes = {c.shape[dim - 1] for c in self._components}
        if len(sizes) != 1:
            raise RuntimeError(f"Given dimension {dim} is irregular and does not have a size.")
        return sizes.pop()

    def numel(self) -> int:
        return sum(c.numel() for c in self._components)

    def is_contiguous(self, memory_format: Any = None) -> bool:
        return True

    def unbind(self, dim: int = 0) -> tuple[Tensor, ...]:
        """The components (views of the batch only along dim 0, as in PyTorch)."""
        if dim != 0:
            raise RuntimeError(f"NestedTensor can only be unbound along dimension 0 got "
                               f"dimension {dim} instead.")
        return _Unbind.apply(self)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, int):
            return self.unbind()[index]
        return super().__getitem__(index)

    def __iter__(self) -> Any:
        return iter(self.unbind())

    def __len__(self) -> int:
        return len(self._components)

    def _nested_tensor_size(self) -> Tensor:
        """The components' sizes, one row each."""
        return torch.tensor([list(c.shape) for c in self._components], dtype=torch.int64)

    def _nested_tensor_strides(self) -> Tensor:
        return torch.tensor([list(c.stride()) for c in self._components], dtype=torch.int64)

    def values(self) -> Tensor:
        """Every component's elements, flattened one after another."""
        if not self._components:
            return torch.empty(0, dtype=self.dtype, device=self.device)
        return torch.cat([c.reshape(-1) for c in self._components])

    def to_padded_tensor(self, padding: float, output_size: Sequence[int] | None = None
                         ) -> Tensor:
        """One dense tensor: the components in a batch, ``padding`` where they are shorter."""
        from . import to_padded_tensor

        return to_padded_tensor(self, padding, output_size)

    @classmethod
    def __torch_dispatch__(cls, func: Any, types: Any, args: tuple[Any, ...] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        from . import _rules

        return _rules.run(func, args, kwargs or {})

    def __repr__(self, *, tensor_contents: Any = None) -> str:
        inner = ",\n".join("  " + repr(c).replace("\n", "\n  ") for c in self._components)
        return f"nested_tensor([\n{inner}\n])"

    __str__ = __repr__

    def __reduce_ex__(self, protocol: int) -> Any:
        return (NestedTensor, (self._components, self.requires_grad))


class _Unbind(torch.autograd.Function):
    """``unbind()``: the components, with gradients that flow back into the nested tensor."""

    @staticmethod
    def forward(ctx: Any, nested: NestedTensor) -> tuple[Tensor, ...]:
        ctx.shapes = [c.shape for c in nested._components]
        ctx.like = [(c.dtype, c.device) for c in nested._components]
        return tuple(c.detach() for c in nested._components)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        filled = [torch.zeros(shape, dtype=dtype, device=device) if g is None else g
                  for g, shape, (dtype, device) in zip(grads, ctx.shapes, ctx.like)]
        return NestedTensor(filled)
