"""The cuda reductions and scans: the shared :mod:`._render.render_launch_reductions` driven by
this backend's launch hooks, and how this backend spreads a reduction's rows over a GPU
(:func:`plan_rows`: a block of threads per output for long rows, one thread per output for
short ones; when a few long rows would leave most multiprocessors idle, each row is cut into
chunks reduced by a block each, which a second launch reduces)."""

from __future__ import annotations

from collections.abc import Callable

from ._render import render_launch_reductions, render_reduce

GROUP_ROWS = 128  # rows at least this long get a block
MAX_GROUP = 256
BLOCKS_WANTED = 1024  # blocks a split reduction aims for (enough for every multiprocessor)
MIN_CHUNK = 4096  # elements a block reduces at least when a row is split


def _group_size(rows: int, length: int) -> int:
    """Threads per output: 0 (one thread loops alone) for short rows, else a power of two no
    larger than the row or :data:`MAX_GROUP`."""
    if length < GROUP_ROWS and not (length >= 16 and rows < 64):
        return 0
    group = 1
    while group * 2 <= min(MAX_GROUP, length):
        group *= 2
    return group


def plan_rows(op: str, index: int, n_out: int, r: int, ist_a: list[int]
              ) -> tuple[int, int, int]:
    """``(block size, chunks per row, accumulator lanes)`` for ``n_out`` rows of ``r``
    elements on ``cuda:<index>``: chunks only when few long rows would leave blocks idle
    (argmax/argmin keep one chunk: their index)."""
    group = _group_size(n_out, r)
    if not group or op in render_reduce.ARG_BETTER or n_out >= BLOCKS_WANTED:
        return group, 1, 1
    return group, max(1, min(BLOCKS_WANTED // n_out, r // MIN_CHUNK)), 1


def kernels() -> dict[str, Callable[..., None]]:
    """Primitive name -> kernel for the reductions and scans."""
    from .launch_backend import BACKEND

    return render_launch_reductions.kernels(BACKEND)
