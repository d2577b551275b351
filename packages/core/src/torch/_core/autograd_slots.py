"""What the layers below autograd ask of it, installed by :mod:`torch.autograd` when it loads.

The op library and the fused composites never import autograd (docs/architecture.md,
"Layers"); where an op must take part in the graph itself (a result that is not
differentiable, an in-place write that bypasses the dispatcher), it calls the slot here, and
autograd puts its function in the slot at import (:func:`install`), as it puts its recorder into
the dispatcher. Until then each slot serves calls on tensors that require no grad (there is no
graph to touch) and raises for a tensor that does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .tensor import Tensor


def _not_installed(what: str) -> RuntimeError:
    return RuntimeError(f"torch core: {what} needs torch.autograd, which has not installed "
                        "its functions yet")


def not_differentiable(result: Any, error: BaseException, *inputs: Any) -> Any:
    """Mark the floating outputs of a non-differentiable op computed from ``inputs`` so that a
    backward through them raises ``error`` (when an input requires grad in grad mode)."""
    if any(isinstance(t, Tensor) and t._requires_grad for t in inputs):
        raise _not_installed("marking a non-differentiable result")
    return result


def inplace_begin(dst: Tensor, src: Tensor | None) -> bool:
    """Before an in-place write of ``src`` (None: a value) into ``dst``: whether autograd
    records it (then :func:`inplace_end` follows the write), after its checks."""
    if dst._requires_grad or (src is not None and src._requires_grad) or (
            dst._base is not None and dst._base._requires_grad):
        raise _not_installed("an in-place write on a tensor that requires grad")
    return False


def inplace_end(dst: Tensor, src: Tensor | None) -> None:
    """After a recorded in-place write: give ``dst`` (and its base) the write's history."""
    raise _not_installed("an in-place write on a tensor that requires grad")


_SLOTS = frozenset(("not_differentiable", "inplace_begin", "inplace_end"))


def install(**functions: Callable[..., Any]) -> None:
    """Put autograd's functions into their slots: ``install(not_differentiable=fn)``."""
    unknown = sorted(set(functions) - _SLOTS)
    if unknown:
        raise KeyError(f"no autograd slot named {', '.join(unknown)}")
    globals().update(functions)
