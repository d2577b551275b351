"""``torch.nested``: batches of tensors whose sizes differ (PyTorch's nested tensors).

Plait has the strided layout (``torch.strided``, the default): a :class:`NestedTensor` holds its
components and runs each operator on every one of them. The jagged layout (``torch.jagged``,
one buffer with offsets and symbolic ragged sizes) is not implemented: asking for it raises
NotImplementedError.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import Tensor

from ._tensor import NestedTensor

__all__ = ["as_nested_tensor", "masked_select", "narrow", "nested_tensor",
           "nested_tensor_from_jagged", "to_padded_tensor"]


def _strided_only(layout: Any, fn: str) -> None:
    if layout is not None and layout is not torch.strided:
        raise NotImplementedError(
            f"torch.nested.{fn}(): layout={layout} is not supported; Plait's nested tensors "
            f"have the strided layout (torch.strided) only")


def _components(tensors: Any, dtype: Any, device: Any, fn: str) -> list[Tensor]:
    if isinstance(tensors, Tensor):
        tensors = list(tensors.unbind(0)) if tensors.dim() else [tensors]
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"torch.nested.{fn}(): expected a list of tensors, got "
                        f"{type(tensors).__name__}")
    parts = [torch.as_tensor(t, dtype=dtype, device=device) for t in tensors]
    for i, part in enumerate(parts[1:], 1):
        if part.dim() != parts[0].dim():
            raise RuntimeError(
                f"All Tensors given to nested_tensor must have the same dimension. Found "
                f"dimension {part.dim()} for Tensor at index {i} and dimension "
                f"{parts[0].dim()} for Tensor at index 0.")
        if part.dtype != parts[0].dtype:
            raise RuntimeError("All Tensors given to nested_tensor must have the same dtype")
        if part.device != parts[0].device:
            raise RuntimeError("All Tensors given to nested_tensor must be on the same device")
    return parts


def nested_tensor(tensor_list: Any, *, dtype: torch.dtype | None = None, layout: Any = None,
                  device: Any = None, requires_grad: bool = False,
                  pin_memory: bool = False) -> NestedTensor:
    """A nested tensor (a leaf) of copies of ``tensor_list``'s tensors (or nested lists of
    numbers), which must share their rank."""
    _strided_only(layout, "nested_tensor")
    parts = _components(tensor_list, dtype, device, "nested_tensor")
    return NestedTensor([p.detach().clone() for p in parts], requires_grad=requires_grad)


class _AsNested(torch.autograd.Function):
    """``as_nested_tensor``: a nested tensor whose gradient flows back to the components."""

    @staticmethod
    def forward(ctx: Any, *parts: Tensor) -> NestedTensor:
        return NestedTensor([p.detach() for p in parts])

    @staticmethod
    def backward(ctx: Any, grad: Any) -> Any:
        return tuple(grad._components)


def as_nested_tensor(ts: Any, dtype: torch.dtype | None = None, device: Any = None,
                     layout: Any = None) -> NestedTensor:
    """A nested tensor of ``ts`` (a list of tensors, or a tensor split along dim 0) that keeps
    their autograd history."""
    _strided_only(layout, "as_nested_tensor")
    if isinstance(ts, NestedTensor):
        return ts
    return _AsNested.apply(*_components(ts, dtype, device, "as_nested_tensor"))


class _ToPadded(torch.autograd.Function):
    """``to_padded_tensor``: its gradient is each component's part of the padded gradient."""

    @staticmethod
    def forward(ctx: Any, nested: NestedTensor, padding: float, size: tuple[int, ...]
                ) -> Tensor:
        parts = nested._components
        ctx.shapes = [p.shape for p in parts]
        out = torch.full(size, padding, dtype=nested.dtype, device=nested.device)
        for i, part in enumerate(parts):
            out[(i, *(slice(0, n) for n in part.shape))] = part
        return out

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> Any:
        parts = [grad[(i, *(slice(0, n) for n in shape))].clone()
                 for i, shape in enumerate(ctx.shapes)]
        return NestedTensor(parts), None, None


def to_padded_tensor(input: NestedTensor, padding: float,
                     output_size: Sequence[int] | None = None) -> Tensor:
    """One dense tensor of the components, padded with ``padding`` to the largest size of each
    dim (or to ``output_size``, which must be at least that)."""
    if not isinstance(input, NestedTensor):
        raise RuntimeError("to_padded_tensor(): expected a nested tensor")
    parts = input._components
    needed = (len(parts), *(max(p.shape[d] for p in parts) for d in range(input.dim() - 1))) \
        if parts else (0,)
    size = tuple(needed if output_size is None else output_size)
    if len(size) != len(needed) or any(s < n for s, n in zip(size, needed)):
        raise RuntimeError(f"to_padded_tensor(): output_size {list(size)} must have "
                           f"{len(needed)} dims of at least {list(needed)}")
    return _ToPadded.apply(input, float(padding), size)


def narrow(tensor: Any, dim: int, start: Any, length: Any, layout: Any = torch.strided
           ) -> NestedTensor:
    """The nested tensor of ``tensor``'s dim-0 slices narrowed along ``dim`` (``start`` and
    ``length`` numbers, or one per slice as tensors)."""
    _strided_only(layout, "narrow")
    if dim == 0:
        raise RuntimeError("narrow(): dim 0 is the batch dim of a nested tensor")
    rows = tensor.unbind(0)
    starts = start.tolist() if isinstance(start, Tensor) else [start] * len(rows)
    lengths = length.tolist() if isinstance(length, Tensor) else [length] * len(rows)
    if isinstance(starts, int):
        starts = [starts] * len(rows)
    if isinstance(lengths, int):
        lengths = [lengths] * len(rows)
    return as_nested_tensor([r.narrow(dim - 1, s, n) for r, s, n in zip(rows, starts, lengths)])


def masked_select(tensor: Tensor, mask: Tensor) -> NestedTensor:
    """The nested tensor of each dim-0 slice's elements where ``mask`` is True."""
    mask = mask.expand(tensor.shape)
    return as_nested_tensor([t[m] for t, m in zip(tensor.unbind(0), mask.unbind(0))])


def nested_tensor_from_jagged(values: Tensor, offsets: Tensor | None = None,
                              lengths: Tensor | None = None, jagged_dim: int | None = None,
                              min_seqlen: int | None = None, max_seqlen: int | None = None
                              ) -> NestedTensor:
    """Not implemented: a jagged-layout nested tensor (PyTorch's ``torch.jagged``)."""
    raise NotImplementedError("torch.nested.nested_tensor_from_jagged(): the jagged layout is "
                              "not supported; Plait's nested tensors have the strided layout "
                              "(torch.nested.nested_tensor / as_nested_tensor)")
