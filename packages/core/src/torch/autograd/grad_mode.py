"""``torch.autograd.grad_mode``: the grad modes, defined in core (:mod:`torch._core.grad_mode`)
because the op library below autograd uses them too; these are the same objects."""

from __future__ import annotations

from .._core.grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled

__all__ = ["enable_grad", "inference_mode", "no_grad", "set_grad_enabled"]
