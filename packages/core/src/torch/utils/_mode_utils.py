"""``torch.utils._mode_utils``: ``no_dispatch`` and ``all_same_mode``, as in PyTorch.

``no_dispatch()`` runs its block with this thread's dispatch modes off (PyTorch's
``torch._C._DisableTorchDispatch``): libraries use it to compute on real tensors from inside a
mode. Unlike PyTorch's, it does not also skip the ``__torch_dispatch__`` of subclass tensors
(Plait's dispatcher has no guard for that); code that calls it passes plain tensors.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from torch.utils._python_dispatch import _disable_current_modes

__all__ = ["all_same_mode", "no_dispatch"]


def all_same_mode(modes: Sequence[Any]) -> bool:
    """Whether every entry of ``modes`` is the first one."""
    return all(mode is modes[0] for mode in modes)


@contextmanager
def no_dispatch() -> Iterator[None]:
    """This thread's dispatch modes off for the block."""
    with _disable_current_modes():
        yield
