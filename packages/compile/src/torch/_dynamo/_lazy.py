"""Deferred tensors: what a tensor operation returns while a compiled function is captured.

A :class:`LazyTensor` is a fake tensor (sizes, strides, dtype, device, ``requires_grad``, no
data) that stands for a node of the graph being recorded. When the graph is flushed, every
lazy tensor still referenced *becomes* the real tensor the compiled graph produced: its slots
are overwritten with the real tensor's and its class is set to ``torch.Tensor``, so every
reference the user's program kept (a local, a list element, ``self.cache``) now holds real
data, with no wrapper left behind. The conversions that need data (``bool``, ``item``,
``tolist``, ``repr``...) go back through the capture mode, which flushes first.
"""

from __future__ import annotations

from typing import Any

import torch.overrides  # noqa: F401  (turns the __torch_function__ protocol on first)
from torch._core.dispatch import _tensors
from torch._core.tensor import Tensor
from torch._subclasses.fake_tensor import FakeTensor

__all__ = ["LazyTensor", "become"]

# Tensor's slots that a realized lazy tensor copies from the real one (all but the two
# Python-object slots, which it keeps: its own __dict__ is cleared and its weak references
# must keep pointing at it; and a leaf's gradient accumulator, which refers to its own leaf)
_SLOTS = tuple(name for name in Tensor.__slots__
               if name not in ("__dict__", "__weakref__", "_grad_accumulator"))

# data-reading methods FakeTensor answers with an error; a lazy tensor sends them through the
# protocol (Tensor's entries) so the capture mode flushes the graph and answers with real data
_DATA_METHODS = ("item", "tolist", "numpy", "__bool__", "__float__", "__int__", "__index__")


class LazyTensor(FakeTensor):
    """A tensor of the graph being captured; ``node`` is its value's place in the recording
    (see :mod:`torch._dynamo._capture`)."""

    __slots__ = ()
    capture: Any  # the _Capture that records it (in __dict__, cleared when it is realized)
    ref: Any  # its value in the recording

    @classmethod
    def __torch_dispatch__(cls, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        # An aten operator reached on a lazy tensor. Inside a recorded call's metadata run it
        # is part of that run (fake kernels); otherwise code below the torch level called it
        # (an operator looked up at import, a private helper): it is recorded itself.
        capture = None
        tensors = list(_tensors(args, kwargs or {}))
        for t in tensors:
            if isinstance(t, LazyTensor):
                capture = t.capture
                break
        if capture is None or capture.recording.in_fake_run:
            return FakeTensor.__torch_dispatch__.__func__(cls, func, types, args, kwargs)
        if any(t.requires_grad for t in tensors):
            # below an autograd kernel (F.embedding calls its operator directly): recorded,
            # the op would run under the kernel's no_grad and its result would lose its
            # gradient. So the graph runs first and the op runs now, on real tensors, under
            # the autograd kernel that called it.
            from torch._core.dispatch import redispatch_below_autograd
            from torch._dynamo._capture import _suspended

            capture.flush(f"{func} reached below autograd on a tensor that requires grad")
            with _suspended():
                return redispatch_below_autograd(func, *args, **(kwargs or {}))
        return capture.defer(func, None, args, kwargs or {})

    def __repr__(self) -> str:
        self.capture.flush("repr() of a tensor computed in the graph")
        return repr(self)  # now a plain Tensor

    __str__ = __repr__


for _name in _DATA_METHODS:
    setattr(LazyTensor, _name, getattr(Tensor, _name))


def become(lazy: LazyTensor, real: Tensor, realized: dict[int, Tensor]) -> None:
    """Turn ``lazy`` into ``real`` in place: same slots, class ``torch.Tensor``.

    :param realized: id(real) -> the lazy object that became it, so that a view's ``_base``
        points at the object the program holds rather than the graph's own result.
    """
    lazy.__dict__.clear()
    lazy.__dict__.update(real.__dict__)
    for name in _SLOTS:
        try:
            value = getattr(real, name)
        except AttributeError:  # a slot the real tensor leaves unset (made on demand)
            if hasattr(lazy, name):
                object.__delattr__(lazy, name)
            continue
        object.__setattr__(lazy, name, value)
    base = real._base
    if base is not None and id(base) in realized:
        lazy._base = realized[id(base)]
    lazy.__class__ = Tensor
    realized[id(real)] = lazy
