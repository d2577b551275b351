"""``torch._custom_ops``: PyTorch's older spelling of the custom-operator API, kept for the
packages that still import it (torchvision's fake implementations call ``get_ctx``). Each name
is :mod:`torch.library`'s."""

from __future__ import annotations

from typing import Any

from .library import custom_op, get_ctx, register_fake

__all__ = ["custom_op", "get_ctx", "impl_abstract"]


def impl_abstract(qualname: str, *, func: Any = None) -> Any:
    """The fake (abstract) implementation of ``qualname``: :func:`torch.library.register_fake`."""
    return register_fake(qualname, func)
