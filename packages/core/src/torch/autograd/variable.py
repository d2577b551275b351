"""``torch.autograd.Variable``: the pre-1.0 wrapper, now a name for tensors.

``Variable(t, requires_grad=...)`` returns a tensor sharing ``t``'s data (a detached alias with
the given ``requires_grad``), and every tensor is an instance of ``Variable``, as in PyTorch.
"""

from __future__ import annotations

from typing import Any

from .._core.tensor import Tensor

__all__ = ["Variable"]


class _VariableMeta(type):
    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(data, requires_grad=False, volatile=False)``: a tensor aliasing ``data``."""

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = False,
                volatile: bool = False) -> Any:  # type: ignore[misc]
        if data is None:
            from .._aten.factories import empty

            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        return data.detach().requires_grad_(requires_grad)
