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
# Compressed sparse and nested layouts: named, as programs compare a tensor's layout with them;
# no Plait tensor has one yet (creating one raises).
sparse_csr = layout("sparse_csr")
sparse_csc = layout("sparse_csc")
sparse_bsr = layout("sparse_bsr")
sparse_bsc = layout("sparse_bsc")
jagged = layout("jagged")
_mkldnn = layout("_mkldnn")
contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")

# memory format -> (the rank it needs, its dims from outermost to innermost): channels last
# keeps the channels (dim 1) innermost, (N, C, H, W) laid out as (N, H, W, C).
CHANNELS_LAST_ORDER = {channels_last: (4, (0, 2, 3, 1)),
                       channels_last_3d: (5, (0, 2, 3, 4, 1))}


def format_strides(shape: tuple[int, ...], fmt: memory_format | None) -> tuple[int, ...] | None:
    """The strides ``fmt`` asks for a tensor of ``shape``: None for row-major (no format,
    ``contiguous_format`` or ``preserve_format``), the channels-last strides otherwise."""
    if fmt is None or fmt is contiguous_format or fmt is preserve_format:
        return None
    if fmt not in CHANNELS_LAST_ORDER:
        raise RuntimeError(f"unsupported memory format {fmt}")
    rank, order = CHANNELS_LAST_ORDER[fmt]
    if len(shape) != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {fmt._name} format")
    strides = [0] * rank
    step = 1
    for d in reversed(order):  # sizes as they are, 0 included, as PyTorch computes them
        strides[d] = step
        step *= shape[d]
    return tuple(strides)


def is_contiguous_as(shape: tuple[int, ...], strides: tuple[int, ...],
                     fmt: memory_format | None) -> bool:
    """Whether ``strides`` lay ``shape`` out densely in ``fmt``'s order (dims of size 1 may
    have any stride; an empty tensor is contiguous in every format of its rank)."""
    if fmt is None or fmt is contiguous_format or fmt is preserve_format:
        order: tuple[int, ...] = tuple(range(len(shape)))
    elif fmt in CHANNELS_LAST_ORDER:
        rank, order = CHANNELS_LAST_ORDER[fmt]
        if len(shape) != rank:
            return False
    else:
        raise RuntimeError(f"unsupported memory format {fmt}")
    if 0 in shape:
        return True
    expected = 1
    for d in reversed(order):
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True
