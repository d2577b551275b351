"""Launch geometry shared by the rendered kernels of both GPU backends (plait-backend-cuda carries
a copy of this module in its ``_render`` package, as it does the renderers)."""

from __future__ import annotations

from collections.abc import Sequence


def merge(sizes: Sequence[int], strides: Sequence[Sequence[int]]
          ) -> tuple[list[int], list[list[int]]]:
    """``sizes`` without size-1 dims, neighbours merged where every stride list steps through
    them as one (the order of the elements is unchanged)."""
    out_sizes: list[int] = []
    out_strides: list[list[int]] = [[] for _ in strides]
    for k, size in enumerate(sizes):
        if size == 1:
            continue
        if out_sizes and all(m[-1] == st[k] * size for m, st in zip(out_strides, strides)):
            out_sizes[-1] *= size
            for m, st in zip(out_strides, strides):
                m[-1] = st[k]
        else:
            out_sizes.append(size)
            for m, st in zip(out_strides, strides):
                m.append(st[k])
    return out_sizes, out_strides


def by_output_order(sizes: Sequence[int], strides: Sequence[Sequence[int]]
                    ) -> tuple[list[int], list[list[int]]]:
    """``sizes`` and ``strides`` with the dims reordered by the first stride list (the
    output's), largest stride first: an elementwise op computes each element on its own, so
    any order of the dims gives the same result, and in the output's memory order a
    transposed but dense output (and operands laid out like it) merges into one contiguous
    dimension (:func:`merge`), which takes the contiguous kernels."""
    order = sorted(range(len(sizes)), key=lambda k: -abs(strides[0][k]))
    return [sizes[k] for k in order], [[st[k] for k in order] for st in strides]
