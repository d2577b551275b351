"""Layouts and memory formats: named singletons that print like PyTorch's."""

from __future__ import annotations


class _Named:
    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return "torch." + self._name

    def __reduce__(self) -> str:
        return self._name


class layout(_Named):
    """A tensor layout (only ``torch.strided`` is backed by kernels)."""

    __slots__ = ()


class memory_format(_Named):
    """A memory format requested from ``to``/``contiguous``/factories."""

    __slots__ = ()


for _cls in (layout, memory_format, _Named):
    _cls.__module__ = "torch"

strided = layout("strided")
sparse_coo = layout("sparse_coo")
contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
