"""The numpy oracle the convolution tests share: the image values under each kernel window."""

from __future__ import annotations

import numpy as np


def windows(img: np.ndarray, grid, kernel, stride, padding, dilation) -> np.ndarray:
    """(N, C, *grid, *kernel): the image value each kernel offset covers at each grid position
    (zero in the padding)."""
    nd = len(grid)
    pads = [(0, 0), (0, 0)]
    for d in range(nd):
        need = (grid[d] - 1) * stride[d] + (kernel[d] - 1) * dilation[d] + 1
        pads.append((padding[d], max(0, need - img.shape[2 + d] - padding[d])))
    padded = np.pad(img, pads)
    st = padded.strides
    return np.lib.stride_tricks.as_strided(
        padded, img.shape[:2] + tuple(grid) + tuple(kernel),
        st[:2] + tuple(st[2 + d] * stride[d] for d in range(nd))
        + tuple(st[2 + d] * dilation[d] for d in range(nd)))
